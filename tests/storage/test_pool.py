"""The SQL connection pool is sized from the settings, and a PostgreSQL session left inside a
transaction is ended by the server (a paused process cannot hold its locks for ever)."""

from __future__ import annotations

import time

import pytest
from sqlalchemy.exc import DBAPIError

from bot.app.settings import Settings
from storage.db import open_database


@pytest.mark.postgres
def test_the_pool_and_the_idle_transaction_limit_come_from_the_settings(postgres_admin_url: str) -> None:
    from tests.support.postgres import create_database, drop_database

    url = create_database(postgres_admin_url)
    settings = Settings(
        _env_file=None,
        database_url=url,
        lore_db_pool_size=2,
        lore_db_max_overflow=1,
        lore_db_idle_in_transaction_seconds=1,
        lore_db_prepared_statements=False,
    )
    db = open_database(url, pool=settings.pool)
    try:
        assert db.engine.pool.size() == 2 and db.engine.pool._max_overflow == 1  # type: ignore[attr-defined]
        with db.engine.connect() as connection:
            assert connection.exec_driver_sql("SHOW idle_in_transaction_session_timeout").scalar() == "1s"
        stalled = db.engine.connect()
        stalled.exec_driver_sql("SELECT 1")  # a transaction begins, then the process stalls
        time.sleep(2.5)
        with pytest.raises(DBAPIError):  # the server ended it, releasing whatever it held
            stalled.exec_driver_sql("SELECT 1")
        stalled.invalidate()
        stalled.close()
        with db.engine.connect() as connection:  # the pool goes on with fresh connections
            assert connection.exec_driver_sql("SELECT 2").scalar() == 2
    finally:
        db.dispose()
        drop_database(postgres_admin_url, url)
