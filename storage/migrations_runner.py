"""Applies Alembic migrations programmatically (at start, and for `lore db upgrade`).

Every process checks the schema at start. A database already at `HEAD` is checked with one
query, without loading Alembic (about 0.2 s of every `lore` command's start); Alembic runs
only when there is something to apply.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Engine, inspect, text

if TYPE_CHECKING:
    from alembic.config import Config

MIGRATIONS = Path(__file__).parent / "migrations"
HEAD = "0025"
"""The newest migration's revision (`tests/storage/test_migrations.py` keeps it the scripts'
head: a migration added without it here would never be applied to an existing database)."""
VERSION_TABLE = "alembic_version"


def alembic_config(engine: Engine) -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["engine"] = engine
    return config


def upgrade_to_head(engine: Engine) -> None:
    """Apply every migration not yet applied. Safe to call at every start."""
    if current_revision(engine) == HEAD:
        return
    from alembic import command

    command.upgrade(alembic_config(engine), "head")


def current_revision(engine: Engine) -> str | None:
    """The revision the database is at; None for one never migrated."""
    with engine.connect() as connection:
        if not inspect(connection).has_table(VERSION_TABLE):
            return None
        return connection.execute(text(f"select version_num from {VERSION_TABLE}")).scalar()  # noqa: S608


def head_revision() -> str | None:
    """The newest revision among the migration scripts, as Alembic reads them."""
    from alembic.script import ScriptDirectory

    return ScriptDirectory(str(MIGRATIONS)).get_current_head()
