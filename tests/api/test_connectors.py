"""Confluence through the HTTP API, with jobs running in the server against the fake
Confluence on loopback: connect (credentials checked, stored encrypted, never shown back),
list masked, list spaces, attach a space (a job id back, its log followed to the end, the
page found by a query), disconnect; refusals for non-admin keys, bad credentials, private
or unresolvable addresses (the API servers look no name up), and no LORE_SECRET_KEY."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from tests.api.conftest import LoreApi, running_api
from tests.api.test_auth import assert_error
from tests.api.test_sources import follow
from tests.fakes.confluence_server import EMAIL, TOKEN, FakeConfluence, Seeded, seed

pytestmark = pytest.mark.asyncio(loop_scope="module")
Json = dict[str, Any]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def confluence() -> AsyncIterator[tuple[FakeConfluence, Seeded]]:
    async with FakeConfluence() as fake:
        yield fake, seed(fake)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def api(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[LoreApi]:
    async with running_api(
        tmp_path_factory.mktemp("lore-api-connectors"),
        lore_jobs_in_process=True,
        lore_crawl_allow="127.0.0.1",
    ) as running:
        yield running


async def connect(api: LoreApi, url: str, token: str = TOKEN, key: str = "service") -> tuple[int, Json]:
    body = {"kind": "confluence", "url": url, "email": EMAIL, "token": token}
    return await api.call("POST", "/v1/connectors", json_body=body, key=key)


async def test_connect_list_spaces_attach_and_query(
    api: LoreApi, confluence: tuple[FakeConfluence, Seeded]
) -> None:
    fake, pages = confluence
    status, connected = await connect(api, fake.base_url)
    assert status == 201, connected
    assert (
        connected["credentials"] == "ada@example.com, API token …wxyz"
        and connected["account"] == "Ada Lovelace"
    )
    assert (connected["kind"], connected["base_url"], connected["attachments"]) == (
        "confluence",
        fake.base_url,
        [],
    )
    assert TOKEN not in str(connected)

    status, listed = await api.call("GET", "/v1/connectors", key="ada")
    assert status == 200 and [c["id"] for c in listed["connectors"]] == [connected["id"]]
    assert TOKEN not in str(listed)

    status, spaces = await api.call("GET", f"/v1/connectors/{connected['id']}/spaces")
    assert status == 200 and [(s["key"], s["name"]) for s in spaces["spaces"]] == [
        ("ENG", "Engineering"),
        ("OPS", "Operations"),
    ]

    body = {"index": "confluence", "spaces": ["ENG"], "schedule": "every 6 hours"}
    status, attached = await api.call("POST", f"/v1/connectors/{connected['id']}/attach", json_body=body)
    assert status == 202, attached
    source, job = attached["source"], attached["job"]
    assert (source["kind"], source["start_urls"], source["schedule"]) == (
        "confluence",
        ["ENG"],
        "every 6 hours",
    )
    stream = await follow(api, job["id"])
    assert stream[0]["message"] == "queued: manual sync of confluence ENG from 127.0.0.1"
    ended = stream[-1]["job"]
    assert ended["state"] == "succeeded" and ended["counters"]["documents_added"] == 6
    assert ended["counters"]["attachments_added"] == 1

    query = {"query": "blue-green pipeline", "query_type": "keyword", "top_k": 1}
    status, found = await api.call("POST", "/v1/indexes/confluence/query", json_body=query)
    assert status == 200
    assert found["matches"][0]["locator"]["url"] == f"{fake.base_url}/spaces/ENG/pages/{pages.deploy}/Deploy"

    status, listed = await api.call("GET", "/v1/connectors")
    [attachment] = listed["connectors"][0]["attachments"]
    assert (
        attachment["index"] == "confluence"
        and attachment["folders"] == ["ENG"]
        and attachment["last_sync_at"]
    )
    status, sources = await api.call("GET", "/v1/indexes/confluence/sources")
    assert [s["kind"] for s in sources["sources"]] == ["confluence"]

    status, gone = await api.call("DELETE", f"/v1/connectors/{connected['id']}")
    assert status == 200 and gone == {"documents_removed": 7}
    status, listed = await api.call("GET", "/v1/connectors")
    assert listed == {"connectors": []}
    status, info = await api.call("GET", "/v1/indexes/confluence")
    assert info["documents"] == 0


async def test_refusals(api: LoreApi, confluence: tuple[FakeConfluence, Seeded]) -> None:
    fake, _ = confluence
    status, body = await connect(api, fake.base_url, token="not-the-token-1234")
    assert status == 400
    assert "refused the credentials (401)" in assert_error(body, "invalid_request_error")

    status, body = await connect(api, fake.base_url, key="ada")
    assert status == 403 and "Only workspace admins" in assert_error(body, "permission_error")

    status, body = await connect(api, "http://10.1.2.3/wiki")
    assert status == 400 and "private network" in assert_error(body, "invalid_request_error")

    requests_before = len(fake.requests.snapshot())
    status, body = await connect(api, "https://confluence.example.com/wiki")
    message = assert_error(body, "invalid_request_error")
    assert (
        status == 400
        and "couldn't find the site confluence.example.com" in message
        and "Check the url" in message
    )
    assert len(fake.requests.snapshot()) == requests_before

    status, body = await api.call("POST", "/v1/connectors", json_body={"url": fake.base_url})
    assert status == 400 and "token" in assert_error(body, "invalid_request_error")
    assert (await api.call("GET", "/v1/connectors"))[1] == {"connectors": []}, "nothing stored as connected"

    status, connected = await connect(api, fake.base_url)
    assert status == 201
    attach = f"/v1/connectors/{connected['id']}/attach"
    for bad, named in [
        ({"index": "x", "spaces": ["ENG", "OPS"], "page": "1"}, "page"),
        ({"index": "x", "spaces": ['ENG" or type = blogpost']}, "spaces"),
        ({"index": "x", "spaces": []}, "spaces"),
    ]:
        status, body = await api.call("POST", attach, json_body=bad)
        assert status == 400 and named in assert_error(body, "invalid_request_error"), body
    status, body = await api.call("POST", attach, json_body={"index": "x", "spaces": ["NOPE"]})
    assert status == 400 and "no space NOPE" in assert_error(body, "invalid_request_error")
    status, body = await api.call("POST", attach, json_body={"index": "x", "spaces": ["ENG"]}, key="ada")
    assert status == 403

    for key in ("other_tenant",):
        status, body = await api.call("GET", f"/v1/connectors/{connected['id']}/spaces", key=key)
        assert (
            status == 404
            and assert_error(body, "not_found_error") == f"There is no connector {connected['id']}."
        )
        assert (await api.call("GET", "/v1/connectors", key=key))[1] == {"connectors": []}
    await api.call("DELETE", f"/v1/connectors/{connected['id']}")


async def test_without_a_secret_key_nothing_is_stored(
    tmp_path: Path, confluence: tuple[FakeConfluence, Seeded]
) -> None:
    fake, _ = confluence
    async with running_api(
        tmp_path, seed=False, lore_secret_key=None, lore_crawl_allow="127.0.0.1"
    ) as keyless:
        status, body = await connect(keyless, fake.base_url)
    assert status == 503
    message = assert_error(body, "service_unavailable")
    assert "LORE_SECRET_KEY is not set" in message and "Fernet.generate_key()" in message
