"""Running indexing jobs: the worker (in the bot's process by default, or `lore worker`)
and the scheduler that queues refreshes of attached sources when they are due."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import fields, replace
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from apscheduler.schedulers.asyncio import AsyncIOScheduler

from bot.app.services import Services
from bot.app.settings import Settings
from knowledge import (
    CONNECTORS,
    ConnectorSync,
    Fetcher,
    JobRunner,
    JobWorker,
    SourceSync,
    SyncPolicy,
    worker_name,
)

if TYPE_CHECKING:
    from knowledge import Crawler, CrawlLimits

log = logging.getLogger(__name__)
FIRST_CHECK_AFTER = timedelta(seconds=10)
MoreSyncs = Callable[[Services], Mapping[str, SourceSync]]
"""Source kinds a surface knows how to sync (a learned Slack channel is read with the bot's
token, `bot.slack.history.channel_syncs`); the entry point passes them in, since the app
core knows no surface."""


def crawl_limits(settings: Settings, options: Mapping[str, object]) -> CrawlLimits:
    """The settings' limits, with a source's own overrides (only known, well-typed ones)."""
    from knowledge import CrawlLimits

    limits = CrawlLimits.from_settings(settings)
    known = {f.name: type(getattr(limits, f.name)) for f in fields(limits)}
    overrides = {
        name: known[name](value)
        for name, value in options.items()
        if name in known and isinstance(value, int | float) and not isinstance(value, bool)
    }
    return replace(limits, **overrides)


def build_worker(
    services: Services, *, worker: str | None = None, more: MoreSyncs | None = None
) -> tuple[JobWorker, str]:
    settings = services.settings
    allow = services.allow

    def make_crawler(options: Mapping[str, object]) -> Crawler:
        from knowledge import Crawler

        limits = crawl_limits(settings, options)
        return Crawler(
            Fetcher(allow, max_bytes=limits.max_page_bytes, timeout=limits.request_timeout), limits
        )

    name = worker or worker_name()
    runner = JobRunner(
        services.jobs.repository,
        services.sources,
        services.indexes,
        services.documents,
        services.ingestor,
        make_crawler,
        worker=name,
        heartbeat_seconds=min(5.0, settings.lore_job_stale_seconds / 4),
        syncs={**connector_syncs(services), **(more(services) if more else {})},
    )
    stale_after = timedelta(seconds=settings.lore_job_stale_seconds)
    worker_ = JobWorker(services.jobs, runner, concurrency=settings.lore_job_workers, stale_after=stale_after)
    return worker_, name


def connector_syncs(services: Services) -> dict[str, SourceSync]:
    """How each connector kind's jobs run, with the settings' sync policy."""
    settings = services.settings
    policy = SyncPolicy(
        overlap=timedelta(minutes=settings.lore_confluence_overlap_minutes),
        full_every=timedelta(days=settings.lore_confluence_full_sync_days),
        max_attachment_bytes=settings.max_file_bytes,
    )
    sync = ConnectorSync(
        services.connections, services.sources, services.documents, services.ingestor, policy
    )
    return dict.fromkeys(CONNECTORS, sync)


@asynccontextmanager
async def running_jobs(
    services: Services, *, schedule: bool = True, more: MoreSyncs | None = None
) -> AsyncIterator[None]:
    """Run a job worker (and the refresh scheduler) in this process while the block runs."""
    worker, name = build_worker(services, more=more)
    stop = asyncio.Event()
    task = asyncio.create_task(worker.run(stop, name), name="lore-job-worker")
    scheduler = refresh_scheduler(services) if schedule else None
    try:
        yield
    finally:
        if scheduler is not None:
            scheduler.shutdown(wait=False)
        stop.set()
        await asyncio.gather(task, return_exceptions=True)


def refresh_scheduler(services: Services) -> AsyncIOScheduler:
    """APScheduler, checking every few minutes which attached sources are due a refresh,
    and which removed workspaces are due their purge; both schedules live in the database,
    so restarts and several processes agree."""
    scheduler = AsyncIOScheduler()
    scheduler.add_job(
        _enqueue_due,
        "interval",
        args=[services],
        minutes=services.settings.lore_refresh_check_minutes,
        id="lore-refresh",
        coalesce=True,
        max_instances=1,
        next_run_time=datetime.now(UTC) + FIRST_CHECK_AFTER,
    )
    scheduler.add_job(
        _purge_due,
        "interval",
        args=[services],
        minutes=services.settings.lore_refresh_check_minutes,
        id="lore-purge",
        coalesce=True,
        max_instances=1,
        next_run_time=datetime.now(UTC) + FIRST_CHECK_AFTER,
    )
    scheduler.start()
    return scheduler


async def _enqueue_due(services: Services) -> None:
    try:
        for job in await services.jobs.enqueue_due():
            log.info("queued scheduled refresh job %s", job.id)
    except Exception:
        log.exception("could not queue scheduled refreshes")


async def _purge_due(services: Services) -> None:
    try:
        await services.removals.purge_due(worker_name())
    except Exception:
        log.exception("could not purge the data of removed workspaces")
