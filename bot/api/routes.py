"""What a route is: method, path, handler, and what the OpenAPI document says about it.

Every route module exports a `ROUTES` list of `Route`s; `bot.api.app` registers them and
`bot.api.openapi` describes them, so the two cannot drift apart.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from aiohttp import web
from pydantic import BaseModel

from storage.records import NotFound as RowNotFound

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
JSON = "application/json"
MAX_ID = 2**53
"""Larger ids in a path cannot be rows (and would overflow SQL integers)."""
T = TypeVar("T")


async def find_row(row_id: int, load: Callable[[int], T]) -> T | None:
    """`load(row_id)` in a thread; None for an id no row can have, or no such row."""
    if row_id > MAX_ID:
        return None
    try:
        return await asyncio.to_thread(load, row_id)
    except RowNotFound:
        return None


@dataclass(frozen=True)
class Reply:
    """One documented response: its description, and its body's model or media type."""

    description: str
    model: type[BaseModel] | None = None
    media_type: str = JSON


@dataclass(frozen=True)
class Route:
    method: str
    path: str
    """aiohttp path; a parameter may carry a pattern, `{document_id:\\d+}`."""
    handler: Handler
    summary: str
    tag: str
    replies: Mapping[int, Reply]
    public: bool = False
    """True: no API key needed (health, metrics, the OpenAPI document)."""
    body: type[BaseModel] | None = None
    """The JSON request body."""
    form: type[BaseModel] | None = None
    """A multipart/form-data request body (its fields; `file` is the file part)."""
    query: type[BaseModel] | None = None
    """Query-string parameters."""
    upload: bool = False
    """The body may be as large as a file upload, not just a JSON request."""
    streams: tuple[str, ...] = field(default_factory=tuple)
    """Media types the route may stream instead (server-sent events …)."""

    @property
    def name(self) -> str:
        return self.handler.__name__
