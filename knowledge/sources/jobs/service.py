"""`IndexingJobs`: what surfaces call to attach sites, start jobs, read their status and log,
cancel them, and queue the refreshes that are due."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from knowledge.indexing.ingest import Ingestor
from knowledge.sources.jobs.schedule import Schedule
from knowledge.sources.web import AllowList, check_url
from storage.records import IndexRef, IndexStats, JobLine, JobRef, SourceConfigRef
from storage.repositories.indexes import IndexRepository
from storage.repositories.jobs import JobRepository
from storage.repositories.sources import SITE, SourceRepository
from storage.values import utcnow


@dataclass(frozen=True)
class IndexInfo:
    index: IndexRef
    stats: IndexStats
    sources: list[SourceConfigRef]
    last_job: JobRef | None


def site_name(url: str) -> str:
    """`docs.example.com/api` for a start URL: how people name the site in chat."""
    parts = urlsplit(url)
    return (parts.hostname or url) + parts.path.rstrip("/")


class IndexingJobs:
    """What surfaces call: attach sites, start jobs, read their status and log, cancel."""

    def __init__(
        self,
        jobs: JobRepository,
        sources: SourceRepository,
        indexes: IndexRepository,
        ingestor: Ingestor,
        allow: AllowList,
    ) -> None:
        self.repository = jobs
        self._sources = sources
        self._indexes = indexes
        self._ingestor = ingestor
        self._allow = allow
        self.wake = asyncio.Event()
        """Set when a job is queued, so an in-process worker starts it at once."""

    async def attach_site(
        self,
        index: IndexRef,
        start_urls: list[str],
        *,
        created_by: int | None = None,
        schedule: str = "daily",
        options: Mapping[str, object] | None = None,
    ) -> SourceConfigRef:
        """Attach a site to `index` (the same start URLs twice: one attachment). Raises
        `Refused` for a URL Lore may not crawl."""
        for url in start_urls:
            check_url(url, self._allow)
        return await asyncio.to_thread(
            self._sources.attach_site,
            index.tenant_id,
            index.id,
            site_name(start_urls[0]),
            start_urls,
            options=dict(options or {}),
            schedule=schedule,
            created_by=created_by,
        )

    async def start_indexing_job(
        self,
        index: IndexRef,
        source: SourceConfigRef,
        *,
        conversation_id: int | None = None,
        trigger: str = "manual",
    ) -> JobRef:
        """Queue a crawl of `source` into `index`; the job already under way, if there is one
        (the database keeps one per source, however many processes queue at once)."""
        active = await asyncio.to_thread(self.repository.active_for_source, source.id)
        if active is not None:
            return active
        job, queued = await asyncio.to_thread(
            self.repository.queue, index.id, source.id, conversation_id=conversation_id, trigger=trigger
        )
        if not queued:
            return job
        what = (
            "crawl of" if source.kind == SITE else f"sync of {source.kind} {', '.join(source.folders)} from"
        )
        await asyncio.to_thread(self.repository.log, job.id, f"queued: {trigger} {what} {source.name}")
        self.wake.set()
        return job

    async def get_indexing_job_status(self, job_id: int) -> JobRef:
        return await asyncio.to_thread(self.repository.get, job_id)

    async def tail_indexing_job(
        self, job_id: int, *, follow: bool = True, after: int = 0, poll_seconds: float = 0.5
    ) -> AsyncIterator[JobLine]:
        """The job's log lines after line id `after`; with `follow`, new ones as they come
        until the job ends."""
        while True:
            job = await asyncio.to_thread(self.repository.get, job_id)
            lines = await asyncio.to_thread(self.repository.lines, job_id, after_id=after)
            for line in lines:
                after = line.id
                yield line
            if not lines and (job.finished or not follow):
                return
            if not lines:
                await asyncio.sleep(poll_seconds)

    async def cancel(self, job_id: int) -> JobRef:
        job = await asyncio.to_thread(self.repository.request_cancel, job_id)
        await asyncio.to_thread(self.repository.log, job_id, "cancel requested")
        return job

    async def recent(
        self, *, index_ids: list[int] | None = None, conversation_id: int | None = None, limit: int = 10
    ) -> list[JobRef]:
        return await asyncio.to_thread(
            self.repository.recent, index_ids=index_ids, conversation_id=conversation_id, limit=limit
        )

    async def list_docsources(self, index: IndexRef) -> list[SourceConfigRef]:
        return await asyncio.to_thread(self._sources.for_index, index.id)

    async def detach_docsource_from_index(self, index: IndexRef, source: SourceConfigRef) -> int:
        """Stop its job, remove its documents, detach it; returns documents removed."""
        active = await asyncio.to_thread(self.repository.active_for_source, source.id)
        if active is not None:
            await self.cancel(active.id)
        documents = await asyncio.to_thread(self._sources.documents, source.id)
        await self._ingestor.remove(index, [d.id for d in documents])
        await asyncio.to_thread(self._sources.detach, source.id)
        return len(documents)

    async def get_index_info(self, index: IndexRef) -> IndexInfo:
        stats = await asyncio.to_thread(self._indexes.stats, index.id)
        sources = await self.list_docsources(index)
        last = await self.recent(index_ids=[index.id], limit=1)
        return IndexInfo(index, stats, sources, last[0] if last else None)

    async def enqueue_due(self) -> list[JobRef]:
        """Queue a refresh for every attached source whose schedule says it is due (and that
        has no job under way); the jobs queued."""
        started = []
        for source in await asyncio.to_thread(self._sources.all):
            interval = Schedule.stored(source.schedule).interval
            if interval is None:
                continue
            due = source.last_refresh_at is None or utcnow() - source.last_refresh_at >= interval
            if due and await asyncio.to_thread(self.repository.active_for_source, source.id) is None:
                index = await asyncio.to_thread(self._indexes.get, source.index_id)
                started.append(await self.start_indexing_job(index, source, trigger="schedule"))
        return started
