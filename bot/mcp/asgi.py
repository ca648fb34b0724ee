"""One aiohttp request served by an ASGI application: the MCP SDK's Streamable HTTP
transport is ASGI, Lore's HTTP server is aiohttp.

Only what that transport needs: an HTTP request in (its body read as it arrives), one
response out, streamed as the application sends it (an SSE stream stays open while it
writes). No websockets, no lifespan protocol: whoever mounts the application runs its
lifecycle itself (`bot.mcp.http`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from aiohttp import web
from multidict import CIMultiDict

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


def http_scope(request: web.Request, **extra: Any) -> Scope:
    """The ASGI scope of `request`; `extra` keys are added to it (what the application's
    handlers read back, such as who the request was authenticated as)."""
    host, port = _server(request)
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": f"{request.version.major}.{request.version.minor}",
        "method": request.method,
        "scheme": request.scheme,
        "path": request.path,
        "raw_path": request.raw_path.split("?", 1)[0].encode(),
        "query_string": request.query_string.encode(),
        "root_path": "",
        "headers": [(name.lower(), value) for name, value in request.raw_headers],
        "client": (request.remote or "", 0),
        "server": (host, port),
        **extra,
    }


async def serve(app: App, request: web.Request, scope: Scope) -> web.StreamResponse:
    """Run `app` for `request` and give aiohttp the response it sent."""
    exchange = _Exchange(request)
    try:
        await app(scope, exchange.receive, exchange.send)
    finally:
        exchange.finished.set()
    if exchange.response is None:
        raise RuntimeError("the ASGI application sent no response")
    return exchange.response


class _Exchange:
    def __init__(self, request: web.Request) -> None:
        self.request = request
        self.response: web.StreamResponse | None = None
        self.finished = asyncio.Event()
        self._body_done = False

    async def receive(self) -> Message:
        if not self._body_done:
            chunk = await self.request.content.readany()
            self._body_done = self.request.content.at_eof()
            return {"type": "http.request", "body": chunk, "more_body": not self._body_done}
        await self.finished.wait()  # nothing more comes in; the request is over when the app returns
        return {"type": "http.disconnect"}

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            headers: CIMultiDict[str] = CIMultiDict()
            for name, value in message.get("headers", ()):
                headers.add(name.decode("latin-1"), value.decode("latin-1"))
            self.response = web.StreamResponse(status=message["status"], headers=headers)
            await self.response.prepare(self.request)
        elif message["type"] == "http.response.body":
            if self.response is None:
                raise RuntimeError("the ASGI application sent a body before its response's start")
            body = message.get("body", b"")
            if message.get("more_body", False):
                if body:
                    await self.response.write(body)
            else:
                await self.response.write_eof(body)


def _server(request: web.Request) -> tuple[str, int]:
    sockname = request.transport.get_extra_info("sockname") if request.transport else None
    if isinstance(sockname, tuple) and len(sockname) >= 2:
        return str(sockname[0]), int(sockname[1])
    return request.host, 0
