"""`lore mcp`: Lore's MCP server over stdio, for an agent on this machine (Claude Code, Claude
Desktop, Cursor …), acting as the local user. Over HTTP, `lore serve` and `lore run` serve MCP
at `/mcp` (`mount_mcp`)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import typer

from bot.app.settings import Settings
from bot.cli.common import settings_or_exit

if TYPE_CHECKING:  # not imported by the commands that serve nothing
    from aiohttp import web

    from bot.api.state import ApiState
    from bot.chat.runtime import Runtime

app = typer.Typer()
"""This module's commands; `bot.cli.main` adds them to `lore`."""


@app.command()
def mcp() -> None:
    """Serve MCP over stdio as the local user (for Claude Code, Claude Desktop, Cursor …)"""
    asyncio.run(serve_stdio(settings_or_exit()))


async def serve_stdio(settings: Settings) -> None:
    from bot.chat.runtime import open_runtime
    from bot.mcp import Lore, serve_stdio

    async with open_runtime(settings, serving=True) as runtime:
        await serve_stdio(Lore.of(runtime))


def mount_mcp(web_app: web.Application, runtime: Runtime, api: ApiState) -> None:
    """MCP over Streamable HTTP at `/mcp` beside the HTTP API, with the API's keys and body limit."""
    from bot.mcp import Lore, install_mcp

    install_mcp(web_app, Lore.of(runtime), api.keys, body_limit=api.limits.json_bytes)
