"""The attacker's harness: Lore as `lore run` serves it in HTTP mode (Slack's events and the
HTTP API on one aiohttp application), the fake Slack Web API, the fake model, and loopback
servers that stand for hosts Lore must not trust.

    async with running_lore(tmp_path) as lore:
        await lore.mention("C1", "U1", "hello")             # signed, as Slack sends it
        await lore.api("GET", "/v1/indexes", key=lore.key)  # the HTTP API, with a key

No test here resolves a real host name (`resolve` refuses them all and records what was
asked) and none connects anywhere but 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import AsyncExitStack, ExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest_asyncio
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from bot.chat.runtime import open_runtime
from bot.cli.run import http_app
from bot.slack.app import build_app
from bot.slack.history import channel_syncs
from storage.repositories.api_keys import ApiKeyRepository
from tests.api.conftest import api, offline_api  # noqa: F401  (fixtures: the seeded HTTP API)
from tests.bot.conftest import BOT, SIGNING_SECRET, TEAM, SlackBot, lore_settings
from tests.fakes import LoopbackServer, Recorder, copy_headers
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.slack_server import FakeSlack
from tests.support.timing import own_heap

__all__ = ["BOT", "TEAM", "HostileHost", "Lookups", "LoopWatch", "Lore", "raw_mentions", "running_lore"]

RAW_MENTION = ("<!channel", "<!here", "<!everyone", "<!subteam", "<@U", "<#C", "<!date")


def raw_mentions(text: str) -> list[str]:
    """The Slack mention tokens that would work (notify, link) in `text`."""
    return [token for token in RAW_MENTION if token in text]


class Lookups:
    """A resolver that answers from a fixed table (nothing else is looked up) and records
    every name asked for."""

    def __init__(self, table: Mapping[str, str] | None = None) -> None:
        self.table = dict(table or {})
        self.asked: list[str] = []

    async def __call__(self, host: str) -> list[str]:
        self.asked.append(host)
        if host in self.table:
            return [self.table[host]]
        raise OSError(f"{host} is not in the test's table; no real DNS is used")


@dataclass(frozen=True)
class Hit:
    method: str
    path: str
    headers: Mapping[str, str]


class HostileHost(LoopbackServer):
    """Another origin on loopback (its own port): serves whatever `pages` holds and records
    every request, headers included, so a test can prove what it never received."""

    def __init__(
        self, pages: Mapping[str, tuple[bytes, str]] | None = None, redirects: Mapping[str, str] | None = None
    ) -> None:
        super().__init__()
        self.pages: dict[str, tuple[bytes, str]] = dict(pages or {})
        self.redirects: dict[str, str] = dict(redirects or {})
        """Paths answered with a 302 to the given location."""
        self.hits: Recorder[Hit] = Recorder(lambda h: f"{h.method} {h.path}")

    def build_app(self) -> web.Application:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._serve)
        return app

    async def _serve(self, request: web.Request) -> web.StreamResponse:
        self.hits.append(Hit(request.method, request.path, copy_headers(request)))
        if request.path in self.redirects:
            raise web.HTTPFound(self.redirects[request.path])
        found = self.pages.get(request.path)
        if found is None:
            raise web.HTTPNotFound()
        body, content_type = found
        return web.Response(body=body, content_type=content_type)

    def url(self, path: str) -> str:
        return f"{self.base_url}{path}"

    @property
    def authorizations(self) -> list[str]:
        """Every Authorization (or Cookie) header this host received."""
        found = []
        for hit in self.hits.snapshot():
            found += [v for k, v in hit.headers.items() if k.lower() in ("authorization", "cookie")]
        return found


class Lore(SlackBot):
    """A `SlackBot` whose server also carries the HTTP API, with a key of the team."""

    def __init__(self, bot: SlackBot, key: str, lookups: Lookups) -> None:
        super().__init__(bot.slack, bot.llm, bot.runtime, bot.events, bot.http)
        self.key = key
        self.lookups = lookups

    async def api(
        self, method: str, path: str, *, json_body: Any = None, data: Any = None, key: str | None = None
    ) -> tuple[int, Any]:
        headers = {"Authorization": f"Bearer {key or self.key}"}
        response = await self.http.request(method, path, json=json_body, data=data, headers=headers)
        raw = await response.read()
        if response.content_type == "application/json" and raw:
            return response.status, json.loads(raw)
        return response.status, raw.decode(errors="replace")

    def posted(self) -> str:
        """Everything Lore sent Slack in the test's window that people could read: texts,
        blocks and streamed markdown of every call, as one string."""
        methods = ("chat.", "views.", "reactions.")
        return "\n".join(json.dumps(c.params) for c in self.calls() if c.method.startswith(methods))


@asynccontextmanager
async def running_lore(
    home: Path, *, llm: bool = False, table: Mapping[str, str] | None = None, **settings: Any
) -> AsyncIterator[Lore]:
    """Lore in HTTP mode with the API beside Slack's events, on loopback, under `home`."""
    async with AsyncExitStack() as stack:
        slack = await stack.enter_async_context(FakeSlack("xoxb-test", TEAM, BOT))
        fake_llm = await stack.enter_async_context(FakeOpenAI()) if llm else None
        config = lore_settings(home, slack, fake_llm, **settings)
        lookups = Lookups(table)
        runtime = await stack.enter_async_context(
            open_runtime(config, resolve=lookups, more_syncs=channel_syncs)
        )
        app, events = build_app(runtime, config)
        stack.push_async_callback(events.close)
        server = TestServer(http_app(app, SIGNING_SECRET, runtime.services), host="127.0.0.1")
        http = await stack.enter_async_context(TestClient(server))
        runtime.services.directory.ensure_tenant(TEAM)
        key = ApiKeyRepository(runtime.services.db).create(TEAM, "security").secret
        yield Lore(SlackBot(slack, fake_llm, runtime, events, http), key, lookups)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def lore(tmp_path_factory: Any) -> AsyncIterator[Lore]:
    """Lore without a model, loopback not allowed for fetching (the default), per module."""
    async with running_lore(tmp_path_factory.mktemp("lore-security")) as running:
        yield running


class LoopWatch:
    """Measures how long the event loop is kept from running: a ticker notes the longest
    gap between its wake-ups. The garbage collector leaves what the test session built
    before it alone meanwhile (`own_heap`): the size of the suite is not the code's doing."""

    def __init__(self, tick: float = 0.01) -> None:
        self.tick = tick
        self.longest = 0.0
        self._task: asyncio.Task[None] | None = None
        self._heap = ExitStack()

    async def _run(self) -> None:
        last = time.monotonic()
        while True:
            await asyncio.sleep(self.tick)
            now = time.monotonic()
            self.longest = max(self.longest, now - last - self.tick)
            last = now

    async def __aenter__(self) -> LoopWatch:
        self._heap.enter_context(own_heap())
        self._task = asyncio.create_task(self._run())
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)
        self._heap.close()
