"""The SQL engine: SQLite by default, PostgreSQL when `DATABASE_URL` says so.

`open_database()` builds the engine, applies migrations and returns a `Database`, the one
object repositories take. Sessions are short and synchronous; async callers run whole units
of work in a thread (`asyncio.to_thread`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, event, text
from sqlmodel import Session, create_engine

from storage.migrations_runner import upgrade_to_head


@dataclass(frozen=True)
class Database:
    """An engine plus the dialect facts repositories need."""

    engine: Engine

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A session that commits on success and rolls back on error."""
        with Session(self.engine, expire_on_commit=False) as session:
            try:
                yield session
                session.commit()
            except BaseException:
                session.rollback()
                raise

    def ping(self) -> str:
        """Run a trivial query; return the server's version string."""
        with self.engine.connect() as connection:
            if self.dialect == "sqlite":
                return "SQLite " + str(connection.execute(text("select sqlite_version()")).scalar())
            return str(connection.execute(text("select version()")).scalar()).split(",")[0]

    def dispose(self) -> None:
        self.engine.dispose()


def create_sql_engine(url: str) -> Engine:
    """An engine tuned for Lore: foreign keys, WAL and a busy timeout on SQLite."""
    if url.startswith("sqlite"):
        _ensure_sqlite_folder(url)
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})
        event.listen(engine, "connect", _sqlite_pragmas)
        event.listen(engine, "begin", _sqlite_begin)
        return engine
    return create_engine(url, pool_pre_ping=True, pool_size=5, max_overflow=10)


def open_database(url: str, *, migrate: bool = True) -> Database:
    """Connect, and bring the schema up to date unless `migrate` is False."""
    engine = create_sql_engine(url)
    if migrate:
        upgrade_to_head(engine)
    return Database(engine)


def _ensure_sqlite_folder(url: str) -> None:
    path = url.split(":///", 1)[-1]
    if path and path != ":memory:" and not path.startswith("file:"):
        Path(path).parent.mkdir(parents=True, exist_ok=True)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    # pysqlite's own transaction handling breaks SAVEPOINTs; SQLAlchemy emits BEGIN instead.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA secure_delete=ON")  # what is deleted is zeroed, not left in free space
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def _sqlite_begin(connection: Any) -> None:
    # IMMEDIATE takes the write lock up front (waiting up to the busy timeout). A deferred
    # transaction that reads and then writes fails at once with "database is locked" when
    # another connection committed in between (SQLITE_BUSY_SNAPSHOT), and the busy timeout
    # cannot help it; concurrent ingests hit exactly that.
    connection.exec_driver_sql("BEGIN IMMEDIATE")
