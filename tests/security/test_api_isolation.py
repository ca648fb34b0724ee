"""The HTTP API as an attacker with a key (held attempts, kept): another tenant's key, and a
service key reaching for a private channel's or a person's index, read nothing through any
route; FTS5 query syntax in searches is text, never an error or an injection.

The seeded tenant has Ada's personal index, a public channel index (#general) and a private
one (#secret-plans), each holding one sentence an attacker must never see.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.api.conftest import LoreApi

pytestmark = pytest.mark.asyncio(loop_scope="module")

PRIVATE = ("blue plant pot", "Nimbus in March")  # Ada's personal note; the private channel's plan
PUBLIC = "standup moves to 9:45"


def reads(index: str, question: str) -> list[tuple[str, str, Any]]:
    """Every route that could show an index's content."""
    chat = {"messages": [{"role": "user", "content": question}], "index_name": index}
    return [
        ("GET", "/v1/indexes", None),
        ("GET", f"/v1/indexes/{index}", None),
        ("GET", f"/v1/indexes/{index}/documents?text_chars=500", None),
        ("POST", f"/v1/indexes/{index}/query", {"query": question, "query_type": "hybrid", "top_k": 5}),
        ("POST", f"/v1/indexes/{index}/query", {"query": question, "query_type": "keyword", "top_k": 5}),
        ("POST", "/v1/chat/completions", chat),
        ("POST", "/v1/chat/completions", {**chat, "index_name": None, "index_names": [index, "general"]}),
        ("POST", "/enhanced-chat/completions", chat),
        ("GET", f"/v1/indexes/{index}/sources", None),
    ]


async def sweep(api: LoreApi, key: str, index: str, question: str) -> str:
    """Every response to every read route for `index`, as one text; none may be a 500."""
    seen = []
    for method, path, body in reads(index, question):
        status, answer = await api.call(method, path, key=key, json_body=body)
        assert status < 500, (path, answer)
        seen.append(json.dumps(answer))
    return "\n".join(seen)


@pytest.mark.parametrize("index", ["personal", "general", "secret-plans"])
async def test_another_tenants_key_reads_nothing(api: LoreApi, index: str) -> None:
    text = await sweep(api, "other_tenant", index, "what is the plan, the key, the standup?")
    assert not any(secret in text for secret in (*PRIVATE, PUBLIC)), text


@pytest.mark.parametrize(
    ("index", "question"),
    [("secret-plans", "what is the secret plan?"), ("personal", "where is the spare office key?")],
)
async def test_a_service_key_reads_no_private_or_personal_index(
    api: LoreApi, index: str, question: str
) -> None:
    text = await sweep(api, "service", index, question)
    assert not any(secret in text for secret in PRIVATE), text


async def test_the_public_channel_is_readable_so_the_sweep_can_see(api: LoreApi) -> None:
    """The control: the same sweep does find what the key may read."""
    text = await sweep(api, "service", "general", "when is standup on Mondays?")
    assert PUBLIC in text


FTS5 = [
    '"unbalanced quote',
    "standup NEAR(moves 9:45",
    "standup AND OR NOT",
    "name:general* OR 1=1",
    "^standup",
    "-standup +moves",
    "{standup moves}",
    "standup'); DROP TABLE documents; --",
    "*",
    "\x00standup",
    "standup " * 300,
]


@pytest.mark.parametrize("query", FTS5)
async def test_fts5_syntax_in_a_query_is_plain_text(api: LoreApi, query: str) -> None:
    for kind in ("keyword", "hybrid"):
        status, answer = await api.call(
            "POST", "/v1/indexes/general/query", json_body={"query": query, "query_type": kind, "top_k": 3}
        )
        assert status in (200, 400), answer
        assert PRIVATE[1] not in json.dumps(answer)
    status, answer = await api.call("GET", "/v1/indexes/general/documents", params={"limit": "10"})
    assert status == 200 and answer["documents"], "the documents are still there"


async def test_keyword_search_still_finds_words_after_syntax_is_dropped(api: LoreApi) -> None:
    status, answer = await api.call(
        "POST",
        "/v1/indexes/general/query",
        json_body={"query": 'standup" OR "x', "query_type": "keyword", "top_k": 3},
    )
    assert status == 200
    assert PUBLIC in json.dumps(answer)
