"""MCP over Streamable HTTP at /mcp, through the SDK's own client: who may see what is the HTTP
API's rule (API keys, tenants, personal indexes), and requests without a valid key never
reach a tool."""

from __future__ import annotations

import io
import json

import aiohttp
import pytest
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from bot.app.keys import ApiKeys
from tests.api.conftest import TENANT, LoreApi
from tests.mcp.conftest import key_client, mcp_client, refusal, structured

pytestmark = pytest.mark.asyncio(loop_scope="module")

TOOLS = {"search_knowledge", "ask", "list_indexes", "list_documents", "add_document", "add_url"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "curl", "version": "1"},
    },
}


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_tools_are_listed_typed_and_described(mcp_api: LoreApi, mode: str) -> None:
    async with key_client(mcp_api, "ada", mode=mode) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.description and len(tool.description) > 80, tool.name
        assert tool.input_schema["type"] == "object" and tool.output_schema is not None
        assert tool.input_schema.get("additionalProperties") is False
        writes = tool.name.startswith("add_")
        assert tool.annotations is not None and tool.annotations.read_only_hint is (not writes)
    search = tools["search_knowledge"].input_schema
    assert search["required"] == ["query"] and search["properties"]["k"]["type"] == "integer"
    assert "passages" in tools["search_knowledge"].output_schema["properties"]


async def test_a_user_key_finds_its_own_note_and_public_channels_never_a_private_one(
    mcp_api: LoreApi,
) -> None:
    async with key_client(mcp_api, "ada") as client:
        mine = structured(await client.call_tool("search_knowledge", {"query": "spare office key"}))
        everything = structured(
            await client.call_tool("search_knowledge", {"query": "standup secret plan", "k": 50})
        )
        asked = structured(await client.call_tool("ask", {"question": "Where is the spare office key?"}))
    top = mine["passages"][0]
    assert "blue plant pot" in top["text"]
    assert top["index"] == "personal" and top["resource"] == "lore://personal/" + str(top["document_id"])
    found = " ".join(p["text"] for p in everything["passages"])
    assert "standup moves to 9:45" in found  # the public channel's index
    assert "Nimbus" not in found  # a private channel's index, never from a key
    assert "blue plant pot" in asked["answer"] and asked["citations"][0]["document"] == "personal.md"


async def test_a_key_of_another_user_cannot_search_that_users_personal_index(mcp_api: LoreApi) -> None:
    bob = ApiKeys(mcp_api.services.db).create(TENANT, "bob's laptop", user="UBOB").secret
    for secret in (bob, mcp_api.keys.service):
        async with mcp_client(mcp_api.base_url + "/mcp", secret) as client:
            named = await client.call_tool(
                "search_knowledge", {"query": "spare office key", "indexes": ["personal"]}
            )
            anywhere = structured(
                await client.call_tool("search_knowledge", {"query": "spare office key plant pot"})
            )
            asked = structured(await client.call_tool("ask", {"question": "where is the spare office key?"}))
            listed = structured(await client.call_tool("list_indexes", {}))
            resources = (await client.list_resources()).resources
            with pytest.raises(MCPError) as unknown:
                await client.read_resource(f"lore://personal/{mcp_api.indexes['personal'].id}")
            with pytest.raises(MCPError):
                await client.read_resource(_ada_note_uri(mcp_api))
        assert "blue plant pot" not in json.dumps(named.model_dump())
        assert all("blue plant pot" not in p["text"] for p in anywhere["passages"])
        assert "blue plant pot" not in json.dumps(asked)
        assert all(i["scope"] != "personal" or i["documents"] == 0 for i in listed["indexes"])
        assert all(r.name != "personal.md" for r in resources)
        assert unknown.value.error.code == INVALID_PARAMS


