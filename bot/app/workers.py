"""Running indexing jobs: the worker (in the bot's process by default, or `lore worker`)
and the scheduler that queues refreshes of attached sources when they are due."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import fields, replace
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from apscheduler.schedulers.asyncio import AsyncIOScheduler

from bot.app.audit import Origin, Surface, acting_from
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
GAPS_FIRST_AFTER = timedelta(minutes=2)
"""The first grouping waits for the embedder's other start-up work."""
RETENTION_EVERY_MINUTES = 60
FORGET_EVERY = timedelta(seconds=5)
"""How often the scheduler looks for people to forget (`bot.app.forgetting`): asked for in
the console or the CLI, done within seconds."""
ACCESS_CHECK_MINUTES = 1.0
"""How often the scheduler looks for permission and group syncs that are due (each runs on
its own setting's schedule: `LORE_PERMISSION_SYNC_MINUTES`, `LORE_GROUP_SYNC_MINUTES`)."""
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
    and which removed workspaces are due their purge (both schedules live in the database,
    so restarts and several processes agree); every minute which connected sources are due a
    permission or group sync (apart from content: an access change never re-fetches or
    re-embeds anything); every few seconds which people are to be forgotten; every hour which questions are past their retention; every few
    hours (LORE_COVERAGE_GAPS_HOURS) the coverage gaps. It also finishes what killed writers
    left half done (documents whose writer's lease ran out): a process that runs for weeks
    does not wait for another to start."""
    settings = services.settings
    check = timedelta(minutes=settings.lore_refresh_check_minutes)
    jobs: list[tuple[str, Callable[[Services], Awaitable[None]], timedelta, timedelta]] = [
        ("lore-refresh", _enqueue_due, check, FIRST_CHECK_AFTER),
        ("lore-purge", _purge_due, check, FIRST_CHECK_AFTER),
        ("lore-access", _sync_access_due, timedelta(minutes=ACCESS_CHECK_MINUTES), FIRST_CHECK_AFTER),
        ("lore-repair", _repair, check, FIRST_CHECK_AFTER),
        ("lore-forget", _forget_due, FORGET_EVERY, FORGET_EVERY),
        ("lore-retention", _retain, timedelta(minutes=RETENTION_EVERY_MINUTES), FIRST_CHECK_AFTER),
        (
            "lore-coverage-gaps",
            _group_gaps,
            timedelta(hours=settings.lore_coverage_gaps_hours),
            GAPS_FIRST_AFTER,
        ),
    ]
    scheduler = AsyncIOScheduler()
    for name, job, every, first in jobs:
        scheduler.add_job(
            job,
            "interval",
            args=[services],
            seconds=every.total_seconds(),
            id=name,
            coalesce=True,
            max_instances=1,
            next_run_time=datetime.now(UTC) + first,
        )
    scheduler.start()
    return scheduler


async def _repair(services: Services) -> None:
    try:
        indexes = await asyncio.to_thread(services.indexes.list_all)
        await services.ingestor.repair({i.id: i for i in indexes})
    except Exception:
        log.exception("could not repair half-written documents")


async def _sync_access_due(services: Services) -> None:
    try:
        for report in await services.access_sync.run_due():
            if report.error:
                log.warning("access sync failed (fail closed): %s", report.error)
        if services.slack_members is not None:  # else a process that knows Slack reads them
            every = timedelta(minutes=services.settings.lore_group_sync_minutes)
            await services.actions.restrictions.refresh(every=every)
    except Exception:
        log.exception("could not run the due permission and group syncs")


async def _enqueue_due(services: Services) -> None:
    try:
        for job in await services.jobs.enqueue_due():
            log.info("queued scheduled refresh job %s", job.id)
    except Exception:
        log.exception("could not queue scheduled refreshes")


async def _purge_due(services: Services) -> None:
    try:
        with acting_from(Origin(Surface.LORE)):
            await services.removals.purge_due(worker_name())
    except Exception:
        log.exception("could not purge the data of removed workspaces")


async def _forget_due(services: Services) -> None:
    try:
        for job in await services.forgetting.run_due(worker_name()):
            log.info("forget job %s: %s", job.id, job.state.value)
    except Exception:
        log.exception("could not run the jobs forgetting people")


async def _retain(services: Services) -> None:
    """Remove the questions each workspace keeps no longer (each pass logs what it removed)."""
    try:
        with acting_from(Origin(Surface.LORE)):
            await services.retention.purge_due()
    except Exception:
        log.exception("could not remove questions past their retention")


async def _group_gaps(services: Services) -> None:
    try:
        with acting_from(Origin(Surface.LORE)):
            await services.gaps.run_all()
    except Exception:
        log.exception("could not group the coverage gaps")
