"""Lore's MCP server (the SDK's low-level `Server`): the tools of `bot.mcp.tools` and the
documents as resources, for whoever `who` says the request comes from.

This is the MCP surface's error boundary. What Lore refuses on purpose (an index the caller
may not use, a document it cannot read, arguments that do not fit the schema) is a tool
result with `isError` and a sentence saying what to do, as the spec asks, so that the agent
can correct itself; a resource that is not the caller's to read is the spec's "invalid
params" error (-32602, SEP-2164), as unknown as a missing one; anything unexpected is
logged with its traceback and answered with one polite line.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, ValidationError

from bot.mcp import resources
from bot.mcp.bounds import cut_short
from bot.mcp.tools import TOOLS, Lore, refusal
from bot.mcp.who import Principal
from knowledge import KnowledgeError
from storage.records import StorageError

log = logging.getLogger(__name__)

Who = Callable[[ServerRequestContext[Any]], Principal]
"""Who a request comes from: the key its HTTP request was authenticated with, or the local user."""

UNEXPECTED = "Something went wrong on Lore's side (it is in Lore's log); try again, or ask another way."
INSTRUCTIONS = (
    "Lore is the team's shared memory: documents, runbooks, saved Slack threads and crawled sites, "
    "kept in indexes. Search it (search_knowledge) or ask it (ask) before answering questions about "
    "the team's systems, decisions or practices, and cite what it returns. Documents can be read "
    "whole as resources (lore://INDEX/DOC)."
)


def build_server(lore: Lore, who: Who) -> Server[Any]:
    """The MCP server over `lore`; `who` tells each request's principal."""

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        offered = list(TOOLS.values())
        if not await who(ctx).may_add(lore.services):
            offered = [tool for tool in offered if not tool.writes]
        return types.ListToolsResult(tools=[tool.declared() for tool in offered])

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        tool = TOOLS.get(params.name)
        if tool is None:
            raise MCPError(types.INVALID_PARAMS, f"Lore has no tool called {params.name[:100]!r}.")
        principal = who(ctx)
        try:
            args = tool.args.model_validate(params.arguments or {})
        except ValidationError as exc:
            return _error(_invalid(exc))
        try:
            result = await tool.run(lore, principal, args)
        except (KnowledgeError, StorageError) as exc:
            log.info("MCP %s for %s refused: %s", tool.name, principal.label, exc)
            return _error(refusal(exc))
        except Exception:
            log.exception("MCP %s for %s failed", tool.name, principal.label)
            return _error(UNEXPECTED)
        return _result(result)

    async def list_resources(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        try:
            rows, cursor = await resources.page(lore.services, who(ctx), params.cursor if params else None)
        except resources.UnknownResource as exc:
            raise MCPError(types.INVALID_PARAMS, str(exc)) from None
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    uri=resources.uri(row.index.name, row.document.id),
                    name=row.document.name,
                    title=row.document.name,
                    description=f"A document of the {row.index.name} index ({row.document.characters:,} characters).",
                    mime_type="text/markdown",
                )
                for row in rows
            ],
            next_cursor=cursor,
        )

    async def list_templates(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(
            resource_templates=[
                types.ResourceTemplate(
                    uri_template=resources.TEMPLATE,
                    name="document",
                    title="A document of an index",
                    description="A document's text, by its index's name and its id (see list_documents).",
                    mime_type="text/markdown",
                )
            ]
        )

    async def read_resource(
        ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        principal = who(ctx)
        try:
            index, document = await resources.find(lore.services, principal, resources.parse(params.uri))
            read = await lore.services.actions.search.text(
                principal.place, index, document.id, max_chars=lore.max_chars
            )
        except resources.UnknownResource as exc:
            raise MCPError(types.INVALID_PARAMS, str(exc), data={"uri": params.uri[:500]}) from None
        text = read.text if read.complete else f"{read.text} …\n\n_{cut_short('document', lore.max_chars)}_"
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=params.uri, text=text, mime_type="text/markdown")]
        )

    return Server(
        "lore",
        version=_version(),
        title="Lore",
        description="The team's shared memory: search it, ask it, add to it.",
        instructions=INSTRUCTIONS,
        get_tool_input_schema=lambda name: TOOLS[name].args.model_json_schema() if name in TOOLS else None,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
    )


def _result(result: BaseModel) -> types.CallToolResult:
    data = result.model_dump(mode="json")
    text = json.dumps(data, ensure_ascii=False)
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=data)


def _error(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=message)], is_error=True)


def _invalid(exc: ValidationError) -> str:
    """Which arguments are wrong and why (never echoing their values back)."""
    problems = []
    for error in exc.errors()[:5]:
        where = ".".join(str(part) for part in error["loc"]) or "arguments"
        problems.append(f"{where}: {error['msg']}")
    return "Invalid arguments: " + "; ".join(problems) + "."


def _version() -> str:
    try:
        return version("lore-bot")
    except PackageNotFoundError:
        return "0"
