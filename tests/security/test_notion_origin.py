"""A Notion integration's token goes to the API root's origin only: a redirect to another
origin, on a GET (a page's blocks) or a POST (search), is refused, not followed; nothing
reaches the other host, and the token is in no message."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography.fernet import Fernet

from knowledge.sources.connectors import ConnectorError, Credentials, FolderSpec
from knowledge.sources.connectors.service import Connections
from knowledge.sources.web import AllowList
from storage.db import Database, open_database
from storage.repositories.connections import ConnectionRepository
from storage.repositories.directory import Directory
from storage.secrets import SecretBox
from tests.fakes.notion_server import TOKEN, FakeNotion, seed
from tests.security.conftest import HostileHost, Lookups


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = open_database(f"sqlite:///{tmp_path / 'lore.db'}")
    Directory(database).ensure_tenant("T1")
    yield database
    database.dispose()


def connections(db: Database) -> Connections:
    box = SecretBox(Fernet.generate_key().decode())
    return Connections(ConnectionRepository(db, box), AllowList.parse("127.0.0.1"), resolve=Lookups())


@pytest.mark.asyncio
async def test_a_search_redirected_elsewhere_is_not_followed(db: Database) -> None:
    async with FakeNotion() as fake, HostileHost() as other:
        seed(fake)
        fake.redirects["/v1/search"] = other.url("/v1/search")
        async with connections(db).client(fake.base_url, Credentials(TOKEN), kind="notion") as connector:
            with pytest.raises(ConnectorError, match="redirected") as raised:
                [r async for r in connector.changed_since([FolderSpec("workspace")], None, state={})]
        assert TOKEN not in str(raised.value)
        assert other.hits.snapshot() == [] and other.authorizations == []


@pytest.mark.asyncio
async def test_a_pages_blocks_redirected_elsewhere_are_not_followed(db: Database) -> None:
    async with FakeNotion() as fake, HostileHost() as other:
        seeded = seed(fake)
        path = f"/v1/blocks/{seeded.scratch.id}/children"
        fake.redirects[path] = other.url(path)
        async with connections(db).client(fake.base_url, Credentials(TOKEN), kind="notion") as connector:
            refs = [r async for r in connector.changed_since([FolderSpec("workspace")], None, state={})]
            assert refs, "the listing itself is served"
            found = await connector.fetch([seeded.scratch.id])
        assert [type(f).__name__ for f in found] == ["Skipped"], "that page is skipped, not followed"
        assert other.hits.snapshot() == [] and other.authorizations == []
