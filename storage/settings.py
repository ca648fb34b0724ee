"""Settings the storage layer reads: where data lives and which servers hold it.

Each layer declares the settings it owns; `bot.app.settings.Settings` combines them into the
one object the entry point reads from the environment and passes down. Lower layers type
their parameters with their own class, so `storage` never learns about Slack or LLMs.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

if TYPE_CHECKING:
    from storage.db import Pool

SQLITE_FILE = "lore.db"
CHROMA_DIR = "chroma"


class StorageSettings(BaseSettings):
    """Where Lore keeps its SQL rows and its vectors."""

    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore", frozen=True)

    lore_home: Path = Field(
        default=Path(".lore"),
        description="Folder for the embedded database and Chroma data.",
    )
    database_url: str | None = Field(
        default=None,
        description="SQLAlchemy URL; unset means SQLite under LORE_HOME. "
        "PostgreSQL: postgresql+psycopg://user:password@host/db",
    )
    chroma_host: str | None = Field(
        default=None, description="Chroma server host; unset means embedded Chroma."
    )
    chroma_port: int = Field(default=8000, ge=1, le=65535, description="Chroma server port.")
    lore_db_pool_size: int = Field(
        default=5,
        ge=1,
        le=100,
        description="PostgreSQL connections each process keeps open. Every `lore run` replica "
        "and `lore worker` counts against the server's max_connections (100 by default).",
    )
    lore_db_max_overflow: int = Field(
        default=10, ge=0, le=100, description="PostgreSQL connections a process may add under load."
    )
    lore_db_idle_in_transaction_seconds: float = Field(
        default=60.0,
        gt=0,
        description="PostgreSQL ends a Lore session left inside a transaction this long (a "
        "process paused mid-write), so its row locks do not stall every other process.",
    )
    lore_db_prepared_statements: bool = Field(
        default=True,
        description="false behind a PgBouncer in transaction mode older than 1.21, which cannot "
        "keep prepared statements.",
    )
    lore_secret_key: SecretStr | None = Field(
        default=None,
        description="Fernet key that encrypts stored credentials (connectors); unset: none are stored.",
    )

    @field_validator("database_url")
    @classmethod
    def _known_database(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        value = value.strip()
        if value.startswith("postgres://") or value.startswith("postgresql://"):
            # Heroku-style URLs name no driver; psycopg 3 is the one we ship.
            value = "postgresql+psycopg://" + value.split("://", 1)[1]
        if not value.startswith(("sqlite://", "postgresql+psycopg://")):
            raise ValueError("must start with sqlite:// or postgresql+psycopg://")
        return value

    @field_validator("lore_secret_key", mode="before")
    @classmethod
    def _fernet_key(cls, value: object) -> object:
        from storage.secrets import MAKE_KEY, valid_key

        if isinstance(value, str) and not value.strip():
            return None
        if isinstance(value, str) and not valid_key(value.strip()):
            raise ValueError(f"must be a Fernet key (32 bytes, URL-safe base64); make one with {MAKE_KEY}")
        return value.strip() if isinstance(value, str) else value

    @field_validator("chroma_host")
    @classmethod
    def _blank_is_unset(cls, value: str | None) -> str | None:
        return value.strip() or None if value is not None else None

    @property
    def effective_database_url(self) -> str:
        """The database URL in force: the configured one, else SQLite under LORE_HOME."""
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.lore_home / SQLITE_FILE).resolve()}"

    @property
    def pool(self) -> Pool:
        """The SQL connection pool these settings ask for (PostgreSQL only)."""
        from storage.db import Pool

        return Pool(
            size=self.lore_db_pool_size,
            overflow=self.lore_db_max_overflow,
            prepared_statements=self.lore_db_prepared_statements,
            idle_in_transaction_seconds=self.lore_db_idle_in_transaction_seconds,
        )

    @property
    def chroma_path(self) -> Path:
        """Folder of the embedded Chroma store."""
        return self.lore_home / CHROMA_DIR
