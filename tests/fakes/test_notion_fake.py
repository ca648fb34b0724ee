"""The fake Notion speaks Notion's wire format: checked here with a plain HTTP client, apart
from Lore's connector, against the shapes of Notion's documented examples (the page object,
block children, search, databases and data sources, users, the error object): keys, cursor
pagination (`start_cursor`, `next_cursor`, `has_more`, `page_size` ≤ 100), rich text with its
annotations, what the integration may see (sharing, 404 `object_not_found`), trash, and 429
`rate_limited` with `Retry-After`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from tests.fakes.notion_server import TOKEN, VERSION, FakeNotion, Seeded, seed

HEADERS = {"Authorization": f"Bearer {TOKEN}", "Notion-Version": VERSION}
PAGE_KEYS = {
    # https://developers.notion.com/reference/page: the example page object's keys
    # (`archived` is named `in_trash` from version 2026-03-11 on; `is_archived` and
    # `is_locked` are that version's).
    "object", "id", "created_time", "last_edited_time", "created_by", "last_edited_by", "cover",
    "icon", "parent", "in_trash", "properties", "url", "public_url",
}  # fmt: skip
BLOCK_KEYS = {
    # https://developers.notion.com/reference/block: every block object's keys, then its type's
    "object", "id", "parent", "created_time", "last_edited_time", "created_by", "last_edited_by",
    "has_children", "in_trash", "type",
}  # fmt: skip
ANNOTATIONS = {"bold", "italic", "strikethrough", "underline", "code", "color"}


@pytest.fixture
async def notion() -> AsyncIterator[tuple[FakeNotion, Seeded, aiohttp.ClientSession]]:
    async with FakeNotion() as fake, aiohttp.ClientSession() as http:
        yield fake, seed(fake), http


async def call(
    http: aiohttp.ClientSession, method: str, url: str, body: Any = None, **headers: str
) -> tuple[int, Any, Any]:
    async with http.request(method, url, json=body, headers={**HEADERS, **headers}) as response:
        return response.status, await response.json(), response.headers


async def test_the_token_and_the_version_are_required_with_notions_error_objects(notion: Any) -> None:
    fake, _, http = notion
    status, body, _ = await call(http, "GET", f"{fake.base_url}/v1/users/me", Authorization="Bearer nope")
    assert status == 401 and body["object"] == "error" and body["code"] == "unauthorized"
    assert set(body) == {"object", "status", "code", "message", "request_id"}
    async with http.get(
        f"{fake.base_url}/v1/users/me", headers={"Authorization": f"Bearer {TOKEN}"}
    ) as response:
        assert response.status == 400 and (await response.json())["code"] == "missing_version"
    status, me, _ = await call(http, "GET", f"{fake.base_url}/v1/users/me")
    assert status == 200 and me["object"] == "user" and me["type"] == "bot"
    assert me["bot"]["workspace_name"] == "Acme" and me["bot"]["owner"] == {
        "type": "workspace",
        "workspace": True,
    }


async def test_search_lists_what_is_shared_newest_first_a_page_at_a_time(notion: Any) -> None:
    fake, seeded, http = notion
    url = f"{fake.base_url}/v1/search"
    sort = {"timestamp": "last_edited_time", "direction": "descending"}
    seen: list[Any] = []
    cursor = None
    while True:
        body = {"sort": sort, "page_size": 3, **({"start_cursor": cursor} if cursor else {})}
        status, found, _ = await call(http, "POST", url, body)
        assert status == 200 and found["object"] == "list" and found["type"] == "page_or_data_source"
        assert len(found["results"]) <= 3
        seen += found["results"]
        if not found["has_more"]:
            assert found["next_cursor"] is None
            break
        cursor = found["next_cursor"]
    kinds = {(r["object"], r.get("id")) for r in seen}
    assert ("data_source", seeded.decisions.source_id) in kinds
    assert ("page", seeded.payments_runbook.id) in kinds, "under a shared page: shared too"
    edited = [r["last_edited_time"] for r in seen]
    assert edited == sorted(edited, reverse=True)
    page = next(r for r in seen if r["id"] == seeded.handbook.id)
    assert set(page) == PAGE_KEYS | {"is_archived", "is_locked"}
    assert page["parent"] == {"type": "workspace", "workspace": True}
    title = page["properties"]["title"]["title"][0]
    assert title["plain_text"] == "Engineering Handbook" and set(title["annotations"]) == ANNOTATIONS

    status, wrong, _ = await call(http, "POST", url, {"page_size": 101})
    assert status == 400 and wrong["code"] == "validation_error"
    for bad in ({"property": "title", "value": "page"}, {"last_edited_time": {"after": "2026-01-01"}}):
        status, wrong, _ = await call(http, "POST", url, {"filter": bad})
        assert status == 400 and wrong["code"] == "validation_error", "search filters by object or trash only"
    _, pages, _ = await call(http, "POST", url, {"filter": {"property": "object", "value": "data_source"}})
    assert {r["object"] for r in pages["results"]} == {"data_source"}


async def test_unshared_pages_are_not_found_and_trash_leaves_search(notion: Any) -> None:
    fake, seeded, http = notion
    page_url = f"{fake.base_url}/v1/pages/{seeded.scratch.id}"
    assert (await call(http, "GET", page_url))[0] == 200
    fake.unshare(seeded.scratch.id)
    status, body, _ = await call(http, "GET", page_url)
    assert status == 404 and body["code"] == "object_not_found"
    children = f"{fake.base_url}/v1/blocks/{seeded.scratch.id}/children"
    assert (await call(http, "GET", children))[0] == 404
    fake.trash(seeded.old_notes)
    _, live, _ = await call(http, "POST", f"{fake.base_url}/v1/search", {})
    _, trashed, _ = await call(http, "POST", f"{fake.base_url}/v1/search", {"filter": {"in_trash": True}})
    assert seeded.old_notes.id not in {r["id"] for r in live["results"]}
    assert [r["id"] for r in trashed["results"]] == [seeded.old_notes.id]
    assert trashed["results"][0]["in_trash"] is True


async def test_blocks_children_carry_their_type_and_children_flags(notion: Any) -> None:
    fake, seeded, http = notion
    url = f"{fake.base_url}/v1/blocks/{seeded.payments_runbook.id}/children"
    status, first, _ = await call(http, "GET", url + "?page_size=2")
    assert status == 200 and first["type"] == "block" and first["has_more"] is True
    status, rest, _ = await call(http, "GET", url + f"?page_size=2&start_cursor={first['next_cursor']}")
    blocks = first["results"] + rest["results"]
    assert [b["type"] for b in blocks] == ["heading_2", "paragraph", "toggle"]
    for block in blocks:
        assert set(block) >= BLOCK_KEYS and block["type"] in block
        assert block["parent"] == {"type": "page_id", "page_id": seeded.payments_runbook.id}
    toggle = blocks[2]
    assert (
        toggle["has_children"] is True
        and toggle["toggle"]["rich_text"][0]["plain_text"] == "On-call handover"
    )
    _, inside, _ = await call(http, "GET", f"{fake.base_url}/v1/blocks/{toggle['id']}/children")
    assert "09:30 on Mondays" in inside["results"][0]["paragraph"]["rich_text"][0]["plain_text"]
    assert fake.children_served == [seeded.payments_runbook.id, seeded.payments_runbook.id, toggle["id"]]


async def test_databases_name_their_data_sources_whose_queries_filter_by_edit(notion: Any) -> None:
    fake, seeded, http = notion
    status, database, _ = await call(http, "GET", f"{fake.base_url}/v1/databases/{seeded.decisions.id}")
    assert status == 200 and database["object"] == "database"
    assert database["data_sources"] == [{"id": seeded.decisions.source_id, "name": "Decisions"}]
    query = f"{fake.base_url}/v1/data_sources/{seeded.decisions.source_id}/query"
    _, rows, _ = await call(
        http, "POST", query, {"sorts": [{"timestamp": "last_edited_time", "direction": "descending"}]}
    )
    assert [r["id"] for r in rows["results"]] == [seeded.ledger_decision.id, seeded.queue_decision.id]
    ledger = rows["results"][0]
    assert ledger["parent"] == {
        "type": "data_source_id",
        "data_source_id": seeded.decisions.source_id,
        "database_id": seeded.decisions.id,
    }
    owner = ledger["properties"]["Owner"]
    assert owner["type"] == "people" and owner["people"][0]["id"] == seeded.ada.id
    fake.edit_property(
        seeded.queue_decision, "Status", {"select": {"id": "s2", "name": "Done", "color": "blue"}}
    )
    since = {
        "timestamp": "last_edited_time",
        "last_edited_time": {"on_or_after": seeded.queue_decision.edited.isoformat()},
    }
    _, changed, _ = await call(http, "POST", query, {"filter": since})
    assert [r["id"] for r in changed["results"]] == [seeded.queue_decision.id]


async def test_users_list_people_and_without_the_capability_answer_403(notion: Any) -> None:
    fake, seeded, http = notion
    _, users, _ = await call(http, "GET", f"{fake.base_url}/v1/users")
    ada = next(u for u in users["results"] if u["id"] == seeded.ada.id)
    assert ada == {
        "object": "user",
        "id": seeded.ada.id,
        "type": "person",
        "name": "Ada Lovelace",
        "avatar_url": None,
        "person": {"email": "ada@acme.test"},
    }
    fake.user_capability = False
    status, body, _ = await call(http, "GET", f"{fake.base_url}/v1/users")
    assert status == 403 and body["code"] == "restricted_resource"


async def test_a_rate_limit_answers_429_with_retry_after_then_serves_again(notion: Any) -> None:
    fake, _, http = notion
    fake.rate_limit(2, retry_after="3")
    for _ in range(2):
        status, body, headers = await call(http, "GET", f"{fake.base_url}/v1/users/me")
        assert (status, body["code"], headers["Retry-After"]) == (429, "rate_limited", "3")
    assert (await call(http, "GET", f"{fake.base_url}/v1/users/me"))[0] == 200
    assert [r.status for r in fake.api_requests()] == [429, 429, 200]
