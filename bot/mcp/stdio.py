"""MCP over stdio (`lore mcp`), for an agent on this machine: it acts as the CLI's local user,
in their DM with Lore (its personal index and the indexes enabled there are searched when
the agent names none), as `lore ask` does. Standard output carries the protocol alone;
logs go to standard error."""

from __future__ import annotations

from mcp.server.stdio import stdio_server

from bot.app.local import local_dm
from bot.mcp.server import build_server
from bot.mcp.tools import Lore
from bot.mcp.who import Principal


async def serve_stdio(lore: Lore) -> None:
    """Serve MCP on this process's stdin and stdout until the client closes them."""
    principal = Principal.of_actor(await local_dm(lore.services))
    server = build_server(lore, lambda _ctx: principal)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())
