"""Deeply nested JSON (finding 13): a body, a metadata field, a filter or search properties
nested thousands deep are a 400 naming the problem, never a 500 (a RecursionError)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
import pytest_asyncio

from knowledge.search.filters import MAX_DEPTH, FilterError, matches
from tests.api.conftest import LoreApi, running_api

pytestmark = pytest.mark.asyncio(loop_scope="module")

DEEP = 100_000


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def api(tmp_path_factory: Any) -> AsyncIterator[LoreApi]:
    async with running_api(tmp_path_factory.mktemp("lore-api-bodies")) as running:
        status, _ = await running.call("POST", "/v1/indexes", json_body={"name": "nested"})
        assert status == 201
        await running.add_text("nested", "n.md", "# Nested\n\nThe nest holds three blue eggs.")
        yield running


def nested_list(depth: int) -> str:
    return "[" * depth + "]" * depth


def nested_filter(depth: int) -> str:
    return '{"$and": [' * depth + '{"author": "ada"}' + "]}" * depth


async def raw(api: LoreApi, method: str, path: str, body: str) -> tuple[int, Any]:
    return await api.call(method, path, data=body.encode(), headers={"Content-Type": "application/json"})


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/v1/indexes"),
        ("POST", "/v1/indexes/nested/query"),
        ("POST", "/v1/indexes/nested/documents/text"),
        ("POST", "/v1/chat/completions"),
        ("POST", "/enhanced-chat/completions"),
        ("POST", "/v1/indexes/nested/sources"),
    ],
)
async def test_a_deeply_nested_body_is_a_400(api: LoreApi, method: str, path: str) -> None:
    status, body = await raw(api, method, path, '{"name": ' + nested_list(DEEP) + "}")
    assert status == 400, body
    assert body["error"]["type"] == "invalid_request_error"


async def test_deeply_nested_search_properties_are_a_400(api: LoreApi) -> None:
    properties = nested_filter(5_000)
    body = '{"query": "eggs", "query_type": "keyword", "properties": ' + properties + "}"
    status, answer = await raw(api, "POST", "/v1/indexes/nested/query", body)
    assert status == 400, answer


async def test_deeply_nested_metadata_is_a_400(api: LoreApi) -> None:
    body = {
        "name": "meta.md",
        "text": "Metadata nest.",
        "context_type": "technical",
        "content_domain": "engineering",
        "document_category": "handbook",
    }
    text = json.dumps(body)[:-1] + ', "metadata": {"deep": ' + nested_list(5_000) + "}}"
    status, answer = await raw(api, "POST", "/v1/indexes/nested/documents/text", text)
    assert status == 400, answer
    form = {
        "file": b"# Meta\n\nA file.",
        "context_type": "technical",
        "content_domain": "engineering",
        "document_category": "handbook",
        "metadata": '{"deep": ' + nested_list(5_000) + "}",
    }
    data = aiohttp.FormData()
    for name, value in form.items():
        if isinstance(value, bytes):
            data.add_field(name, value, filename="meta.md", content_type="text/markdown")
        else:
            data.add_field(name, value)
    status, answer = await api.call("POST", "/v1/indexes/nested/documents", data=data)
    assert status == 400, answer


async def test_a_nested_filter_within_the_length_limit_still_works(api: LoreApi) -> None:
    """Held: filters nested as deep as 400 characters allow are answered."""
    status, answer = await api.call(
        "GET", "/v1/indexes/nested/documents", params={"filter": nested_filter(15)}
    )
    assert status == 200, answer


async def test_filters_nested_past_the_limit_are_a_filter_error() -> None:
    """The knowledge layer refuses deep filters itself, whoever calls it."""
    condition: dict[str, Any] = {"author": "ada"}
    for _ in range(MAX_DEPTH + 1):
        condition = {"$and": [condition]}
    with pytest.raises(FilterError):
        matches({"author": "ada"}, condition)
    for _ in range(5_000):
        condition = {"$or": [condition]}
    with pytest.raises(FilterError):
        matches({"author": "ada"}, condition)