async def test_another_tenants_key_reaches_nothing_of_this_tenant(mcp_api: LoreApi) -> None:
    async with key_client(mcp_api, "other_tenant") as client:
        offered = {tool.name for tool in (await client.list_tools()).tools}
        named = refusal(
            await client.call_tool("search_knowledge", {"query": "standup", "indexes": ["general"]})
        )
        documents = refusal(await client.call_tool("list_documents", {"index": "general"}))
        listed = structured(await client.call_tool("list_indexes", {}))
        asked = structured(await client.call_tool("ask", {"question": "When is standup on Mondays?"}))
        added = refusal(
            await client.call_tool("add_document", {"index": "general", "name": "x.md", "text": "x"})
        )
        with pytest.raises(MCPError) as unknown:
            await client.read_resource(_ada_note_uri(mcp_api))
    assert "I don't know an index called 'general'" in named and "general" in documents and "general" in added
    assert listed["indexes"] == []
    assert (
        asked["abstained"] and "no index you may search" in asked["answer"] and "9:45" not in asked["answer"]
    )
    assert offered == TOOLS - {"add_document", "add_url"}  # its tenant has no index it may add to
    assert unknown.value.error.code == INVALID_PARAMS


@pytest.mark.parametrize(
    ("header", "error"),
    [
        (None, None),
        ("Basic dXNlcjpwYXNz", None),
        ("Bearer ", None),
        ("Bearer lore_not-a-real-key", "invalid_token"),
        ("revoked", "invalid_token"),
    ],
)
async def test_no_key_or_a_bad_one_is_refused_with_401_and_a_challenge(
    mcp_api: LoreApi, header: str | None, error: str | None
) -> None:
    headers = {"Accept": "application/json, text/event-stream"}
    if header is not None:
        headers["Authorization"] = f"Bearer {mcp_api.keys.revoked}" if header == "revoked" else header
    async with mcp_api.http.post(mcp_api.base_url + "/mcp", json=INITIALIZE, headers=headers) as response:
        body = await response.json()
        challenge = response.headers["WWW-Authenticate"]
        assert response.status == 401
    assert challenge.startswith('Bearer realm="lore"')
    if error is None:  # RFC 6750 §3.1: no error code when no credentials were sent
        assert challenge == 'Bearer realm="lore"'
        assert "lore api-key create" in body["error_description"]
    else:
        assert f'error="{error}"' in challenge and body["error"] == error


@pytest.mark.parametrize("secret", [None, "revoked"])
async def test_the_sdk_client_without_a_valid_key_gets_nothing(mcp_api: LoreApi, secret: str | None) -> None:
    key = mcp_api.keys.revoked if secret else None
    with pytest.raises(Exception) as refused:  # the SDK surfaces the 401 from its transport's task group
        async with mcp_client(mcp_api.base_url + "/mcp", key) as client:
            await client.list_tools()
    assert "error response" in repr(refused.value)


async def test_a_huge_k_is_capped(mcp_api: LoreApi) -> None:
    await mcp_api.create_index("many-notes")
    for n in range(60):
        await mcp_api.add_text(
            "many-notes", f"note-{n}.md", f"Note {n}: the build cache lives on volume {n}."
        )
    async with key_client(mcp_api, "service") as client:
        result = structured(
            await client.call_tool(
                "search_knowledge", {"query": "build cache volume", "indexes": ["many-notes"], "k": 10**12}
            )
        )
    assert 0 < len(result["passages"]) <= 50
    assert any("50" in notice and "k=" in notice for notice in result["notices"])


async def test_a_key_adds_where_it_may_and_reads_it_back(mcp_api: LoreApi) -> None:
    await mcp_api.create_index("mcp-handbook")
    text = "# Deploys\n\nDeploys happen on Tuesdays and Thursdays, never on Fridays.\n"
    async with key_client(mcp_api, "service") as client:
        added = structured(
            await client.call_tool(
                "add_document", {"index": "mcp-handbook", "name": "deploys.md", "text": text}
            )
        )
        again = structured(
            await client.call_tool(
                "add_document", {"index": "mcp-handbook", "name": "deploys.md", "text": text}
            )
        )
        found = structured(
            await client.call_tool(
                "search_knowledge", {"query": "which days are deploys", "indexes": ["mcp-handbook"]}
            )
        )
        read = await client.read_resource(added["resource"])
        channel = refusal(
            await client.call_tool("add_document", {"index": "general", "name": "x.md", "text": "x"})
        )
        page = refusal(
            await client.call_tool("add_document", {"index": "mcp-handbook", "url": "http://127.0.0.1:9/"})
        )
        site = refusal(
            await client.call_tool("add_url", {"index": "mcp-handbook", "url": "http://10.0.0.1/docs/"})
        )
    assert added["outcome"] == "added" and again["outcome"] == "unchanged"
    assert found["passages"][0]["document"] == "deploys.md" and found["passages"][0]["heading"] == "Deploys"
    assert "never on Fridays" in read.contents[0].text
    assert "from its own channel" in channel
    assert "loopback" in page and "LORE_CRAWL_ALLOW" in page  # refused before any connection
    assert "can't crawl" in site


