"""Notion through the HTTP API, with jobs running in the server against the fake Notion on
loopback: connect with an integration's token (checked, stored encrypted, never shown back),
list what is shared with it, attach the workspace (a job back, followed to the end) and find
a row's property cited by its Notion link, disconnect; and the bodies refused with a reason."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from bot.app.audit import AuditFilter
from tests.api.conftest import TENANT, LoreApi, running_api
from tests.api.test_auth import assert_error
from tests.api.test_sources import follow
from tests.fakes.notion_server import TOKEN, FakeNotion, Seeded, seed

pytestmark = pytest.mark.asyncio(loop_scope="module")
Json = dict[str, Any]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def notion() -> AsyncIterator[tuple[FakeNotion, Seeded]]:
    async with FakeNotion() as fake:
        yield fake, seed(fake)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def api(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[LoreApi]:
    async with running_api(
        tmp_path_factory.mktemp("lore-api-notion"),
        lore_jobs_in_process=True,
        lore_crawl_allow="127.0.0.1",
        lore_notion_requests_per_second=0,
    ) as running:
        yield running


async def test_connect_list_attach_the_workspace_and_disconnect(
    api: LoreApi, notion: tuple[FakeNotion, Seeded]
) -> None:
    fake, seeded = notion
    body = {"kind": "notion", "url": fake.base_url, "token": TOKEN}
    status, connected = await api.call("POST", "/v1/connectors", json_body=body)
    assert status == 201, connected
    assert connected["account"] == "Lore in Acme" and connected["credentials"].endswith("…wxyz")
    assert TOKEN not in str(connected)
    status, folders = await api.call("GET", f"/v1/connectors/{connected['id']}/spaces")
    shown = [(f["key"], f["name"], f["type"]) for f in folders["spaces"]]
    assert shown[0] == ("workspace", "everything shared with the integration", "workspace")
    assert (seeded.handbook.id, "Engineering Handbook", "page") in shown
    assert (seeded.decisions.id, "Decisions", "database") in shown
    attach = {"index": "handbook", "notion": ["workspace"]}
    status, attached = await api.call("POST", f"/v1/connectors/{connected['id']}/attach", json_body=attach)
    assert status == 202, attached
    stream = await follow(api, attached["job"]["id"])
    ended = stream[-1]["job"]
    assert ended["state"] == "succeeded" and ended["counters"]["documents_added"] == 8, stream
    query = {"query": "which database does the ledger run on", "query_type": "keyword", "top_k": 1}
    status, found = await api.call("POST", "/v1/indexes/handbook/query", json_body=query)
    assert status == 200 and found["matches"][0]["locator"]["url"] == fake.page_url(seeded.ledger_decision)
    status, gone = await api.call("DELETE", f"/v1/connectors/{connected['id']}")
    assert status == 200 and gone == {"documents_removed": 8}


async def test_bodies_that_are_not_a_way_in_are_refused(
    api: LoreApi, notion: tuple[FakeNotion, Seeded]
) -> None:
    fake, _ = notion
    base = {"kind": "notion", "url": fake.base_url}
    for bad, named in [
        ({**base}, "token"),
        ({**base, "token": TOKEN, "email": "ada@example.com"}, "no email"),
        ({**base, "token": TOKEN, "app_id": "1", "installation_id": "2", "private_key": "k"}, "GitHub App"),
    ]:
        status, body = await api.call("POST", "/v1/connectors", json_body=bad)
        assert status == 400 and named in assert_error(body, "invalid_request_error"), (bad, body)
    status, body = await api.call("POST", "/v1/connectors", json_body={**base, "token": "wrong"})
    assert status == 400 and "refused the integration token (401)" in assert_error(
        body, "invalid_request_error"
    )
    assert (await api.call("GET", "/v1/connectors"))[1] == {"connectors": []}

    status, connected = await api.call("POST", "/v1/connectors", json_body={**base, "token": TOKEN})
    attach = f"/v1/connectors/{connected['id']}/attach"
    for bad, named in [
        ({"index": "x", "spaces": ["ENG"]}, "notion"),
        ({"index": "x", "notion": ["not a page"]}, "not a Notion page"),
        ({"index": "x", "notion": ["x" * 3000]}, "notion"),
    ]:
        status, body = await api.call("POST", attach, json_body=bad)
        assert status == 400 and named in assert_error(body, "invalid_request_error"), (bad, body)
    missing = {"index": "x", "notion": ["0123456789abcdef0123456789abcdef"]}
    status, body = await api.call("POST", attach, json_body=missing)
    assert status == 400 and "has no page or database" in assert_error(body, "invalid_request_error"), body
    await api.call("DELETE", f"/v1/connectors/{connected['id']}")


async def test_an_attachment_restricted_to_a_channel_fails_closed_without_slack_and_is_lifted(
    api: LoreApi, notion: tuple[FakeNotion, Seeded]
) -> None:
    """Issue 41 over the HTTP API: `PUT …/sources/{id}/restriction`. This server has no Slack
    to read #eng's members from, so nobody reads through it (fail closed) until it is lifted."""
    fake, seeded = notion
    body = {"kind": "notion", "url": fake.base_url, "token": TOKEN}
    status, connected = await api.call("POST", "/v1/connectors", json_body=body)
    assert status == 201, connected
    attach = {"index": "runbooks", "notion": ["workspace"]}
    status, attached = await api.call("POST", f"/v1/connectors/{connected['id']}/attach", json_body=attach)
    assert status == 202 and (await follow(api, attached["job"]["id"]))[-1]["job"]["state"] == "succeeded"
    source = attached["source"]["id"]
    restriction = f"/v1/indexes/runbooks/sources/{source}/restriction"
    query = {"query": "which database does the ledger run on", "query_type": "keyword", "top_k": 1}

    status, refused = await api.call("PUT", restriction, key="ada", json_body={"channels": ["CENG"]})
    assert status == 403, refused
    status, bad = await api.call("PUT", restriction, json_body={"channels": ["#eng"]})
    assert status == 400, bad
    status, done = await api.call("PUT", restriction, json_body={"channels": ["CENG"]})
    assert status == 200, done
    assert done["documents_changed"] == 8 and [g["group"] for g in done["groups"]] == ["channel:CENG"]
    assert done["groups"][0]["members"] == 0 and "no Slack token" in done["groups"][0]["error"]
    status, found = await api.call("POST", "/v1/indexes/runbooks/query", json_body=query)
    assert status == 200 and found["matches"] == [], "nobody reads through a group Slack did not describe"

    status, lifted = await api.call("PUT", restriction, json_body={})
    assert status == 200 and lifted["groups"] == [] and lifted["documents_changed"] == 8, lifted
    status, found = await api.call("POST", "/v1/indexes/runbooks/query", json_body=query)
    assert found["matches"][0]["locator"]["url"] == fake.page_url(seeded.ledger_decision)
    log = api.services.audit.log
    assert [e.action for e in log.page(TENANT, AuditFilter())][:2] == [
        "source.unrestrict",
        "source.restrict",
    ]
    await api.call("DELETE", f"/v1/connectors/{connected['id']}")
