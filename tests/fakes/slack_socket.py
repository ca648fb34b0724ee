"""`FakeSlackSocket`: the fake Slack Web API plus Socket Mode over a loopback WebSocket.

`apps.connections.open` (with the app-level token) hands out `ws://127.0.0.1:PORT/link`;
the server greets with `hello`, tests push Events API envelopes with `send_event`, and the
client's acknowledgements are recorded in `acks`.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

from aiohttp import WSMsgType, web

from .slack_server import FakeSlack

Json = dict[str, Any]


class FakeSlackSocket(FakeSlack):
    def __init__(self, *args: Any, app_token: str = "xapp-1-test", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.app_token = app_token
        self.acks: list[str] = []
        self._sockets: list[web.WebSocketResponse] = []
        self._connected = asyncio.Event()
        self._acked = asyncio.Condition()

    def build_app(self) -> web.Application:
        app = super().build_app()
        app.router.add_get("/link", self._link)
        return app

    def _answer(self, method: str, params: Json, token: str | None) -> tuple[int, Json, Json]:
        if method != "apps.connections.open":
            return super()._answer(method, params, token)
        if token != self.app_token:
            return 200, {"ok": False, "error": "invalid_auth"}, {}
        url = self.base_url.replace("http://", "ws://") + f"/link?ticket={uuid.uuid4().hex}"
        return 200, {"ok": True, "url": url}, {}

    async def wait_connected(self, timeout: float = 10.0) -> None:  # noqa: ASYNC109 - a test's bound
        await asyncio.wait_for(self._connected.wait(), timeout)

    async def send_event(self, body: Json, *, retry_attempt: int = 0) -> str:
        """Push an Events API payload to the connected client; returns its envelope id."""
        await self.wait_connected()
        envelope_id = uuid.uuid4().hex
        envelope = {
            "envelope_id": envelope_id,
            "type": "events_api",
            "accepts_response_payload": False,
            "payload": body,
            "retry_attempt": retry_attempt,
            "retry_reason": "",
        }
        await self._sockets[-1].send_str(json.dumps(envelope))
        return envelope_id

    async def wait_for_ack(self, envelope_id: str, timeout: float = 5.0) -> None:  # noqa: ASYNC109 - a test's bound
        async with self._acked:
            await asyncio.wait_for(self._acked.wait_for(lambda: envelope_id in self.acks), timeout)

    async def _link(self, request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse(heartbeat=None)
        await socket.prepare(request)
        self._sockets.append(socket)
        hello = {
            "type": "hello",
            "num_connections": 1,
            "connection_info": {"app_id": "A0001"},
            "debug_info": {"host": "fake", "approximate_connection_time": 3600},
        }
        await socket.send_str(json.dumps(hello))
        self._connected.set()
        async for message in socket:
            if message.type != WSMsgType.TEXT:
                continue
            envelope_id = json.loads(message.data).get("envelope_id")
            if envelope_id:
                async with self._acked:
                    self.acks.append(str(envelope_id))
                    self._acked.notify_all()
        return socket
