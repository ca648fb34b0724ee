"""MCP over Streamable HTTP at `/mcp`, on the aiohttp application `lore serve` and `lore run`
(HTTP mode) serve: authenticated with Lore's API keys, acting with the key's user and rights.

The SDK's session manager answers each request (stateless, JSON responses: any process
behind a load balancer can answer any request, and no session outlives a request). In front
of it, a small aiohttp handler checks `Authorization: Bearer lore_…` the way the HTTP API
does (`bot.app.keys`) and refuses what the spec's authorization section says to refuse with
401 and a `WWW-Authenticate` challenge (RFC 6750): no key, an unknown key, a revoked one.
The request then reaches the SDK through `bot.mcp.asgi`, carrying its principal.

Why a handler rather than mounting the SDK's Starlette app with an ASGI adapter: the route
stays an ordinary aiohttp route (exact path, the same body limit and error handling as the
API beside it), authentication stays Lore's own, and the session manager's lifetime is the
aiohttp application's (`cleanup_ctx`), in a task of its own, as anyio's task groups need.
The adapter on PyPI (aiohttp-asgi) matches routes by prefix, guesses the HTTP version from
the Connection header and pulls in a forking library; the bridge Lore needs is sixty lines.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from aiohttp import web
from mcp.server.context import ServerRequestContext
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from bot.app.keys import ApiKeys
from bot.mcp import asgi
from bot.mcp.server import build_server
from bot.mcp.tools import Lore
from bot.mcp.who import Principal

PATH = "/mcp"
PRINCIPAL = "lore.principal"
"""The ASGI scope key the authenticated principal travels under, to the tools."""
REALM = 'Bearer realm="lore"'
NO_KEY = "Send a Lore API key as `Authorization: Bearer lore_…`; create one with `lore api-key create`."
BAD_KEY = (
    "That API key is not valid: it was revoked or mistyped. Create a new one with `lore api-key create`."
)


def install_mcp(app: web.Application, lore: Lore, keys: ApiKeys, *, body_limit: int) -> None:
    """Serve MCP at `/mcp` on `app` (requests up to `body_limit` bytes)."""
    endpoint = _Endpoint(lore, keys, body_limit)
    app.router.add_route("*", PATH, endpoint.handle, name="mcp")
    app.cleanup_ctx.append(endpoint.running)


def principal_of(ctx: ServerRequestContext[Any]) -> Principal:
    """The principal the HTTP request carrying this message was authenticated as."""
    scope = getattr(ctx.request, "scope", None) or {}
    principal = scope.get(PRINCIPAL)
    if not isinstance(principal, Principal):  # only reachable past the handler below
        raise PermissionError("an MCP request reached Lore without a principal")
    return principal


class _Endpoint:
    def __init__(self, lore: Lore, keys: ApiKeys, body_limit: int) -> None:
        self._lore = lore
        self._keys = keys
        self._manager = StreamableHTTPSessionManager(
            app=build_server(lore, principal_of),
            json_response=True,
            stateless=True,
            max_request_body_size=body_limit,
        )

    async def handle(self, request: web.Request) -> web.StreamResponse:
        scheme, _, secret = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not secret.strip():
            return _unauthorized(NO_KEY, error=None)
        connector_admins = self._lore.services.settings.connector_admins
        caller = await self._keys.caller(secret.strip(), connector_admins)
        if caller is None:
            return _unauthorized(BAD_KEY, error="invalid_token")
        scope = asgi.http_scope(request, **{PRINCIPAL: Principal.of_key(caller)})
        return await asgi.serve(self._manager.handle_request, request, scope)

    async def running(self, _app: web.Application) -> AsyncIterator[None]:
        """The session manager runs while the application does, in a task of its own."""
        started, stop = asyncio.Event(), asyncio.Event()

        async def run() -> None:
            async with self._manager.run():
                started.set()
                await stop.wait()

        task = asyncio.create_task(run(), name="lore-mcp-sessions")
        waiting = asyncio.create_task(started.wait())
        await asyncio.wait({task, waiting}, return_when=asyncio.FIRST_COMPLETED)
        waiting.cancel()
        if task.done():
            task.result()  # it failed to start: say why
        try:
            yield
        finally:
            stop.set()
            await task


def _unauthorized(message: str, *, error: str | None) -> web.Response:
    """401 with the RFC 6750 challenge: without an error code when no key was sent (§3.1)."""
    challenge = REALM if error is None else f'{REALM}, error="{error}", error_description="{message}"'
    body = {"error": error or "invalid_request", "error_description": message}
    return web.Response(
        status=401,
        text=json.dumps(body),
        content_type="application/json",
        headers={"WWW-Authenticate": challenge},
    )
