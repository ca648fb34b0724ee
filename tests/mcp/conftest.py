"""MCP through the SDK's own client: over Streamable HTTP to `/mcp` beside the HTTP API (the
real aiohttp application on loopback, as `lore serve` mounts it), or in-process as the local
user (the stdio server's principal, without the pipe).

    async with mcp_client(api, "ada") as client:
        result = await client.call_tool("search_knowledge", {"query": "…"})
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_types import CallToolResult

from bot.app.local import local_dm
from bot.chat.runtime import Runtime
from bot.mcp import Lore, build_server
from bot.mcp.who import Principal
from tests.api.conftest import LoreApi, running_api


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def mcp_api(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[LoreApi]:
    """The API with MCP at /mcp (no model: extractive answers), shared by a test module; the
    seeded keys and indexes of `tests.api.conftest`."""
    async with running_api(tmp_path_factory.mktemp("lore-mcp"), mcp=True) as api:
        yield api


@asynccontextmanager
async def mcp_client(url: str, secret: str | None, *, mode: str = "auto") -> AsyncIterator[Client]:
    """The SDK's client over Streamable HTTP, sending `secret` as its bearer key (or none)."""
    headers = {"Authorization": f"Bearer {secret}"} if secret is not None else None
    async with (
        create_mcp_http_client(headers=headers) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode) as client,
    ):
        yield client


@asynccontextmanager
async def key_client(api: LoreApi, key: str, *, mode: str = "auto") -> AsyncIterator[Client]:
    """`mcp_client` to the API's /mcp with one of its seeded keys (`service`, `ada`, …)."""
    async with mcp_client(api.base_url + "/mcp", getattr(api.keys, key), mode=mode) as client:
        yield client


@asynccontextmanager
async def local_client(runtime: Runtime, *, max_chars: int | None = None) -> AsyncIterator[Client]:
    """In-process, as the local user in their DM (what `lore mcp` serves over stdio), with
    results bounded by `max_chars` instead of the setting if given."""
    principal = Principal.of_actor(await local_dm(runtime.services))
    lore = Lore.of(runtime)
    if max_chars is not None:
        lore = replace(lore, max_chars=max_chars)
    server = build_server(lore, lambda _ctx: principal)
    async with Client(server) as client:
        yield client


def structured(result: CallToolResult) -> dict[str, Any]:
    """A successful call's structured result, checked against its text twin."""
    assert not result.is_error, result.content
    assert isinstance(result.structured_content, dict)
    text = result.content[0]
    assert text.type == "text" and json.loads(text.text) == result.structured_content
    return result.structured_content


def refusal(result: CallToolResult) -> str:
    """A refused call's sentence."""
    assert result.is_error, result.structured_content
    text = result.content[0]
    assert text.type == "text"
    return text.text


def write_docs(folder: Path) -> Path:
    """A small folder of Markdown for `lore ingest`: one fact each, named by its file."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "rollback.md").write_text(
        "# Rollback\n\nTo roll back a deploy, run `deployctl revert --to previous` from the bastion host. "
        "The release captain announces it in #ops first.\n"
    )
    (folder / "oncall.md").write_text(
        "# On-call\n\nThe on-call engineer acknowledges a page within five minutes and hands over the "
        "pager every Monday at 10:00.\n"
    )
    return folder
