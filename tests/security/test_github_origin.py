"""GitHub credentials go to the API root's origin only: a `Link` header that points the next
page elsewhere and a redirect to another origin are refused before any request is made there,
for a token and for a GitHub App's installation token alike; nothing reaches the other host."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography.fernet import Fernet
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from knowledge.sources.connectors import ConnectorError, Credentials, FolderSpec
from knowledge.sources.connectors.service import Connections
from knowledge.sources.web import AllowList
from storage.db import Database, open_database
from storage.repositories.connections import ConnectionRepository
from storage.repositories.directory import Directory
from storage.secrets import SecretBox
from tests.fakes.github_server import APP_ID, INSTALLATION_ID, TOKEN, FakeGitHub, seed
from tests.security.conftest import HostileHost, Lookups

KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
PEM = KEY.private_bytes(
    serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
).decode()
APP = Credentials(PEM, app_id=APP_ID, installation_id=INSTALLATION_ID)


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
@pytest.mark.parametrize("credentials", [Credentials(TOKEN), APP], ids=["token", "github-app"])
async def test_a_next_page_elsewhere_is_refused_unasked(db: Database, credentials: Credentials) -> None:
    async with FakeGitHub(app_key=KEY.public_key()) as fake, HostileHost() as other:
        seed(fake)
        for n in range(120):  # more than one page of issues
            fake.add_issue("acme/payments", f"Issue {n}", "body")
        fake.link_base = other.base_url
        async with connections(db).client(fake.base_url, credentials, kind="github") as connector:
            with pytest.raises(ConnectorError, match="another site"):
                [r async for r in connector.changed_since([FolderSpec("acme/payments")], None, state={})]
        assert other.hits.snapshot() == [], "not even asked: the link was refused before any request"
        assert all(r.signed for r in fake.api_requests())


@pytest.mark.asyncio
@pytest.mark.parametrize("credentials", [Credentials(TOKEN), APP], ids=["token", "github-app"])
async def test_a_redirect_elsewhere_is_not_followed(db: Database, credentials: Credentials) -> None:
    async with FakeGitHub(app_key=KEY.public_key()) as fake, HostileHost() as other:
        seed(fake)
        fake.redirects["/api/v3/repos/acme/payments"] = other.url("/api/v3/repos/acme/payments")
        async with connections(db).client(fake.base_url, credentials, kind="github") as connector:
            with pytest.raises(ConnectorError, match="redirected to another site"):
                [r async for r in connector.changed_since([FolderSpec("acme/payments")], None, state={})]
        assert other.hits.snapshot() == [] and other.authorizations == []
