"""Alembic environment: runs against the engine `storage.migrations_runner` hands over.

On PostgreSQL the whole upgrade is one transaction that first takes an advisory lock, so
processes starting together on a database to migrate take turns: the first migrates, the
others then find it at head and do nothing. (A transaction-level lock: it also holds
behind a PgBouncer in transaction mode.) SQLite's write lock serialises them already.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import Engine
from sqlmodel import SQLModel

import storage.models  # noqa: F401  (registers every table on SQLModel.metadata)
from storage.schema import described_by_models

engine: Engine = context.config.attributes["engine"]


MIGRATION_LOCK = 0x4C4F5245  # "LORE"

with engine.begin() as connection:
    if connection.dialect.name == "postgresql":
        connection.exec_driver_sql(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK})")
    context.configure(
        connection=connection,
        target_metadata=SQLModel.metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
        include_object=described_by_models,
    )
    with context.begin_transaction():
        context.run_migrations()
