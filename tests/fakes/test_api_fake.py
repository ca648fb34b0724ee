"""The harness the connectors' fakes share: every request recorded with the status it got
(answers raised as HTTP exceptions too), scripted answers after the next `after` requests,
a path failing a number of times."""

from __future__ import annotations

from typing import Any

import aiohttp
from aiohttp import web

from tests.fakes.api_fake import ApiFake


class Echo(ApiFake[int]):
    """Answers `/ok` 200 and `/gone` 302; a scripted answer is its status; failing is 500."""

    def build_app(self) -> web.Application:
        app = web.Application(middlewares=[self._record])
        app.router.add_route("*", "/{name}", self._answer)
        return app

    async def _guarded(self, request: web.Request, handler: Any) -> web.StreamResponse:
        status = self.scripted()
        if status is not None:
            return web.json_response({"scripted": status}, status=status)
        if self.failing(request.path):
            return web.json_response({"error": "failing"}, status=500)
        response: web.StreamResponse = await handler(request)
        return response

    async def _answer(self, request: web.Request) -> web.Response:
        if request.match_info["name"] == "gone":
            raise web.HTTPFound("/ok")
        return web.json_response({"ok": True})


async def test_requests_scripts_and_failures_are_recorded_in_order() -> None:
    async with Echo() as fake, aiohttp.ClientSession() as http:
        fake.script(429, 2, after=1)
        fake.fail("/ok", times=1)
        statuses = []
        for path in ("/ok", "/ok", "/ok", "/ok", "/ok"):
            async with http.get(fake.base_url + path, headers={"Authorization": "Bearer x"}) as answer:
                statuses.append(answer.status)
        async with http.post(fake.base_url + "/gone", data=b"body", allow_redirects=False) as answer:
            assert answer.status == 302
    assert statuses == [500, 429, 429, 200, 200], "the first request passes the script, then fails"
    recorded = fake.requests.snapshot()
    assert [r.status for r in recorded] == [500, 429, 429, 200, 200, 302]
    assert recorded[0].signed and not recorded[-1].signed and recorded[-1].body == "body"
