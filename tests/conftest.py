"""Fixtures shared by every test: real databases (SQLite and PostgreSQL), real Chroma
(embedded and server), and an environment that no developer configuration leaks into.

Servers are session-scoped and started on first use; databases and Chroma clients are
per test and start empty. `-m "not postgres"` / `-m "not chroma_server"` leave the server
variants out.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from bot.app.settings import Settings
from storage.db import Database, open_database
from tests.support.chroma_server import serve_chroma
from tests.support.postgres import create_database, drop_database, serve_postgres

if TYPE_CHECKING:
    from chromadb.api import ClientAPI

# Every variable `Settings` reads (matched case-insensitively, as pydantic-settings does),
# plus proxies, which would route requests meant for loopback fakes elsewhere.
LEAKY_VARIABLES = frozenset(name.upper() for name in Settings.model_fields) | {
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark tests by the servers they ask for, so `-m` can leave them out; then put the long
    ones (end-to-end or slow) first, so that parallel workers (`make test` runs `-n auto`)
    start them at once and finish together on the many short ones."""
    for item in items:
        names = getattr(item, "fixturenames", ())
        if "postgres_admin_url" in names:
            item.add_marker(pytest.mark.postgres)
        if "chroma_server" in names:
            item.add_marker(pytest.mark.chroma_server)
    items.sort(key=lambda item: not (item.get_closest_marker("e2e") or item.get_closest_marker("slow")))


@pytest.fixture(scope="session", autouse=True)
def _quiet_environment() -> Iterator[None]:
    """No telemetry from ONNX Runtime or Chroma."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ORT_DISABLE_TELEMETRY", "1")
        patch.setenv("ANONYMIZED_TELEMETRY", "False")
        yield


@pytest.fixture(autouse=True)
def _no_developer_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test sees Lore's defaults, not the developer's configuration. The cwd is left alone."""
    for name in list(os.environ):
        if name.upper() in LEAKY_VARIABLES:
            monkeypatch.delenv(name)


@pytest.fixture(scope="session")
def postgres_admin_url() -> Iterator[str]:
    """Admin URL of a throw-away PostgreSQL server (skipped if not installed, failed under CI)."""
    with serve_postgres() as url:
        yield url


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """URL of a fresh, empty database: a SQLite file in tmp_path, or a new PostgreSQL database."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'lore.db'}"
        return
    admin_url: str = request.getfixturevalue("postgres_admin_url")
    url = create_database(admin_url)
    yield url
    drop_database(admin_url, url)


@pytest.fixture
def database(database_url: str) -> Iterator[Database]:
    """`open_database()` on `database_url`, migrated; disposed afterwards."""
    db = open_database(database_url)
    yield db
    db.dispose()


@pytest.fixture(scope="session")
def chroma_server() -> Iterator[tuple[str, int]]:
    """(host, port) of a throw-away Chroma server."""
    with serve_chroma() as address:
        yield address


@pytest.fixture(params=["embedded", pytest.param("server", marks=pytest.mark.chroma_server)])
def chroma_client(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ClientAPI]:
    """An empty Chroma: embedded in tmp_path, or on the session server (emptied afterwards)."""
    from storage.vectors import chroma_client as make_chroma_client  # chromadb takes ~1 s to import

    if request.param == "embedded":
        client = make_chroma_client(path=tmp_path / "chroma")
    else:
        host, port = request.getfixturevalue("chroma_server")
        client = make_chroma_client(host=host, port=port)
    yield client
    if request.param == "server":
        for collection in client.list_collections():
            client.delete_collection(collection.name)
    else:
        client.close()  # type: ignore[attr-defined]  # releases the embedded SQLite files
