"""Migrations are the only way the schema changes: they must produce exactly the models."""

from __future__ import annotations

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine
from sqlmodel import SQLModel

from storage.db import Database
from storage.migrations_runner import (
    HEAD,
    MIGRATIONS,
    alembic_config,
    current_revision,
    head_revision,
    upgrade_to_head,
)
from storage.schema import described_by_models


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


def test_the_start_up_check_knows_the_newest_migration() -> None:
    # Start-up compares the database with HEAD without loading Alembic's scripts: a new
    # migration must move HEAD too, or existing databases would never get it.
    assert head_revision() == HEAD


def test_a_database_one_migration_behind_is_brought_up_to_date(database_url: str) -> None:
    previous = ScriptDirectory(str(MIGRATIONS)).get_revision(HEAD).down_revision
    assert isinstance(previous, str)
    engine = create_engine(database_url)
    try:
        assert current_revision(engine) is None
        command.upgrade(alembic_config(engine), previous)
        assert current_revision(engine) == previous
        upgrade_to_head(engine)
        assert current_revision(engine) == HEAD
    finally:
        engine.dispose()