async def test_invalid_arguments_are_a_tool_error_naming_the_field(mcp_api: LoreApi) -> None:
    async with key_client(mcp_api, "ada") as client:
        missing = refusal(await client.call_tool("search_knowledge", {}))
        extra = refusal(await client.call_tool("search_knowledge", {"query": "x", "topk": 3}))
        negative = refusal(await client.call_tool("search_knowledge", {"query": "x", "k": -1}))
        both = refusal(await client.call_tool("add_document", {"text": "x", "url": "https://example.com/"}))
        bad_filter = refusal(
            await client.call_tool("search_knowledge", {"query": "x", "filters": {"$or": "not a list"}})
        )
        with pytest.raises(MCPError) as unknown:
            await client.call_tool("drop_everything", {})
    assert "query" in missing and "topk" in extra and "k" in negative
    assert "either `text`" in both and bad_filter.startswith("Filters:")
    assert unknown.value.error.code == INVALID_PARAMS


async def test_a_body_over_the_limit_is_refused_before_it_is_read(mcp_api: LoreApi) -> None:
    big = io.BytesIO(json.dumps({**INITIALIZE, "padding": "x" * (3 * 1024 * 1024)}).encode())
    headers = {
        "Authorization": f"Bearer {mcp_api.keys.ada}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    async with mcp_api.http.post(mcp_api.base_url + "/mcp", data=big, headers=headers) as response:
        assert response.status == 413


def _ada_note_uri(api: LoreApi) -> str:
    return f"lore://personal/{_first_document(api, 'personal')}"


def _first_document(api: LoreApi, index: str) -> int:
    [document] = api.services.documents.list_ready(api.indexes[index].id)
    return document.id


async def test_every_request_checks_its_own_key(mcp_api: LoreApi) -> None:
    """Keys are checked per request, not per session: revoking one stops it mid-conversation."""
    issued = ApiKeys(mcp_api.services.db).create(TENANT, "short-lived")
    async with mcp_client(mcp_api.base_url + "/mcp", issued.secret, mode="legacy") as client:
        assert structured(await client.call_tool("list_indexes", {}))["indexes"]
        ApiKeys(mcp_api.services.db).revoke(str(issued.key.id))
        with pytest.raises(MCPError):
            await client.call_tool("list_indexes", {})
    async with aiohttp.ClientSession() as http:
        headers = {
            "Authorization": f"Bearer {issued.secret}",
            "Accept": "application/json, text/event-stream",
        }
        async with http.post(mcp_api.base_url + "/mcp", json=INITIALIZE, headers=headers) as response:
            assert response.status == 401


@pytest.mark.parametrize("depth", [40, 100_000])
async def test_filters_nested_deep_are_refused_never_a_crash(mcp_api: LoreApi, depth: int) -> None:
    deep = '{"$or": [' * depth + "{}" + "]}" * depth
    call = '{"name": "search_knowledge", "arguments": {"query": "standup", "filters": ' + deep + "}}"
    body = '{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": ' + call + "}"
    headers = {
        "Authorization": f"Bearer {mcp_api.keys.ada}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-11-25",
    }
    sent = io.BytesIO(body.encode())
    async with mcp_api.http.post(mcp_api.base_url + "/mcp", data=sent, headers=headers) as response:
        answer = await response.json()
    if depth > 1000:  # past the JSON parser's depth: the protocol's parse error, as a 400
        assert response.status == 400 and answer["error"]["code"] == -32700
    else:  # parsed, and refused by the filter's own depth limit, as a tool error
        assert response.status == 200 and answer["result"]["isError"] is True
        assert "nest at most" in answer["result"]["content"][0]["text"]
    async with key_client(mcp_api, "ada") as client:  # and the server goes on answering
        assert structured(await client.call_tool("list_indexes", {}))["indexes"]
