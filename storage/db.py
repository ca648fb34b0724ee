"""The SQL engine: SQLite by default, PostgreSQL when `DATABASE_URL` says so.

`open_database()` builds the engine, applies migrations and returns a `Database`, the one
object repositories take. Sessions are short and synchronous; async callers run whole units
of work in a thread (`asyncio.to_thread`).
"""

from __future__ import annotations

import secrets
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from sqlalchemy import Engine, event, make_url, text
from sqlmodel import Session, create_engine

from storage.migrations_runner import upgrade_to_head


class Closing(Protocol):
    """A part that works through the database from a thread of its own (`LeaseKeeper`)."""

    def close(self) -> None: ...


@dataclass(frozen=True)
class Database:
    """An engine plus the dialect facts repositories need, and the parts that write through it
    from threads of their own, stopped when it is disposed (`close_with`)."""

    engine: Engine
    _parts: weakref.WeakSet[Closing] = field(default_factory=weakref.WeakSet, compare=False, repr=False)

    def close_with(self, part: Closing) -> None:
        """`part` is closed (its thread stopped and joined) when this database is disposed,
        before its engine: whoever forgets to close it, it never outlives the database."""
        self._parts.add(part)

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
        for part in list(self._parts):
            part.close()
        self.engine.dispose()


@dataclass(frozen=True)
class Pool:
    """How many PostgreSQL connections a process keeps (`size`) and may add under load
    (`overflow`): every process of a deployment counts against the server's
    `max_connections` (100 by default), so many replicas and workers take small pools, or
    share a PgBouncer. `prepared_statements` False for a PgBouncer in transaction mode
    older than 1.21 (which cannot carry them from one transaction to the next)."""

    size: int = 5
    overflow: int = 10
    timeout_seconds: float = 30.0
    prepared_statements: bool = True
    idle_in_transaction_seconds: float = 60.0
    """The server ends a session left inside a transaction this long (PostgreSQL's
    `idle_in_transaction_session_timeout`): a process paused or stalled mid-transaction
    would otherwise hold its row locks, and every other process waiting on them, until it
    resumes. Lore's transactions last milliseconds."""


def create_sql_engine(url: str, pool: Pool | None = None) -> Engine:
    """An engine tuned for Lore: foreign keys, WAL and a busy timeout on SQLite; on
    PostgreSQL, a pool of `pool`'s size."""
    if url.startswith("sqlite"):
        _ensure_sqlite_folder(url)
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})
        event.listen(engine, "connect", _sqlite_pragmas)
        event.listen(engine, "begin", _sqlite_begin)
        return engine
    pool = pool or Pool()
    engine = create_engine(
        url,
        pool_pre_ping=True,
        pool_size=pool.size,
        max_overflow=pool.overflow,
        pool_timeout=pool.timeout_seconds,
        connect_args={} if pool.prepared_statements else {"prepare_threshold": None},
    )
    idle = max(1, round(pool.idle_in_transaction_seconds * 1000))
    event.listen(engine, "connect", lambda connection, _record: _postgres_session(connection, idle))
    return engine


def open_database(url: str, *, migrate: bool = True, pool: Pool | None = None) -> Database:
    """Connect, and bring the schema up to date unless `migrate` is False."""
    engine = create_sql_engine(url, pool)
    if migrate:
        upgrade_to_head(engine)
    return Database(engine)


@contextmanager
def scratch_schema(url: str) -> Iterator[str]:
    """A throw-away schema in the PostgreSQL database at `url`, for the duration: yields a
    URL whose connections work in it (their `search_path`), and drops it with everything in
    it at the end. The role needs CREATE on the database."""
    name = f"lore_scratch_{secrets.token_hex(6)}"
    engine = create_engine(url)
    try:
        with engine.begin() as connection:
            connection.exec_driver_sql(f'CREATE SCHEMA "{name}"')
        parsed = make_url(url)
        yield parsed.update_query_dict({"options": f"-csearch_path={name}"}).render_as_string(
            hide_password=False
        )
    finally:
        with engine.begin() as connection:
            connection.exec_driver_sql(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')
        engine.dispose()


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


def _postgres_session(dbapi_connection: Any, idle_in_transaction_ms: int) -> None:
    # A SET rather than a startup `options`, which PgBouncer refuses by default. Behind a
    # PgBouncer in transaction mode it stays on the server connection, for the next Lore
    # client of it, which sets the same.
    with dbapi_connection.cursor() as cursor:
        cursor.execute(f"SET idle_in_transaction_session_timeout = {int(idle_in_transaction_ms)}")
    dbapi_connection.commit()


def _sqlite_begin(connection: Any) -> None:
    # IMMEDIATE takes the write lock up front (waiting up to the busy timeout). A deferred
    # transaction that reads and then writes fails at once with "database is locked" when
    # another connection committed in between (SQLITE_BUSY_SNAPSHOT), and the busy timeout
    # cannot help it; concurrent ingests hit exactly that.
    connection.exec_driver_sql("BEGIN IMMEDIATE")
