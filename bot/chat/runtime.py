"""The running bot's long-lived parts: services, fetcher and router, opened and closed once."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from bot.app.services import Services, build_services
from bot.app.settings import Settings
from bot.app.workers import MoreSyncs, running_jobs
from bot.chat.router import Router
from knowledge import Fetcher, Resolve, TiktokenCounter, system_resolve


@dataclass
class Runtime:
    services: Services
    router: Router
    fetcher: Fetcher
    """The SSRF-safe fetcher (pages added from chat or App Home, and shared files that are
    not on Slack's hosts)."""


@asynccontextmanager
async def open_runtime(
    settings: Settings,
    *,
    resolve: Resolve = system_resolve,
    more_syncs: MoreSyncs | None = None,
    serving: bool = False,
) -> AsyncIterator[Runtime]:
    """Build everything, repair what a crash left half done, and close it all at the end.
    `resolve` looks host names up for fetches and connectors (tests keep DNS out with it);
    `more_syncs`, the source kinds the surfaces sync themselves, for the in-process worker.
    `serving`, for the entry points (`lore run`, `lore api`, the shell): the process serves
    from here on, so what start-up built is frozen (`settle`)."""
    services = await asyncio.to_thread(lambda: build_services(settings, resolve=resolve))
    try:
        indexes = await asyncio.to_thread(services.indexes.list_all)
        await services.ingestor.repair({i.id: i for i in indexes})
        await asyncio.to_thread(TiktokenCounter().warm)
        fetcher = Fetcher(services.allow, resolve=resolve, max_bytes=settings.max_file_bytes)
        runtime = Runtime(services, Router(services, fetcher), fetcher)
        if serving:
            settle()
        if settings.lore_jobs_in_process:
            async with running_jobs(services, more=more_syncs):
                yield runtime
        else:
            yield runtime
    finally:
        await services.aclose()


def settle() -> None:
    """Move every object start-up built out of the garbage collector's sight (`gc.freeze`):
    they live as long as the process, yet a full collection walked them all, stopping the
    event loop, and every conversation on it, for as long. On the docs corpus's 110 tune
    questions, the two full collections took 251 and 231 ms; frozen, 27 and 24 ms
    (`bench/answer-quality-history.md`, fourteenth session).
    The cost: a reference cycle among them that later becomes garbage is never freed."""
    gc.collect()
    gc.freeze()
