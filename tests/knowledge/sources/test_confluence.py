"""The Confluence connector against the fake Confluence on loopback: spaces, CQL listings
followed through every `_links.next`, bodies fetched only when asked, attachments (also
through Cloud's redirect to a media host, without credentials), 401/403 as clear errors,
429 honoured through Retry-After, and connecting: checked first, sealed, masked."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from cryptography.fernet import Fernet

from knowledge.sources.connectors import (
    BadCredentials,
    ConnectorError,
    ConnectorUnavailable,
    Credentials,
    FolderSpec,
    NotConfigured,
    UnknownFolder,
)
from knowledge.sources.connectors.base import Complete
from knowledge.sources.connectors.confluence import listing_cql, parse_space
from knowledge.sources.connectors.service import Connections, normalise_base_url
from knowledge.sources.web import AllowList
from storage.db import Database, open_database
from storage.repositories.connections import ConnectionRepository
from storage.repositories.directory import Directory
from storage.repositories.indexes import IndexRepository
from storage.secrets import SecretBox
from storage.values import Scope
from tests.fakes.confluence_server import EMAIL, TOKEN, FakeConfluence, Seeded, seed

LOOPBACK = AllowList.parse("127.0.0.1")
CLOUD = Credentials(TOKEN, EMAIL)


class Sleeps:
    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


@pytest.fixture
def db(tmp_path: Path) -> AsyncIterator[Database]:
    database = open_database(f"sqlite:///{tmp_path / 'lore.db'}")
    Directory(database).ensure_tenant("T1")
    yield database
    database.dispose()


@pytest.fixture
async def confluence() -> AsyncIterator[FakeConfluence]:
    async with FakeConfluence(page_size=2) as fake:
        yield fake


def connections(
    db: Database, *, key: str | None = None, sleep: Sleeps | None = None, **kwargs: object
) -> Connections:
    box = SecretBox(key or Fernet.generate_key().decode())
    extra = {"sleep": sleep} if sleep is not None else {}
    return Connections(ConnectionRepository(db, box), LOOPBACK, **extra, **kwargs)  # type: ignore[arg-type]


async def test_spaces_and_listings_follow_every_next_link(db: Database, confluence: FakeConfluence) -> None:
    seeded = seed(confluence)
    async with connections(db).client(confluence.base_url, CLOUD) as connector:
        assert await connector.account() == "Ada Lovelace"
        assert [(f.key, f.name) for f in await connector.folders()] == [
            ("ENG", "Engineering"),
            ("OPS", "Operations"),
        ]
        *listed, complete = [ref async for ref in connector.changed_since([FolderSpec("ENG")], None)]
        *tree, _ = [ref async for ref in connector.changed_since([FolderSpec("ENG", seeded.runbooks)], None)]
        since = datetime(2024, 1, 1, tzinfo=UTC)
        changed = [ref async for ref in connector.changed_since([FolderSpec("ENG")], since)]
    assert complete == Complete(), "a listing of everything says so: what it no longer shows is gone"
    assert not any(isinstance(r, Complete) for r in changed), "a listing of changes prunes nothing"
    assert [r.title for r in listed] == [
        "Engineering Home", "Runbooks", "Deploy", "Rollback", "Architecture", "API Gateway"
    ]  # fmt: skip
    assert [r.title for r in tree] == ["Runbooks", "Deploy", "Rollback"]
    assert all(r.version == 1 and r.modified is not None for r in listed)
    searches = confluence.searches()
    assert len(searches) == 3 + 2 + 3, (
        "six pages two at a time, then three, then six: every next link followed"
    )
    assert all(s.query["expand"] == "version" for s in searches), "listings never ask for bodies"
    assert confluence.bodies_served == []


async def test_fetched_pages_carry_text_and_facts(db: Database, confluence: FakeConfluence) -> None:
    seeded = seed(confluence)
    async with connections(db).client(confluence.base_url, CLOUD) as connector:
        home, deploy = sorted(await connector.fetch([seeded.deploy, seeded.home]), key=lambda i: int(i.id))
        [checklist, diagram] = await connector.attachments(seeded.deploy)
        data = await connector.download(checklist, 1024)
    assert (home.title, deploy.title) == ("Engineering Home", "Deploy")
    assert deploy.url == f"{confluence.base_url}/spaces/ENG/pages/{seeded.deploy}/Deploy"
    assert (deploy.folder, deploy.folder_name, deploy.version) == ("ENG", "Engineering", 1)
    assert deploy.path == ("Engineering Home", "Runbooks")
    assert deploy.labels == ("runbook", "deploy")
    assert deploy.author == "Ada Lovelace" and deploy.modified == datetime(2024, 5, 1, 9, 2, tzinfo=UTC)
    assert "## Steps\n\n1. Freeze merges" in deploy.text
    assert "```bash\n./deploy.sh --colour green\n```" in deploy.text
    assert "| production | Grace |" in deploy.text
    assert sorted(confluence.bodies_served) == sorted([seeded.deploy, seeded.home])
    assert (checklist.title, checklist.media_type, diagram.media_type) == (
        "checklist.md",
        "text/markdown",
        "image/png",
    )
    assert data.startswith(b"# Release checklist")


def test_listing_cql_names_spaces_trees_and_the_window() -> None:
    since = datetime(2025, 3, 4, 5, 6, tzinfo=UTC)
    assert listing_cql([FolderSpec("ENG"), FolderSpec("OPS", "42")], since) == (
        'type = page and (space = "ENG" or (space = "OPS" and (id = 42 or ancestor = 42))) '
        'and lastmodified >= "2025-03-04 05:06" order by lastmodified asc'
    )
    assert parse_space("~ada/123") == FolderSpec("~ada", "123")
    with pytest.raises(ValueError, match="not a space key"):
        parse_space('ENG" or type = blogpost')


async def test_bad_credentials_are_a_clear_error(db: Database, confluence: FakeConfluence) -> None:
    service = connections(db)
    with pytest.raises(BadCredentials, match=r"refused the credentials \(401\).*connect again"):
        await service.connect("T1", confluence.base_url, Credentials("wrong-token-0000", EMAIL))
    assert await service.for_tenant("T1") == [], "nothing is stored as connected"


async def test_a_personal_access_token_is_a_bearer_token(db: Database) -> None:
    async with FakeConfluence(pat="data-center-pat-0123456789") as fake:
        service = connections(db)
        connection, account = await service.connect(
            "T1", fake.base_url, Credentials("data-center-pat-0123456789")
        )
    assert account == "Ada Lovelace"
    assert connection.credentials_hint == "personal access token …6789"
    assert fake.requests.snapshot()[0].headers["Authorization"] == "Bearer data-center-pat-0123456789"


async def test_rate_limits_are_honoured_then_given_up(db: Database, confluence: FakeConfluence) -> None:
    seed(confluence)
    sleeps = Sleeps()
    service = connections(db, sleep=sleeps)
    confluence.rate_limit(2, retry_after="7")
    async with service.client(confluence.base_url, CLOUD) as connector:
        assert len(await connector.folders()) == 2
        assert sleeps.waits == [7.0, 7.0]
        confluence.rate_limit(10, retry_after="1")
        with pytest.raises(ConnectorUnavailable, match=r"kept asking Lore to slow down \(429\)"):
            await connector.folders()
    assert sleeps.waits == [7.0, 7.0, 1.0, 1.0, 1.0], "three retries, then it gives up"
    confluence.rate_limit(1, retry_after="3600")
    async with service.client(confluence.base_url, CLOUD) as connector:
        with pytest.raises(ConnectorUnavailable):
            await connector.folders()  # a wait longer than a minute is not worth holding a job for


async def test_connecting_checks_then_seals_and_masks(db: Database, confluence: FakeConfluence) -> None:
    key = Fernet.generate_key().decode()
    service = connections(db, key=key)
    connection, account = await service.connect("T1", confluence.base_url + "/", CLOUD, created_by=None)
    assert account == "Ada Lovelace"
    assert (connection.name, connection.base_url) == ("127.0.0.1", confluence.base_url)
    assert connection.credentials_hint == "ada@example.com, API token …wxyz"
    assert TOKEN not in repr(connection) and TOKEN not in repr(CLOUD)
    with db.session() as session:
        [sealed] = session.exec(_raw("SELECT credentials_ref FROM doc_source")).all()  # type: ignore[call-overload]
    assert TOKEN not in sealed[0] and EMAIL not in sealed[0]
    assert ConnectionRepository(db, SecretBox(key)).credentials(connection.id) == {
        "token": TOKEN,
        "email": EMAIL,
    }
    again, _ = await service.connect("T1", confluence.base_url, CLOUD)
    assert again.id == connection.id, "connecting the same site again replaces its credentials"


async def test_without_a_secret_key_nothing_is_stored_or_sent(
    db: Database, confluence: FakeConfluence
) -> None:
    service = Connections(ConnectionRepository(db, None), LOOPBACK)
    with pytest.raises(NotConfigured, match=r"LORE_SECRET_KEY is not set.*Fernet\.generate_key"):
        await service.connect("T1", confluence.base_url, CLOUD)
    assert confluence.requests.snapshot() == []


async def test_base_urls_are_checked_before_any_request(db: Database) -> None:
    with pytest.raises(
        ConnectorError, match=r"may not connect to 127\.0\.0\.1: that address is this machine"
    ):
        normalise_base_url("http://127.0.0.1:9/wiki", AllowList())
    with pytest.raises(ConnectorError, match="not an http"):
        normalise_base_url("ftp://example.com/wiki", LOOPBACK)
    assert (
        normalise_base_url("https://acme.atlassian.net/?x=1#y", LOOPBACK) == "https://acme.atlassian.net/wiki"
    )
    assert (
        normalise_base_url("https://wiki.example.com/confluence/", LOOPBACK)
        == "https://wiki.example.com/confluence"
    )


async def test_attaching_checks_the_spaces(db: Database, confluence: FakeConfluence) -> None:
    seed(confluence)
    service = connections(db)
    connection, _ = await service.connect("T1", confluence.base_url, CLOUD)
    index = IndexRepository(db).create(
        "T1", "confluence", Scope.SHARED, embedding_model="m", embedding_dimension=3
    )
    with pytest.raises(
        UnknownFolder, match="has no space NOPE that this account can read; its spaces: ENG, OPS"
    ):
        await service.attach(connection, index, [FolderSpec("NOPE")])
    attached = await service.attach(connection, index, [FolderSpec("eng")])
    again = await service.attach(connection, index, [FolderSpec("OPS"), FolderSpec("ENG")])
    assert attached.id == again.id and again.folders == ["ENG", "OPS"]


async def test_attachments_redirected_to_a_media_host_get_no_credentials(db: Database) -> None:
    async def resolve(host: str) -> list[str]:
        assert host == "media.test", "no other name is ever looked up"
        return ["127.0.0.1"]

    async with FakeConfluence(media_host="media.test") as fake:
        seeded: Seeded = seed(fake)
        service = connections(db, resolve=resolve)
        async with service.client(fake.base_url, CLOUD) as connector:
            [checklist, _] = await connector.attachments(seeded.deploy)
            assert (await connector.download(checklist, 1024)).startswith(b"# Release checklist")
    [media] = [r for r in fake.requests.snapshot() if r.path.startswith("/media/")]
    assert media.status == 200 and not media.signed


def _raw(sql: str) -> object:
    from sqlalchemy import text

    return text(sql)
