"""GitHub through the HTTP API, with jobs running in the server against the fake GitHub on
loopback: connect with a token or as a GitHub App (checked, stored encrypted, never shown
back), list its repositories and owners, attach a repository with options saying what to
index (a job back, followed to the end), disconnect; and the bodies refused with a reason."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.api.conftest import LoreApi, running_api
from tests.api.test_auth import assert_error
from tests.api.test_sources import follow
from tests.fakes.github_server import APP_ID, INSTALLATION_ID, TOKEN, FakeGitHub, seed

pytestmark = pytest.mark.asyncio(loop_scope="module")
Json = dict[str, Any]
KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
PEM = KEY.private_bytes(
    serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
).decode()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def github() -> AsyncIterator[FakeGitHub]:
    async with FakeGitHub(app_key=KEY.public_key()) as fake:
        seed(fake)
        yield fake


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def api(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[LoreApi]:
    async with running_api(
        tmp_path_factory.mktemp("lore-api-github"), lore_jobs_in_process=True, lore_crawl_allow="127.0.0.1"
    ) as running:
        yield running


async def test_connect_list_attach_with_options_and_disconnect(api: LoreApi, github: FakeGitHub) -> None:
    body = {"kind": "github", "url": github.base_url, "token": TOKEN}
    status, connected = await api.call("POST", "/v1/connectors", json_body=body)
    assert status == 201, connected
    assert (connected["account"], connected["credentials"]) == ("ada", "personal access token …wxyz")
    assert TOKEN not in str(connected)
    status, folders = await api.call("GET", f"/v1/connectors/{connected['id']}/spaces")
    assert [(f["key"], f["type"]) for f in folders["spaces"]] == [
        ("acme/payments", "private repository"),
        ("acme/website", "public repository"),
        ("acme", "owner"),
    ]
    # Made public: this key is mapped to no GitHub user, and who may read a private repository
    # is tested beside the sync (tests/knowledge/sources/test_github_sync.py, tests/e2e/test_github.py).
    repo = github.repo("acme/payments")
    repo.private, repo.visibility = False, "public"
    attach = {"index": "code", "repositories": ["acme/payments"], "options": {"parts": ["docs", "issues"]}}
    status, attached = await api.call("POST", f"/v1/connectors/{connected['id']}/attach", json_body=attach)
    assert status == 202, attached
    assert attached["source"]["start_urls"] == ["acme/payments"]
    stream = await follow(api, attached["job"]["id"])
    ended = stream[-1]["job"]
    assert ended["state"] == "succeeded" and ended["counters"]["documents_added"] == 6, stream
    query = {"query": "refund worker timeout raised in March", "query_type": "keyword", "top_k": 1}
    status, found = await api.call("POST", "/v1/indexes/code/query", json_body=query)
    assert status == 200 and found["matches"][0]["locator"]["url"].endswith("/acme/payments/issues/1")
    status, gone = await api.call("DELETE", f"/v1/connectors/{connected['id']}")
    assert status == 200 and gone == {"documents_removed": 6}


async def test_a_github_app_connects(api: LoreApi, github: FakeGitHub) -> None:
    body = {"kind": "github", "url": github.base_url, "app_id": APP_ID, "installation_id": INSTALLATION_ID,
            "private_key": PEM}  # fmt: skip
    status, connected = await api.call("POST", "/v1/connectors", json_body=body)
    assert status == 201, connected
    assert connected["account"] == "Lore Reader (installed on acme)"
    assert (
        connected["credentials"]
        == f"GitHub App {APP_ID}, installation {INSTALLATION_ID} (private key sealed)"
    )
    assert PEM.splitlines()[1] not in str(connected)
    await api.call("DELETE", f"/v1/connectors/{connected['id']}")


async def test_bodies_that_are_not_a_way_in_are_refused(api: LoreApi, github: FakeGitHub) -> None:
    base = {"kind": "github", "url": github.base_url}
    for bad, named in [
        ({**base}, "token"),
        ({**base, "token": TOKEN, "email": "ada@example.com"}, "no email"),
        ({**base, "token": TOKEN, "app_id": APP_ID, "installation_id": "7", "private_key": PEM}, "token"),
        ({**base, "app_id": APP_ID, "installation_id": INSTALLATION_ID}, "private_key"),
        ({**base, "app_id": "x1", "installation_id": INSTALLATION_ID, "private_key": PEM}, "app_id"),
    ]:
        status, body = await api.call("POST", "/v1/connectors", json_body=bad)
        assert status == 400 and named in assert_error(body, "invalid_request_error"), (bad, body)
    key = {**base, "app_id": APP_ID, "installation_id": INSTALLATION_ID, "private_key": "not a key"}
    status, body = await api.call("POST", "/v1/connectors", json_body=key)
    assert status == 400 and "not a PEM file" in assert_error(body, "invalid_request_error")
    assert (await api.call("GET", "/v1/connectors"))[1] == {"connectors": []}

    status, connected = await api.call("POST", "/v1/connectors", json_body={**base, "token": TOKEN})
    attach = f"/v1/connectors/{connected['id']}/attach"
    for bad, named in [
        ({"index": "x", "spaces": ["ENG"]}, "repositories"),
        ({"index": "x", "repositories": ["../etc"]}, "repositories"),
        ({"index": "x", "repositories": ["acme/payments"], "options": {"parts": ["wiki"]}}, "parts"),
        ({"index": "x", "repositories": ["acme/payments"], "options": {"include": ["x" * 300]}}, "include"),
    ]:
        status, body = await api.call("POST", attach, json_body=bad)
        assert status == 400 and named in assert_error(body, "invalid_request_error"), (bad, body)
    status, body = await api.call("POST", attach, json_body={"index": "x", "repositories": ["acme/nope"]})
    assert status == 400 and "no repository acme/nope" in assert_error(body, "invalid_request_error")
    await api.call("DELETE", f"/v1/connectors/{connected['id']}")
