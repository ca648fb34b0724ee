"""Fixtures shared by every test: real databases (SQLite and PostgreSQL), real Chroma
(embedded and server), and an environment that no developer configuration leaks into."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
os.environ["ANONYMIZED_TELEMETRY"] = "False"
os.environ.setdefault("TIKTOKEN_CACHE_DIR", tempfile.mkdtemp(prefix="lore-tiktoken-"))

from storage.db import Database, open_database
from tests.support.chroma_server import chroma_server
from tests.support.postgres import create_database, postgres_server

DEVELOPER_SETTINGS = (
    "DATABASE_URL",
    "CHROMA_HOST",
    "CHROMA_PORT",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "LLM_MODEL",
    "SLACK_BOT_TOKEN",
    "SLACK_APP_TOKEN",
    "SLACK_SIGNING_SECRET",
    "SLACK_API_URL",
    "LORE_HOME",
    "EMBEDDING_MODEL",
    "LORE_CRAWL_ALLOW",
    "LORE_MAX_FILE_MB",
)


@pytest.fixture(autouse=True)
def _no_developer_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in DEVELOPER_SETTINGS:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="session")
def postgres_admin_url() -> Iterator[str]:
    with postgres_server() as url:
        yield url


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh, empty database: SQLite in tmp_path, or a new database on the test server."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'lore.db'}"
    return create_database(request.getfixturevalue("postgres_admin_url"))


@pytest.fixture
def database(database_url: str) -> Iterator[Database]:
    db = open_database(database_url)
    yield db
    db.dispose()


@pytest.fixture(scope="session")
def chroma_address() -> Iterator[tuple[str, int]]:
    with chroma_server() as address:
        yield address


@pytest.fixture(params=["embedded", pytest.param("server", marks=pytest.mark.chroma_server)])
def chroma_client(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """A Chroma client: embedded in tmp_path, or on the test server (emptied afterwards)."""
    from storage.vectors import chroma_client as make_client

    if request.param == "embedded":
        yield make_client(path=tmp_path / "chroma")
        return
    host, port = request.getfixturevalue("chroma_address")
    client = make_client(host=host, port=port)
    yield client
    for collection in client.list_collections():
        client.delete_collection(collection.name)
