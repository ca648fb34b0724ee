"""Sites and indexing jobs through the API, with jobs running in the server's process
against a loopback site: attach (a job id back), follow the log as JSON lines until the
job ends, status, refresh, schedule, cancel, detach; and who may see or touch a job."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from tests.api.conftest import LoreApi, running_api
from tests.api.test_auth import assert_error
from tests.support.site import Site

pytestmark = pytest.mark.asyncio(loop_scope="module")
Json = dict[str, Any]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def crawling_api(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[LoreApi]:
    async with running_api(
        tmp_path_factory.mktemp("lore-api-sites"),
        lore_jobs_in_process=True,
        lore_crawl_allow="127.0.0.1",
        lore_crawl_delay_seconds=0.02,
        lore_crawl_concurrency=1,
    ) as api:
        yield api


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def site() -> AsyncIterator[Site]:
    async with Site(pages=8) as running:
        yield running


async def follow(api: LoreApi, job_id: int, **params: str) -> list[Json]:
    """The job's log stream, read to its end, one decoded JSON object per line."""
    url = f"{api.base_url}/v1/jobs/{job_id}/log"
    headers = {"Authorization": f"Bearer {api.keys.service}"}
    async with api.http.get(url, headers=headers, params=params) as response:
        assert response.status == 200, await response.text()
        assert response.content_type == "application/x-ndjson"
        return [json.loads(line) async for line in response.content if line.strip()]


async def attach(api: LoreApi, index: str, urls: list[str], **extra: Any) -> Json:
    status, body = await api.call("POST", f"/v1/indexes/{index}/sources", json_body={"urls": urls, **extra})
    assert status == 202, body
    return dict(body)


async def test_a_site_is_attached_crawled_and_followed_to_its_end(crawling_api: LoreApi, site: Site) -> None:
    api = crawling_api
    await api.create_index("handbook")
    attached = await attach(api, "handbook", [site.url("/docs/")], schedule="every 6 hours")
    source, job = attached["source"], attached["job"]
    assert source["name"] == "127.0.0.1/docs" and source["schedule"] == "every 6 hours"
    assert source["start_urls"] == [site.url("/docs/")]
    assert job["index"] == "handbook" and job["source_id"] == source["id"] and job["trigger"] == "manual"

    stream = await follow(api, job["id"])
    lines, last = stream[:-1], stream[-1]
    assert all(item["type"] == "line" for item in lines)
    assert [item["id"] for item in lines] == sorted(item["id"] for item in lines)
    messages = [item["message"] for item in lines]
    assert messages[0] == "queued: manual crawl of 127.0.0.1/docs"
    assert f"added: {site.url('/docs/page-4')} (1 chunk)" in messages
    assert last["type"] == "job" and last["job"]["state"] == "succeeded" and last["job"]["finished"]
    assert last["job"]["counters"]["documents_added"] == 10

    status, status_body = await api.call("GET", f"/v1/jobs/{job['id']}")
    assert status == 200 and status_body == last["job"]
    status, listed = await api.call("GET", "/v1/indexes/handbook/sources")
    assert status == 200
    [row] = listed["sources"]
    assert row["id"] == source["id"] and row["active_job_id"] is None and row["last_refresh_at"]
    status, info = await api.call("GET", "/v1/indexes/handbook")
    assert (info["documents"], info["last_job"]["id"]) == (10, job["id"])

    query = {"query": "some text about page 4", "query_type": "keyword", "top_k": 1}
    status, found = await api.call("POST", "/v1/indexes/handbook/query", json_body=query)
    assert status == 200 and found["matches"][0]["locator"]["url"] == site.url("/docs/page-4")

    resumed = await follow(api, job["id"], after=str(lines[-1]["id"]))
    assert [item["type"] for item in resumed] == ["job"]


