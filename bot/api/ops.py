"""Operations routes: `/healthz` (the process answers), `/readyz` (database, vector store and
embedder work) and `/metrics` (Prometheus text). None needs an API key, so `/readyz` says
only which component fails (`ok`, `failed`, `timed out`): what failed and where data lives
go to the log, masked, never to an unauthenticated caller."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable
from typing import Protocol, runtime_checkable

from aiohttp import web
from pydantic import BaseModel

from bot.api.routes import Reply, Route
from bot.api.state import ApiState, state
from bot.app.masking import mask_text

log = logging.getLogger(__name__)
TAG = "operations"
CHECK_TIMEOUT = 10.0
EMBEDDER_OK_FOR = 60.0
"""A working embedder is re-checked at most this often (it may be a paid API)."""


@runtime_checkable
class Heartbeat(Protocol):
    def heartbeat(self) -> int: ...


class Health(BaseModel):
    status: str


class Check(BaseModel):
    ok: bool
    detail: str


class Readiness(BaseModel):
    ready: bool
    checks: dict[str, Check]


class EmbedderCheck:
    """Remembers when the embedder last worked, so probes do not embed every time."""

    def __init__(self) -> None:
        self._ok_until = 0.0

    async def run(self, api: ApiState) -> str:
        embedder = api.services.embedder
        if time.monotonic() < self._ok_until:
            return f"{embedder.model_id} (checked recently)"
        vectors = await embedder.embed(["Lore checks that it can embed."])
        self._ok_until = time.monotonic() + EMBEDDER_OK_FOR
        return f"{embedder.model_id}, {vectors.shape[1]} dimensions"


EMBEDDER_CHECK = web.AppKey("lore_embedder_check", EmbedderCheck)


async def healthz(_request: web.Request) -> web.Response:
    return web.json_response(Health(status="ok").model_dump())


async def readyz(request: web.Request) -> web.Response:
    api = state(request)
    secrets = api.services.settings.secret_values()
    checks = {
        "database": await _check("database", asyncio.to_thread(api.services.db.ping), secrets),
        "vector_store": await _check("vector store", _vectors(api), secrets),
        "embedder": await _check("embedder", request.app[EMBEDDER_CHECK].run(api), secrets),
    }
    ready = all(c.ok for c in checks.values())
    body = Readiness(ready=ready, checks=checks)
    return web.json_response(body.model_dump(), status=200 if ready else 503)


async def metrics(request: web.Request) -> web.Response:
    api = state(request)
    jobs = await asyncio.to_thread(api.services.jobs.repository.count_by_state)
    text = api.metrics.render(jobs)
    return web.Response(
        body=text.encode(), headers={"Content-Type": "text/plain; version=0.0.4; charset=utf-8"}
    )


async def _vectors(api: ApiState) -> str:
    store = api.services.vectors
    if isinstance(store, Heartbeat):
        await asyncio.to_thread(store.heartbeat)
    return store.describe()


async def _check(component: str, work: Awaitable[str], secrets: list[str]) -> Check:
    """Whether `work` succeeds; how it went is logged (masked), not returned."""
    try:
        async with asyncio.timeout(CHECK_TIMEOUT):
            detail = await work
    except TimeoutError:
        log.warning("readiness: the %s gave no answer within %.0f s", component, CHECK_TIMEOUT)
        return Check(ok=False, detail="timed out")
    except Exception as exc:  # a readiness probe reports any failure, it does not raise
        log.warning(
            "readiness: the %s failed: %s", component, mask_text(f"{type(exc).__name__}: {exc}", secrets)
        )
        return Check(ok=False, detail="failed")
    log.debug("readiness: the %s works: %s", component, mask_text(detail, secrets))
    return Check(ok=True, detail="ok")


ROUTES = [
    Route("GET", "/healthz", healthz, "The process is up.", TAG, {200: Reply("Up.", Health)}, public=True),
    Route(
        "GET",
        "/readyz",
        readyz,
        "The database, the vector store and the embedder all work.",
        TAG,
        {200: Reply("Ready.", Readiness), 503: Reply("Not ready; `checks` says what fails.", Readiness)},
        public=True,
    ),
    Route(
        "GET",
        "/metrics",
        metrics,
        "Prometheus metrics: requests, latencies, answers by mode, ingests, job states.",
        TAG,
        {200: Reply("Prometheus text exposition.", media_type="text/plain")},
        public=True,
    ),
]
