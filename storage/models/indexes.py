"""Knowledge indexes, the conversations that search them, and the sources attached to
them (a site, or a connector's connection with its sealed credentials)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Column, DateTime, Index, String, Text, UniqueConstraint, text
from sqlmodel import Field, SQLModel

from storage.values import Scope, utcnow

OWNED_ONCE = text("scope IN ('channel', 'personal')")
"""A channel has one index of its own and a user one personal index, whatever its name."""


class KnowledgeIndex(SQLModel, table=True):
    """A searchable set of documents. `owner_key` makes names unique per scope owner:
    `user:<id>` for personal indexes, `channel:<id>` for channel ones, `tenant` for shared."""

    __tablename__ = "knowledge_index"
    __table_args__ = (
        UniqueConstraint("tenant_id", "owner_key", "name"),
        Index(
            "ux_knowledge_index_owner",
            "tenant_id",
            "owner_key",
            unique=True,
            sqlite_where=OWNED_ONCE,
            postgresql_where=OWNED_ONCE,
        ),
    )

    id: int | None = Field(default=None, primary_key=True)
    tenant_id: str = Field(foreign_key="tenant.id", index=True, max_length=64)
    name: str = Field(max_length=120)
    scope: Scope = Field(sa_type=String(16))
    owner_key: str = Field(max_length=80)
    owner_user_id: int | None = Field(default=None, foreign_key="user.id")
    channel_id: int | None = Field(default=None, foreign_key="channel.id")
    embedding_model: str = Field(max_length=120)
    embedding_dimension: int
    content_version: int = Field(default=0, description="Bumped on every content change.")
    documents_only: bool = Field(
        default=False, description="Answers drawing on it never use the model's general knowledge."
    )
    created_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))


class EnabledIndex(SQLModel, table=True):
    """An index a conversation searches; the lowest position is the default target."""

    __tablename__ = "enabled_index"
    __table_args__ = (UniqueConstraint("conversation_id", "index_id"),)

    id: int | None = Field(default=None, primary_key=True)
    conversation_id: int = Field(foreign_key="conversation.id", index=True)
    index_id: int = Field(foreign_key="knowledge_index.id", index=True)
    position: int = 0


class DocSource(SQLModel, table=True):
    """A stored connection to somewhere documents come from (a site, Confluence …).

    A site's source belongs to its one attachment; a connector's (Confluence) is a connection
    of the tenant, attached to any number of indexes, with its credentials sealed by
    `storage.secrets` (`credentials_ref`) and only a masked hint of them kept in clear."""

    __tablename__ = "doc_source"

    id: int | None = Field(default=None, primary_key=True)
    tenant_id: str = Field(foreign_key="tenant.id", index=True, max_length=64)
    kind: str = Field(max_length=32)
    name: str = Field(max_length=255)
    base_url: str | None = Field(default=None, max_length=2048, description="A connector's API root.")
    credentials_ref: str | None = Field(
        default=None, sa_column=Column(Text, nullable=True), description="Encrypted, never shown."
    )
    credentials_hint: str | None = Field(
        default=None, max_length=255, description="Masked: who connected, the token's last characters."
    )
    config: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    created_by: int | None = Field(default=None, foreign_key="user.id")
    created_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))
    groups_synced_at: datetime | None = Field(
        default=None, sa_type=DateTime(timezone=True), description="The last group sync that succeeded."
    )
    groups_error: str | None = Field(
        default=None, sa_column=Column(Text, nullable=True), description="Why the last group sync failed."
    )
    groups_claimed_at: datetime | None = Field(
        default=None, sa_type=DateTime(timezone=True), description="A process is syncing its groups."
    )
    groups_failed_at: datetime | None = Field(
        default=None, sa_type=DateTime(timezone=True), description="The last group sync failed then."
    )


class DocSourceConfig(SQLModel, table=True):
    """A source attached to an index: which folders/URLs to pull, and how often."""

    __tablename__ = "doc_source_config"
    __table_args__ = (UniqueConstraint("index_id", "source_id"),)

    id: int | None = Field(default=None, primary_key=True)
    index_id: int = Field(foreign_key="knowledge_index.id", index=True)
    source_id: int = Field(foreign_key="doc_source.id", index=True)
    folders: list[str] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    options: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    schedule: str = Field(default="daily", max_length=64)
    last_refresh_at: datetime | None = Field(default=None, sa_type=DateTime(timezone=True))
    sync_cursor: datetime | None = Field(
        default=None,
        sa_type=DateTime(timezone=True),
        description="A connector's last successful sync began here; the next asks for changes since.",
    )
    last_full_sync_at: datetime | None = Field(
        default=None,
        sa_type=DateTime(timezone=True),
        description="A connector's last complete listing (the one that prunes).",
    )
    access_synced_at: datetime | None = Field(
        default=None, sa_type=DateTime(timezone=True), description="The last permission sync that succeeded."
    )
    access_error: str | None = Field(
        default=None,
        sa_column=Column(Text, nullable=True),
        description="Why the last permission sync failed.",
    )
    access_claimed_at: datetime | None = Field(
        default=None, sa_type=DateTime(timezone=True), description="A process is syncing its permissions."
    )
    access_failed_at: datetime | None = Field(
        default=None, sa_type=DateTime(timezone=True), description="The last permission sync failed then."
    )
    created_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))