async def test_refresh_schedule_and_detach(crawling_api: LoreApi, site: Site) -> None:
    api = crawling_api
    await api.create_index("refreshed")
    first = await attach(api, "refreshed", [site.url("/docs/")])
    await follow(api, first["job"]["id"])
    again = await attach(api, "refreshed", [site.url("/docs/")])
    assert again["source"]["id"] == first["source"]["id"], "the same start URLs attach once"
    await follow(api, again["job"]["id"])
    source = f"/v1/indexes/refreshed/sources/{first['source']['id']}"

    status, job = await api.call("POST", source + "/refresh")
    assert status == 202 and job["trigger"] == "refresh"
    ended = (await follow(api, job["id"]))[-1]["job"]
    assert ended["counters"]["documents_unchanged"] == 10 and ended["counters"].get("chunks", 0) == 0

    status, changed = await api.call("PATCH", source, json_body={"schedule": "Weekly"})
    assert status == 200 and changed["schedule"] == "weekly"
    status, body = await api.call("PATCH", source, json_body={"schedule": "fortnightly"})
    assert status == 400 and "schedule: “fortnightly” is not a schedule" in assert_error(
        body, "invalid_request_error"
    )

    status, detached = await api.call("DELETE", source)
    assert status == 200 and detached == {"documents_removed": 10}
    status, listed = await api.call("GET", "/v1/indexes/refreshed/sources")
    assert listed == {"sources": []}
    status, info = await api.call("GET", "/v1/indexes/refreshed")
    assert info["documents"] == 0
    status, body = await api.call("DELETE", source)
    assert status == 404 and "no source" in assert_error(body, "not_found_error")


async def test_a_running_job_is_cancelled_and_keeps_what_it_indexed(crawling_api: LoreApi) -> None:
    api = crawling_api
    await api.create_index("cancelled")
    async with Site(pages=60) as big:
        attached = await attach(api, "cancelled", [big.url("/docs/")])
        job_id = attached["job"]["id"]
        snapshot = await follow(api, job_id, follow="false")  # returns at once, job under way
        assert snapshot[-1]["job"]["finished"] is False
        status, cancelled = await api.call("POST", f"/v1/jobs/{job_id}/cancel")
        assert status == 202 and cancelled["cancel_requested"] is True
        ended = (await follow(api, job_id))[-1]["job"]
    assert ended["state"] == "cancelled"
    status, info = await api.call("GET", "/v1/indexes/cancelled")
    assert info["documents"] == ended["counters"].get("documents_added", 0) < 62
    status, again = await api.call("POST", f"/v1/jobs/{job_id}/cancel")
    assert status == 202 and again["state"] == "cancelled", "a finished job is left as it is"


async def test_refusals_and_what_other_keys_see(crawling_api: LoreApi, site: Site) -> None:
    api = crawling_api
    await api.create_index("guarded")
    status, body = await api.call(
        "POST", "/v1/indexes/guarded/sources", json_body={"urls": ["http://10.1.2.3/wiki/"]}
    )
    assert status == 400
    message = assert_error(body, "invalid_request_error")
    assert "private network" in message and "LORE_CRAWL_ALLOW" in message
    for bad, named in [({"urls": []}, "urls"), ({"urls": ["x"], "max_pages": 0}, "max_pages"), ({}, "urls")]:
        status, body = await api.call("POST", "/v1/indexes/guarded/sources", json_body=bad)
        assert status == 400 and named in assert_error(body, "invalid_request_error")

    status, body = await api.call(
        "POST", "/v1/indexes/general/sources", json_body={"urls": [site.url("/docs/")]}
    )
    assert status == 403, "a channel's index is changed from its channel only"

    personal = api.indexes["personal"]
    source = await api.services.jobs.attach_site(personal, [site.url("/docs/")])
    job = await api.services.jobs.start_indexing_job(personal, source)
    status, mine = await api.call("GET", f"/v1/jobs/{job.id}", key="ada")
    assert status == 200 and mine["index"] == personal.name
    for key in ("service", "other_tenant"):
        for method, path in [("GET", ""), ("GET", "/log"), ("POST", "/cancel")]:
            status, body = await api.call(method, f"/v1/jobs/{job.id}{path}", key=key)
            assert status == 404, (key, path)
            assert assert_error(body, "not_found_error") == f"There is no indexing job {job.id}."
    status, body = await api.call("GET", "/v1/jobs/99999999999999999999")
    assert status == 404
    await follow_as(api, job.id, "ada")


async def follow_as(api: LoreApi, job_id: int, key: str) -> None:
    """Let the personal job finish before the module's server stops."""
    url = f"{api.base_url}/v1/jobs/{job_id}/log"
    async with api.http.get(url, headers={"Authorization": f"Bearer {getattr(api.keys, key)}"}) as response:
        assert response.status == 200
        assert b'"type": "job"' in await response.read()
