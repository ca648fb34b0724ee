"""Lore as an MCP server: the team's memory inside Claude, Cursor and other agents.

One more thin surface over the use cases (`bot.app.actions`): tools to search, ask, list and
add (`tools`), documents as resources (`resources`), over stdio as the local user (`stdio`,
`lore mcp`) and over Streamable HTTP at `/mcp` with API keys (`http`, mounted by `lore serve`
and by `lore run` in HTTP mode).
"""

from __future__ import annotations

from bot.mcp.http import install_mcp
from bot.mcp.server import build_server
from bot.mcp.stdio import serve_stdio
from bot.mcp.tools import TOOLS, Lore

__all__ = ["TOOLS", "Lore", "build_server", "install_mcp", "serve_stdio"]
