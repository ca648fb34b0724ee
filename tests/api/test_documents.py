"""Documents through the API: file and text uploads with their context fields, listing with
a cursor and a filter, get, delete, size limits; and query_index."""

from __future__ import annotations

import io
import json
from collections.abc import AsyncIterator

import aiohttp
import pytest

from tests.api.conftest import LoreApi
from tests.api.test_auth import assert_error

pytestmark = pytest.mark.asyncio(loop_scope="module")

CONTEXT = {
    "context_type": "technical",
    "content_domain": "api_documentation",
    "document_category": "reference",
}
AUTH_DOC = """# Authentication

Every request to the payments API carries an OAuth bearer token. Tokens expire after one hour;
refresh them with the refresh token at /oauth/token.
"""


def form(data: bytes, filename: str, **fields: str) -> aiohttp.FormData:
    payload = aiohttp.FormData()
    payload.add_field("file", data, filename=filename, content_type="text/markdown")
    for name, value in fields.items():
        payload.add_field(name, value)
    return payload


async def test_upload_a_file_with_its_context(api: LoreApi) -> None:
    await api.create_index("payments")
    fields = {**CONTEXT, "relevance_tags": "auth, oauth", "description": "How clients authenticate."}
    metadata = json.dumps({"team": "payments", "reviewed": True})
    payload = form(AUTH_DOC.encode(), "auth.md", **fields, metadata=metadata, author="ada")
    status, body = await api.call("POST", "/v1/indexes/payments/documents", data=payload)
    assert status == 201, body
    assert body["outcome"] == "added" and body["chunks"] >= 1
    assert body["warnings"] == []
    document = body["document"]
    assert (document["name"], document["author"], document["index"]) == ("auth.md", "ada", "payments")
    meta = document["metadata"]
    assert meta["context_type"] == ["technical"]
    assert meta["relevance_tags"] == ["auth", "oauth"]
    assert meta["description"] == "How clients authenticate."
    assert (meta["team"], meta["reviewed"]) == ("payments", True)


async def test_uploading_the_same_file_again_changes_nothing(api: LoreApi) -> None:
    await api.create_index("again")
    first = form(AUTH_DOC.encode(), "auth.md", **CONTEXT)
    assert (await api.call("POST", "/v1/indexes/again/documents", data=first))[0] == 201
    status, body = await api.call(
        "POST", "/v1/indexes/again/documents", data=form(AUTH_DOC.encode(), "auth.md", **CONTEXT)
    )
    assert status == 200
    assert body["outcome"] == "unchanged"


@pytest.mark.parametrize("missing", ["context_type", "content_domain", "document_category"])
async def test_each_mandatory_context_field_is_named_when_missing(api: LoreApi, missing: str) -> None:
    await api.create_index(f"strict-{missing}")
    fields = {k: v for k, v in CONTEXT.items() if k != missing}
    status, body = await api.call(
        "POST", f"/v1/indexes/strict-{missing}/documents", data=form(b"# x\n\ntext", "x.md", **fields)
    )
    assert status == 400
    assert missing in assert_error(body, "invalid_request_error")
    text = {"name": "x.md", "text": "some text", **fields, missing: " , "}
    status, body = await api.call("POST", f"/v1/indexes/strict-{missing}/documents/text", json_body=text)
    assert status == 400
    assert missing in assert_error(body, "invalid_request_error")


async def test_missing_optional_fields_are_defaults_and_warnings(api: LoreApi) -> None:
    await api.create_index("lenient")
    body = await api.add_text("lenient", "deploy.md", "# Deploy\n\nWe deploy on Tuesdays.")
    assert body["outcome"] == "added"
    assert len(body["warnings"]) == 2
    assert any("relevance_tags" in w for w in body["warnings"])
    assert any("description" in w for w in body["warnings"])
    assert body["document"]["metadata"]["relevance_tags"] == []


async def test_a_file_lore_cannot_read_is_refused_with_a_reason(api: LoreApi) -> None:
    await api.create_index("pictures")
    png = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64
    payload = aiohttp.FormData()
    payload.add_field("file", png, filename="diagram.png", content_type="image/png")
    for name, value in CONTEXT.items():
        payload.add_field(name, value)
    status, body = await api.call("POST", "/v1/indexes/pictures/documents", data=payload)
    assert status == 415
    assert "image" in assert_error(body, "unsupported_media_type")


async def test_an_upload_without_a_file_part_is_a_400(api: LoreApi) -> None:
    payload = aiohttp.FormData()
    for name, value in CONTEXT.items():
        payload.add_field(name, value)
    payload.add_field("other", "x", filename="x.md")
    status, body = await api.call("POST", "/v1/indexes/payments/documents", data=payload)
    assert status == 400
    assert "file" in assert_error(body, "invalid_request_error")


