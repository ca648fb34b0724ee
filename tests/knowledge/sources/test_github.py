"""The GitHub connector against the fake GitHub, apart from the sync: folders and how they are
written, what files a selection takes, connecting (checked first, nothing stored when
refused, a GitHub App's key never shown), the primary rate limit respected before a request,
a truncated tree walked a folder at a time, and the listing's items and completeness."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from cryptography.fernet import Fernet
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from knowledge.sources.connectors import BadCredentials, Credentials, FolderSpec, UnknownFolder
from knowledge.sources.connectors.base import Complete, ItemRef
from knowledge.sources.connectors.github import api_root, parse_folder
from knowledge.sources.connectors.github_text import Selection
from knowledge.sources.connectors.service import Connections, normalise_base_url
from knowledge.sources.web import AllowList
from storage.db import Database, open_database
from storage.repositories.connections import ConnectionRepository
from storage.repositories.directory import Directory
from storage.repositories.indexes import IndexRepository
from storage.secrets import SecretBox
from storage.values import Scope
from tests.fakes.github_server import APP_ID, INSTALLATION_ID, TOKEN, FakeGitHub, seed
from tests.knowledge.sources.connector_jobs import Waits

LOOPBACK = AllowList.parse("127.0.0.1")
KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)


def pem(key: rsa.RSAPrivateKey) -> str:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = open_database(f"sqlite:///{tmp_path / 'lore.db'}")
    Directory(database).ensure_tenant("T1")
    yield database
    database.dispose()


@pytest.fixture
async def github() -> AsyncIterator[FakeGitHub]:
    async with FakeGitHub(app_key=KEY.public_key()) as fake:
        seed(fake)
        yield fake


def connections(db: Database, waits: Waits | None = None) -> Connections:
    box = SecretBox(Fernet.generate_key().decode())
    return Connections(ConnectionRepository(db, box), LOOPBACK, sleep=waits or Waits())


def test_folders_are_repositories_or_owners() -> None:
    assert parse_folder("acme/payments") == FolderSpec("acme/payments")
    assert parse_folder(" https://github.com/acme/payments.git ") == FolderSpec("acme/payments")
    assert parse_folder("acme") == FolderSpec("acme")
    for wrong in ("acme/payments; rm -rf", "../etc", "acme/..", "a/b/c", "-acme", ""):
        with pytest.raises(ValueError, match="is not a repository"):
            parse_folder(wrong)


def test_the_api_root_a_user_means() -> None:
    assert api_root("https://github.com") == "https://api.github.com"
    assert api_root("https://ghe.acme.example") == "https://ghe.acme.example/api/v3"
    assert api_root("https://ghe.acme.example/api/v3") == "https://ghe.acme.example/api/v3"
    anywhere = AllowList.parse("api.github.com")
    assert normalise_base_url("", anywhere, "github") == "https://api.github.com", "github.com by default"
    assert normalise_base_url("https://github.com/", anywhere, "github") == "https://api.github.com"


def test_a_selection_takes_documentation_not_code_nor_vendored_files() -> None:
    default = Selection()
    wanted = ["README.md", "README", "docs/deploy.md", "docs/guide/setup.txt", "adr/0001-ledger.md",
              "docs/architecture.rst", "guide.adoc", "analysis/fraud.ipynb", "sub/README.rst"]  # fmt: skip
    unwanted = ["src/app.py", "requirements.txt", "node_modules/left-pad/README.md", ".github/ISSUE_TEMPLATE.md",
                "LICENSE.md", "vendor/lib/doc.md", "docs/logo.png", "notes.txt"]  # fmt: skip
    assert [p for p in wanted if not default.wants(p)] == []
    assert [p for p in unwanted if default.wants(p)] == []
    narrow = Selection.from_mapping({"include": ["handbook/**"], "exclude": ["handbook/old/"]})
    assert (
        narrow.wants("handbook/a/b.md")
        and not narrow.wants("handbook/old/b.md")
        and not narrow.wants("README.md")
    )
    assert narrow.skips_folder("handbook/old") and not narrow.skips_folder("handbook")
    for options, message in (
        ({"parts": ["wiki"]}, "parts are some of"),
        ({"closed": "no"}, "closed is true or false"),
        ({"include": "x" * 300}, "at most 50 patterns"),
        ({"colour": 1}, "unknown GitHub options: colour"),
    ):
        with pytest.raises(ValueError, match=message):
            Selection.from_mapping(options)


async def test_connecting_checks_first_and_stores_nothing_when_refused(
    db: Database, github: FakeGitHub
) -> None:
    service = connections(db)
    with pytest.raises(BadCredentials, match=r"GitHub at 127\.0\.0\.1 refused the credentials \(401\)"):
        await service.connect(
            "T1", github.base_url, Credentials("github_pat_wrong-0000000000"), kind="github"
        )
    stranger = pem(rsa.generate_private_key(public_exponent=65537, key_size=2048))
    with pytest.raises(BadCredentials):
        await service.connect(
            "T1",
            github.base_url,
            Credentials(stranger, app_id=APP_ID, installation_id=INSTALLATION_ID),
            kind="github",
        )
    assert await service.for_tenant("T1") == []
    app = Credentials(pem(KEY), app_id=APP_ID, installation_id=INSTALLATION_ID)
    assert pem(KEY).splitlines()[1] not in repr(app) + app.hint()
    with pytest.raises(ValueError, match="not a PEM file"):
        Credentials("just a token", app_id=APP_ID, installation_id=INSTALLATION_ID)
    with pytest.raises(ValueError, match="needs both"):
        Credentials(pem(KEY), app_id=APP_ID)


async def test_folders_list_repositories_then_owners_and_attach_checks_them(
    db: Database, github: FakeGitHub
) -> None:
    service = connections(db)
    connection, _ = await service.connect("T1", github.base_url, Credentials(TOKEN), kind="github")
    folders = await service.folders(connection)
    assert [(f.key, f.kind) for f in folders] == [
        ("acme/payments", "private repository"),
        ("acme/website", "public repository"),
        ("acme", "owner"),
    ]
    index = IndexRepository(db).create("T1", "eng", Scope.SHARED, embedding_model="m", embedding_dimension=3)
    with pytest.raises(UnknownFolder, match="has no repository acme/nope that this account can read"):
        await service.attach(connection, index, [FolderSpec("acme/nope")])
    attached = await service.attach(
        connection, index, [FolderSpec("ACME/Payments")], selection={"parts": ["docs"]}
    )
    assert attached.folders == ["acme/payments"], "stored as GitHub spells it"
    assert attached.options["selection"]["parts"] == ["docs"]


async def test_the_primary_limit_is_waited_out_before_the_next_request(
    db: Database, github: FakeGitHub
) -> None:
    waits = Waits()
    github.remaining["core"] = 2
    github.reset_at = int(time.time()) + 40

    async def window_resets() -> None:
        github.remaining["core"] = 5000

    waits.then.append(window_resets)
    async with connections(db, waits).client(github.base_url, Credentials(TOKEN), kind="github") as connector:
        listed = [r async for r in connector.changed_since([FolderSpec("acme/payments")], None, state={})]
    assert len(waits.seconds) == 1 and 35 <= waits.seconds[0] <= 42, waits.seconds
    assert [r.status for r in github.api_requests()].count(403) == 0, "waited before, never refused"
    assert len([r for r in listed if isinstance(r, ItemRef)]) == 8


async def test_a_truncated_tree_is_walked_a_folder_at_a_time(db: Database, github: FakeGitHub) -> None:
    github.truncate_over = 2
    state: dict[str, object] = {}
    async with connections(db).client(github.base_url, Credentials(TOKEN), kind="github") as connector:
        listed = [r async for r in connector.changed_since([FolderSpec("acme/payments")], None, state=state)]
    files = sorted(r.id for r in listed if isinstance(r, ItemRef) and ":file:" in r.id)
    assert files == [f"acme/payments:file:{p}" for p in
                     ("README.md", "docs/architecture.rst", "docs/deploy.md", "docs/fraud.ipynb")]  # fmt: skip
    trees = [r.path for r in github.api_requests() if "/git/trees/" in r.path]
    assert not [t for t in trees if t.endswith(("node_modules", ".github"))], "excluded folders not entered"
    assert [r for r in listed if isinstance(r, Complete)] == [
        Complete("acme/payments:file:"), Complete("acme/payments:issue:"), Complete("acme/payments:discussion:")
    ]  # fmt: skip
    assert set(state) == {"pages", "edits", "checked", "repos"} and state["repos"] == ["acme/payments"]
