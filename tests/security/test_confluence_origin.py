"""Confluence credentials go to the base URL's origin only (finding 10): an attachment whose
download link is absolute and on another origin (here: another loopback port) is fetched
without them on the very first request, not only after a redirect."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography.fernet import Fernet

from knowledge.sources.connectors import Credentials
from knowledge.sources.connectors.service import Connections
from knowledge.sources.web import AllowList
from storage.db import Database, open_database
from storage.repositories.connections import ConnectionRepository
from storage.repositories.directory import Directory
from storage.secrets import SecretBox
from tests.fakes.confluence_server import EMAIL, TOKEN, FakeConfluence, seed
from tests.security.conftest import HostileHost, Lookups

LOOT = b"# Exfiltrated\n\nThe attacker's copy of the release checklist.\n"


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
@pytest.mark.parametrize("basic", [True, False], ids=["cloud-basic", "data-center-bearer"])
async def test_an_absolute_attachment_link_elsewhere_gets_no_credentials(db: Database, basic: bool) -> None:
    credentials = Credentials(TOKEN, EMAIL) if basic else Credentials("pat-SECRET-0123456789")
    async with (
        FakeConfluence(pat=None if basic else "pat-SECRET-0123456789") as fake,
        HostileHost({"/download/checklist.md": (LOOT, "text/markdown")}) as other,
    ):
        seeded = seed(fake)
        fake.attachments[seeded.checklist].download_link = other.url("/download/checklist.md")
        async with connections(db).client(fake.base_url, credentials) as connector:
            attachments = await connector.attachments(seeded.deploy)
            [checklist] = [a for a in attachments if a.id == seeded.checklist]
            assert checklist.download_url.startswith(other.base_url)
            assert await connector.download(checklist, 1024) == LOOT
        assert other.hits.snapshot(), "the link was followed, without credentials"
        assert other.authorizations == []
        assert all(r.signed for r in fake.requests.snapshot() if r.path.startswith("/wiki/rest/"))


@pytest.mark.asyncio
async def test_same_host_other_port_is_another_origin(db: Database) -> None:
    """127.0.0.1 on another port is not the base URL's origin either (held by the rule above;
    checked here with the download link spelled with the fake's own host)."""
    async with FakeConfluence() as fake, HostileHost({"/x.md": (LOOT, "text/markdown")}) as other:
        seeded = seed(fake)
        assert other.base_url.split(":")[1] == fake.base_url.split(":")[1]  # same host
        fake.attachments[seeded.checklist].download_link = other.url("/x.md")
        async with connections(db).client(fake.base_url, Credentials(TOKEN, EMAIL)) as connector:
            [checklist] = [a for a in await connector.attachments(seeded.deploy) if a.id == seeded.checklist]
            await connector.download(checklist, 1024)
        assert other.authorizations == []
