"""Google Drive through the HTTP API, with jobs running in the server against the fake Google on
loopback: connect with a service account's key acting as a user or with an OAuth client
(checked, stored encrypted, never shown back), list its folders and shared drives, attach a
folder by its name with the link-sharing choice (a job back, followed to the end; a file shared
with anyone with the link is then public, one shared with the domain is not), disconnect;
the bodies refused with a reason; and a key whose token endpoint is not Google's refused
before anything is sent or stored (security)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from tests.api.conftest import LoreApi, running_api
from tests.api.test_auth import assert_error
from tests.api.test_sources import follow
from tests.fakes.google_server import CLIENT_ID, CLIENT_SECRET, DOMAIN, FakeGoogle, Seeded, seed

pytestmark = pytest.mark.asyncio(loop_scope="module")
Json = dict[str, Any]
ADA = f"ada@{DOMAIN}"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def google() -> AsyncIterator[tuple[FakeGoogle, Seeded]]:
    async with FakeGoogle() as fake:
        yield fake, seed(fake)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def api(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[LoreApi]:
    async with running_api(
        tmp_path_factory.mktemp("lore-api-drive"), lore_jobs_in_process=True, lore_crawl_allow="127.0.0.1"
    ) as running:
        yield running


async def test_connect_list_attach_by_name_and_disconnect(
    api: LoreApi, google: tuple[FakeGoogle, Seeded]
) -> None:
    fake, seeded = google
    key = fake.service_account_key()
    body = {"kind": "google-drive", "url": fake.drive_url, "key": key, "email": ADA}
    status, connected = await api.call("POST", "/v1/connectors", json_body=body)
    assert status == 201, connected
    assert connected["account"] == f"Ada Lovelace ({ADA})"
    assert connected["credentials"].endswith(f"acting as {ADA} (private key sealed)")
    assert json.loads(key)["private_key"].splitlines()[1] not in str(connected)
    status, folders = await api.call("GET", f"/v1/connectors/{connected['id']}/spaces")
    found = {(f["name"], f["type"]) for f in folders["spaces"]}
    assert {("Handbook", "folder"), ("Engineering", "shared drive"), ("My Drive", "my drive")} <= found
    attach = {"index": "handbook", "drive_folders": ["Handbook"], "link_sharing": "public"}
    status, attached = await api.call("POST", f"/v1/connectors/{connected['id']}/attach", json_body=attach)
    assert status == 202, attached
    assert attached["source"]["start_urls"] == [seeded.handbook], "the name is stored as the folder's id"
    stream = await follow(api, attached["job"]["id"])
    ended = stream[-1]["job"]
    assert ended["state"] == "succeeded" and ended["counters"]["documents_added"] == 5, stream
    query = {"query": "laptops collected from the IT desk", "query_type": "keyword", "top_k": 1}
    status, hits = await api.call("POST", "/v1/indexes/handbook/query", json_body=query)
    assert status == 200 and seeded.slides in hits["matches"][0]["locator"]["url"], (
        "anyone with the link: public"
    )
    query = {"query": "hotel nights reimbursed in Paris", "query_type": "keyword", "top_k": 5}
    status, hits = await api.call("POST", "/v1/indexes/handbook/query", json_body=query)
    urls = [m["locator"]["url"] for m in hits["matches"]]
    assert status == 200 and not [u for u in urls if seeded.doc in u], "shared with acme.com only"
    status, gone = await api.call("DELETE", f"/v1/connectors/{connected['id']}")
    assert status == 200 and gone["documents_removed"] >= 5


async def test_an_oauth_client_connects(api: LoreApi, google: tuple[FakeGoogle, Seeded]) -> None:
    fake, _ = google
    token = fake.oauth_refresh_token(f"bob@{DOMAIN}", "1//0bob-refresh-token-abcd")
    body = {"kind": "google-drive", "url": fake.drive_url, "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET,
            "refresh_token": token, "token_uri": fake.token_uri}  # fmt: skip
    status, connected = await api.call("POST", "/v1/connectors", json_body=body)
    assert status == 201, connected
    assert connected["account"] == f"Bob Marley (bob@{DOMAIN})"
    assert connected["credentials"] == f"OAuth client {CLIENT_ID}, refresh token …abcd"
    assert CLIENT_SECRET not in str(connected) and token not in str(connected)
    status, refused = await api.call(
        "POST", "/v1/connectors", json_body={**body, "refresh_token": "1//revoked"}
    )
    assert status == 400 and "refused the OAuth client's refresh token" in assert_error(
        refused, "invalid_request_error"
    )
    await api.call("DELETE", f"/v1/connectors/{connected['id']}")


async def test_bodies_that_are_not_a_way_in_are_refused(
    api: LoreApi, google: tuple[FakeGoogle, Seeded]
) -> None:
    fake, _ = google
    key = fake.service_account_key()
    base = {"kind": "google-drive", "url": fake.drive_url}
    for bad, named in [
        ({**base}, "service account"),
        ({**base, "key": key}, "email"),
        ({**base, "key": key, "email": ADA, "client_id": CLIENT_ID}, "service account"),
        ({**base, "token": "x", "email": ADA}, "no token"),
        ({**base, "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET}, "refresh_token"),
        ({"kind": "github", "url": fake.drive_url, "key": key}, "for Google Drive"),
        ({**base, "key": '{"type": "authorized_user"}', "email": ADA}, "not a service account key"),
        ({**base, "key": "not json", "email": ADA}, "not JSON"),
    ]:
        status, body = await api.call("POST", "/v1/connectors", json_body=bad)
        assert status == 400 and named in assert_error(body, "invalid_request_error"), (bad, body)
    assert (await api.call("GET", "/v1/connectors"))[1] == {"connectors": []}

    status, connected = await api.call("POST", "/v1/connectors", json_body={**base, "key": key, "email": ADA})
    attach = f"/v1/connectors/{connected['id']}/attach"
    for bad, named in [
        ({"index": "x", "spaces": ["ENG"]}, "drive_folders"),
        ({"index": "x", "drive_folders": ["Handbook"], "repositories": ["acme/x"]}, "drive_folders"),
        ({"index": "x", "drive_folders": ["Handbook"], "link_sharing": "world"}, "link_sharing"),
        ({"index": "x", "drive_folders": ["bad\u0000name"]}, "not a Drive folder"),
    ]:
        status, body = await api.call("POST", attach, json_body=bad)
        assert status == 400 and named in assert_error(body, "invalid_request_error"), (bad, body)
    status, body = await api.call("POST", attach, json_body={"index": "x", "drive_folders": ["Nope"]})
    assert status == 400 and "no folder Nope" in assert_error(body, "invalid_request_error")
    await api.call("DELETE", f"/v1/connectors/{connected['id']}")


async def test_a_key_whose_token_endpoint_is_not_googles_is_refused_unsent(
    api: LoreApi, google: tuple[FakeGoogle, Seeded]
) -> None:
    fake, _ = google
    before = len(fake.requests.snapshot())
    for elsewhere in ("https://oauth2.googleapis.com.evil.example/token", "http://127.0.0.2:9/token"):
        key = fake.service_account_key(token_uri=elsewhere)
        body = {"kind": "google-drive", "url": fake.drive_url, "key": key, "email": ADA}
        status, refused = await api.call("POST", "/v1/connectors", json_body=body)
        assert status == 400, refused
        assert "not Google's" in assert_error(refused, "invalid_request_error")
    assert len(fake.requests.snapshot()) == before, "no request at all, not even to the API"
    assert (await api.call("GET", "/v1/connectors"))[1] == {"connectors": []}
