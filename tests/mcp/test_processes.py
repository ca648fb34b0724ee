"""The real processes, through the SDK's own client: `lore mcp` over stdio as the local user,
and MCP over Streamable HTTP at /mcp of `lore serve` and of `lore run` in HTTP mode, each
answering from a folder `lore ingest` added."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import aiohttp
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from typer.testing import CliRunner

from bot.app.local import local_user_name
from bot.cli.main import app
from tests.fakes.slack_server import FakeSlack
from tests.mcp.conftest import mcp_client, refusal, structured, write_docs
from tests.support.lore_run import BOT, TEAM, TOKEN, lore_run
from tests.support.ports import free_port

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio]

LORE = str(Path(sys.executable).with_name("lore"))
QUESTION = "How do I roll back a deploy?"
FACT = "deployctl revert --to previous"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A LORE_HOME with the docs folder ingested by `lore ingest`, as the local user."""
    monkeypatch.chdir(tmp_path)  # no .env from the developer's checkout
    monkeypatch.setenv("LORE_HOME", str(tmp_path / "home"))
    ingested = lore("ingest", str(write_docs(tmp_path / "docs")))
    assert "2 added or updated" in ingested
    return tmp_path / "home"


def lore(*args: str) -> str:
    """A `lore` command in this process; its output."""
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.stdout


def secret(*args: str) -> str:
    """The secret `lore api-key create ARGS` prints."""
    return lore("api-key", "create", *args).splitlines()[1]


def environment(home: Path) -> dict[str, str]:
    kept = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SLACK_", "OPENAI_", "LORE_", "DATABASE_", "CHROMA_"))
    }
    return {**kept, "LORE_HOME": str(home), "ANONYMIZED_TELEMETRY": "False"}


async def test_lore_mcp_over_stdio_answers_the_local_user_with_a_citation(home: Path) -> None:
    parameters = StdioServerParameters(
        command=LORE,
        args=["mcp"],
        env={"LORE_HOME": str(home), "ANONYMIZED_TELEMETRY": "False"},
        cwd=home.parent,
    )
    with (home.parent / "lore-mcp.log").open("w") as log:
        async with Client(stdio_client(parameters, errlog=log)) as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            answer = structured(await client.call_tool("ask", {"question": QUESTION}))
            read = await client.read_resource(answer["citations"][0]["resource"])
    assert {"search_knowledge", "ask", "list_indexes", "list_documents", "add_document", "add_url"} <= tools
    assert FACT in answer["answer"], answer
    assert (
        answer["citations"][0]["document"] == "rollback.md" and answer["citations"][0]["index"] == "personal"
    )
    assert FACT in read.contents[0].text


async def test_lore_serve_answers_a_user_key_and_keeps_that_users_index_from_others(home: Path) -> None:
    mine = secret("--name", "laptop", "--user", local_user_name())
    bob = secret("--name", "bob", "--user", "UBOB")
    async with serving(home, "serve", "--host", "127.0.0.1") as base:
        url = base + "/mcp"
        async with mcp_client(url, mine) as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            answer = structured(await client.call_tool("ask", {"question": QUESTION}))
            huge = structured(
                await client.call_tool("search_knowledge", {"query": "deploy pager", "k": 10**9})
            )
        async with mcp_client(url, bob) as client:
            named = refusal(
                await client.call_tool("search_knowledge", {"query": "roll back", "indexes": ["personal"]})
            )
            anywhere = structured(await client.call_tool("search_knowledge", {"query": "roll back a deploy"}))
        async with aiohttp.ClientSession() as http, http.post(url, json={}) as response:
            refused = response.status, response.headers.get("WWW-Authenticate")
    assert "ask" in tools
    assert FACT in answer["answer"] and answer["citations"][0]["document"] == "rollback.md"
    assert 0 < len(huge["passages"]) <= 50 and any("k=1,000,000,000" in n for n in huge["notices"])
    assert "I don't know an index called 'personal'" in named
    assert all(FACT not in p["text"] for p in anywhere["passages"])
    assert refused == (401, 'Bearer realm="lore"')


async def test_lore_run_in_http_mode_serves_mcp_beside_slack(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LORE_HOME", str(tmp_path))
    key = secret("--name", "ci", "--tenant", TEAM)
    authorized = {"Authorization": f"Bearer {key}"}
    async with FakeSlack(TOKEN, TEAM, BOT) as slack, lore_run(tmp_path, slack) as base:
        async with aiohttp.ClientSession() as http:
            async with http.post(base + "/mcp", json={}) as response:
                assert response.status == 401
            async with http.post(
                base + "/v1/indexes", json={"name": "handbook"}, headers=authorized
            ) as response:
                assert response.status == 201
        async with mcp_client(base + "/mcp", key) as client:
            text = "# Rollback\n\nTo roll back a deploy, run `deployctl revert --to previous`.\n"
            added = structured(
                await client.call_tool(
                    "add_document", {"index": "handbook", "name": "rollback.md", "text": text}
                )
            )
            found = structured(await client.call_tool("search_knowledge", {"query": "roll back a deploy"}))
    assert added["outcome"] == "added"
    assert FACT in found["passages"][0]["text"] and found["passages"][0]["index"] == "handbook"


@asynccontextmanager
async def serving(home: Path, *args: str) -> AsyncIterator[str]:
    """`lore ARGS --port P` in a process of its own; its base URL once /healthz answers."""
    port = free_port()
    with (home.parent / "lore-serve.log").open("ab") as log:
        process = await asyncio.create_subprocess_exec(
            LORE, *args, "--port", str(port), env=environment(home), cwd=home.parent, stdout=log, stderr=log
        )
        base = f"http://127.0.0.1:{port}"
        try:
            async with asyncio.timeout(90), aiohttp.ClientSession() as http:
                while process.returncode is None:
                    try:
                        async with http.get(base + "/healthz") as response:
                            if response.status == 200:
                                break
                    except aiohttp.ClientConnectionError:
                        await asyncio.sleep(0.2)
            assert process.returncode is None, (home.parent / "lore-serve.log").read_text()
            yield base
        finally:
            if process.returncode is None:
                process.terminate()
                await asyncio.wait_for(process.wait(), 60)
