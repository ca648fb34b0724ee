"""What the fakes of the connectors' services share (GitHub, Notion, Google, Confluence):
`ApiFake`, a `LoopbackServer` that records every request it answers, scripted answers included
(`requests`), lets a test make a path fail (`fail`) and queues scripted answers (`script`: a
rate limit, a quota error) for the next requests; `ApiRequest`, one recorded request. Each
fake keeps its own wire format: its routes, its error bodies, its paging parameters and what
its scripted answers look like (`_guarded`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from aiohttp import web

from . import LoopbackServer, Recorder, copy_headers

S = TypeVar("S")


@dataclass(frozen=True)
class ApiRequest:
    method: str
    path: str
    query: Mapping[str, str]
    headers: Mapping[str, str]
    status: int
    body: str = ""

    @property
    def signed(self) -> bool:
        """Whether it carried credentials."""
        return "Authorization" in self.headers


class ApiFake(LoopbackServer, Generic[S]):
    """A fake service's API: `build_app` puts `self._record` among the app's middlewares; each
    request goes through `_guarded` (scripted answers `S`, failing paths, credentials: the
    fake's own) and is recorded with the status it got."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: Recorder[ApiRequest] = Recorder(lambda r: f"{r.method} {r.path} {r.status}")
        self._failing: dict[str, int] = {}
        self._scripts: list[S | None] = []

    def script(self, answer: S, times: int = 1, *, after: int = 0) -> None:
        """Answer the `times` requests after the next `after` ones with `answer`."""
        self._scripts += [None] * after + [answer] * times

    def scripted(self) -> S | None:
        """The scripted answer to this request, if any."""
        return self._scripts.pop(0) if self._scripts else None

    def fail(self, path: str, times: int = 1_000_000) -> None:
        """Answer the next `times` requests to `path` with the service's 500."""
        self._failing[path] = times

    def failing(self, path: str) -> bool:
        """Whether this request to `path` is to fail (and one fewer of the next will)."""
        left = self._failing.get(path, 0)
        if left:
            self._failing[path] = left - 1
        return left > 0

    async def _guarded(self, request: web.Request, handler: Any) -> web.StreamResponse:
        raise NotImplementedError

    @web.middleware
    async def _record(self, request: web.Request, handler: Any) -> web.StreamResponse:
        body = await request.text() if request.can_read_body else ""
        try:
            response: web.StreamResponse = await self._guarded(request, handler)
        except web.HTTPException as exc:
            response = exc
        self.requests.append(
            ApiRequest(
                request.method,
                request.path,
                dict(request.query),
                copy_headers(request),
                response.status,
                body,
            )
        )
        if isinstance(response, web.HTTPException):
            raise response
        return response
