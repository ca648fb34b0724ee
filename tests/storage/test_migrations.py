"""Migrations are the only way the schema changes: they must produce exactly the models."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlmodel import SQLModel

from storage.db import Database
from storage.keyword import described_by_models
from storage.migrations_runner import current_revision, head_revision, upgrade_to_head


def test_migrations_match_the_models(database: Database) -> None:
    with database.engine.connect() as connection:
        context = MigrationContext.configure(
            connection, opts={"compare_type": True, "include_object": described_by_models}
        )
        differences = compare_metadata(context, SQLModel.metadata)
    assert differences == []


def test_upgrade_is_idempotent(database: Database) -> None:
    assert current_revision(database.engine) == head_revision()
    upgrade_to_head(database.engine)
    assert current_revision(database.engine) == head_revision()