async def test_bodies_over_the_limit_are_refused(api: LoreApi) -> None:
    too_big = json.dumps({"name": "big", "text": "x" * (3 * 1024 * 1024), **CONTEXT}).encode()
    headers = {"Content-Type": "application/json"}
    path = "/v1/indexes/payments/documents/text"
    status, body = await api.call("POST", path, data=io.BytesIO(too_big), headers=headers)
    assert status == 413
    assert "MB" in assert_error(body, "request_too_large")

    async def chunked() -> AsyncIterator[bytes]:  # no Content-Length: refused while reading
        for start in range(0, len(too_big), 256 * 1024):
            yield too_big[start : start + 256 * 1024]

    status, body = await api.call("POST", path, data=chunked(), headers=headers)
    assert status == 413
    assert_error(body, "request_too_large")


async def test_list_pages_with_a_cursor_filters_and_truncates(api: LoreApi) -> None:
    await api.create_index("many")
    for n in range(5):
        author = "ada" if n % 2 == 0 else "grace"
        await api.add_text(
            "many",
            f"note-{n}.md",
            f"# Note {n}\n\n" + f"Paragraph {n} about release trains. " * 20,
            author=author,
        )
    seen: list[str] = []
    cursor = None
    for _ in range(4):
        params = {"limit": "2", "text_chars": "30", **({"cursor": cursor} if cursor else {})}
        status, page = await api.call("GET", "/v1/indexes/many/documents", params=params)
        assert status == 200, page
        seen += [d["name"] for d in page["documents"]]
        assert all(len(d["text"]) <= 30 and d["text_truncated"] for d in page["documents"])
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == [f"note-{n}.md" for n in range(5)]
    params = {"filter": json.dumps({"author": "ada"}), "limit": "10"}
    status, page = await api.call("GET", "/v1/indexes/many/documents", params=params)
    assert [d["name"] for d in page["documents"]] == ["note-0.md", "note-2.md", "note-4.md"]
    assert page["next_cursor"] is None


@pytest.mark.parametrize(
    "params",
    [{"filter": "{oops"}, {"filter": '{"author": {"$regex": "a"}}'}, {"cursor": "abc"}, {"limit": "0"}],
)
async def test_bad_list_parameters_are_400s(api: LoreApi, params: dict[str, str]) -> None:
    await api.add_text("payments", "filter-me.md", "# A\n\ntext to filter")
    status, body = await api.call("GET", "/v1/indexes/payments/documents", params=params)
    assert status == 400
    assert_error(body, "invalid_request_error")


async def test_get_and_delete_a_document(api: LoreApi) -> None:
    await api.create_index("short-lived")
    added = await api.add_text("short-lived", "tmp.md", "# Temporary\n\nThis page will be deleted soon.")
    doc_id = added["document"]["id"]
    status, doc = await api.call("GET", f"/v1/indexes/short-lived/documents/{doc_id}")
    assert status == 200
    assert "deleted soon" in doc["text"] and doc["text_truncated"] is False
    assert (await api.call("GET", f"/v1/indexes/payments/documents/{doc_id}"))[0] == 404  # wrong index
    assert (await api.call("DELETE", f"/v1/indexes/short-lived/documents/{doc_id}"))[0] == 204
    assert (await api.call("GET", f"/v1/indexes/short-lived/documents/{doc_id}"))[0] == 404
    status, page = await api.call("GET", "/v1/indexes/short-lived/documents")
    assert page["documents"] == []


async def test_query_index_by_each_query_type(api: LoreApi) -> None:
    await api.create_index("searchable")
    await api.add_text("searchable", "auth.md", AUTH_DOC, author="ada", relevance_tags=["auth"])
    await api.add_text(
        "searchable", "cake.md", "# Cake\n\nBake the sponge at 180 degrees for 25 minutes.", author="grace"
    )
    for query_type in ("vector", "keyword", "hybrid"):
        body = {"query": "how long do OAuth tokens last?", "query_type": query_type, "top_k": 3}
        status, result = await api.call("POST", "/v1/indexes/searchable/query", json_body=body)
        assert status == 200, result
        best = result["matches"][0]
        assert best["name"] == "auth.md", query_type
        assert "one hour" in best["text"]
        assert best["locator"]["position"] == 0
        assert best["metadata"]["author"] == "ada"
        assert best["time_added"] and "doc_timestamp" in best
        assert (best["similarity"] is None) == (query_type == "keyword")


async def test_query_properties_must_match(api: LoreApi) -> None:
    body = {"query": "OAuth tokens", "properties": {"author": "grace"}}
    status, result = await api.call("POST", "/v1/indexes/searchable/query", json_body=body)
    assert status == 200
    assert {m["name"] for m in result["matches"]} <= {"cake.md"}
    body = {"query": "OAuth tokens", "properties": {"relevance_tags": "auth"}}
    status, result = await api.call("POST", "/v1/indexes/searchable/query", json_body=body)
    assert [m["name"] for m in result["matches"]][:1] == ["auth.md"]


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"query": ""},
        {"query": "x", "query_type": "fuzzy"},
        {"query": "x", "top_k": 0},
        {"query": "x", "properties": {"$or": 1}},
    ],
)
async def test_invalid_queries_are_400s(api: LoreApi, body: dict[str, object]) -> None:
    status, answer = await api.call("POST", "/v1/indexes/searchable/query", json_body=body)
    assert status == 400, answer
    assert_error(answer, "invalid_request_error")
