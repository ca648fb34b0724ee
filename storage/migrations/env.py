"""Alembic environment: runs against the engine `storage.migrations_runner` hands over."""

from __future__ import annotations

from alembic import context
from sqlalchemy import Engine
from sqlmodel import SQLModel

import storage.models  # noqa: F401  (registers every table on SQLModel.metadata)
from storage.schema import described_by_models

engine: Engine = context.config.attributes["engine"]


with engine.begin() as connection:
    context.configure(
        connection=connection,
        target_metadata=SQLModel.metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
        include_object=described_by_models,
    )
    with context.begin_transaction():
        context.run_migrations()
