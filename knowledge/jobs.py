"""Indexing jobs for attached sources: start, follow, cancel, and the worker that runs them.

A job crawls one attached site, or syncs one connector attachment (Confluence: a
`SourceSync` chosen by the source's kind, see `knowledge.connectors.sync`), into its index.
For a site: Each page is ingested as it arrives and
recorded with its links, so a job whose process died resumes without fetching those pages
again. Refreshes send the validators of the pages already indexed (ETag, Last-Modified):
unchanged pages cost no download and no embedding. A page that answers 404/410, or is
missing from two complete crawls in a row, is removed.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Protocol
from urllib.parse import urlsplit

from knowledge.errors import IngestError, KnowledgeError
from knowledge.fetch import AllowList, check_url
from knowledge.ingest import Ingestor, Outcome, Source
from knowledge.metadata import DocumentFacts
from storage.models import JobState, SourceKind, utcnow
from storage.records import DocumentRef, IndexRef, IndexStats, JobLine, JobRef, SourceConfigRef
from storage.repositories.documents import DocumentRepository
from storage.repositories.indexes import IndexRepository
from storage.repositories.jobs import JobRepository
from storage.repositories.sources import SITE, SourceRepository

if TYPE_CHECKING:
    from knowledge.crawl import CrawledPage, Crawler, CrawlReport

log = logging.getLogger(__name__)

MakeCrawler = Callable[[Mapping[str, object]], "Crawler"]
"""Builds a crawler for one job from the source's options (limit overrides)."""
MISSED_CRAWLS_BEFORE_REMOVAL = 2


class JobContext(Protocol):
    """What a running job offers the code that fills its index: counters, a log, the
    pages it handled before an interruption, and whether it should stop."""

    job: JobRef
    counters: dict[str, int]
    worker: str

    def count(self, name: str, n: int = 1) -> None: ...

    async def say(self, message: str, level: str = "info") -> None: ...

    def stopped(self) -> bool:
        """Cancelled, or taken over by another worker: stop at the next item."""

    async def done_before(self) -> set[str]:
        """Keys of the items this job handled before it was interrupted."""

    async def handled(self, key: str, outcome: str) -> None:
        """Record an item as handled (a resumed job skips it), save the counters, and
        check for cancellation."""


class SourceSync(Protocol):
    """Fills an index from a connector attachment; `knowledge.jobs` picks one by the
    source's kind. It returns when done or when `context.stopped()`; it raises to fail."""

    async def sync(self, context: JobContext, source: SourceConfigRef, index: IndexRef) -> None: ...


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
        """Queue a crawl of `source` into `index`; the job already under way, if there is one."""
        active = await asyncio.to_thread(self.repository.active_for_source, source.id)
        if active is not None:
            return active
        job = await asyncio.to_thread(
            self.repository.create, index.id, source.id, conversation_id=conversation_id, trigger=trigger
        )
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
            interval = schedule_interval(source.schedule)
            if interval is None:
                continue
            due = source.last_refresh_at is None or utcnow() - source.last_refresh_at >= interval
            if due and await asyncio.to_thread(self.repository.active_for_source, source.id) is None:
                index = await asyncio.to_thread(self._indexes.get, source.index_id)
                started.append(await self.start_indexing_job(index, source, trigger="schedule"))
        return started


SCHEDULES = {"hourly": timedelta(hours=1), "daily": timedelta(days=1), "weekly": timedelta(weeks=1)}


def schedule_interval(schedule: str) -> timedelta | None:
    """`hourly`, `daily`, `weekly`, `every N hours|days`, or `never` (None)."""
    schedule = schedule.strip().lower()
    if schedule in SCHEDULES:
        return SCHEDULES[schedule]
    words = schedule.split()
    if len(words) == 3 and words[0] == "every" and words[1].isdigit() and int(words[1]) > 0:
        unit = words[2].rstrip("s")
        if unit in ("hour", "day", "week"):
            return timedelta(**{f"{unit}s": int(words[1])})
    return None


def parse_schedule(text: str) -> str | None:
    """The canonical schedule for what a user typed, or None if it is not one."""
    text = text.strip().lower()
    if text in ("never", "off", "manual", "manually"):
        return "never"
    return text if schedule_interval(text) is not None else None


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


class JobRunner:
    """Runs one taken job to its end: crawl, ingest page by page, prune, summarise."""

    def __init__(
        self,
        jobs: JobRepository,
        sources: SourceRepository,
        indexes: IndexRepository,
        documents: DocumentRepository,
        ingestor: Ingestor,
        make_crawler: MakeCrawler,
        *,
        worker: str,
        heartbeat_seconds: float = 5.0,
        syncs: Mapping[str, SourceSync] | None = None,
    ) -> None:
        self._syncs = dict(syncs or {})
        """How to run a connector attachment's job, by source kind (sites are crawled)."""
        self._jobs = jobs
        self._sources = sources
        self._indexes = indexes
        self._documents = documents
        self._ingestor = ingestor
        self._make_crawler = make_crawler
        self._worker = worker
        self._heartbeat_seconds = heartbeat_seconds

    async def run(self, job: JobRef) -> JobRef:
        run = _Run(self, job)
        beat = asyncio.create_task(self._beat(job.id, run))
        try:
            state, error = await run.execute()
        except KnowledgeError as exc:  # said on purpose (bad credentials …): no traceback
            log.warning("indexing job %s failed: %s", job.id, exc)
            state, error = JobState.FAILED, str(exc)
            await asyncio.to_thread(self._jobs.log, job.id, f"failed: {error}", "error")
        except Exception as exc:
            log.exception("indexing job %s failed", job.id)
            state, error = JobState.FAILED, f"{type(exc).__name__}: {exc}"
            await asyncio.to_thread(self._jobs.log, job.id, f"failed: {error}", "error")
        finally:
            beat.cancel()
        if run.lost:
            return await asyncio.to_thread(self._jobs.get, job.id)
        await asyncio.to_thread(self._jobs.set_counters, job.id, run.counters)
        return await asyncio.to_thread(self._jobs.finish, job.id, state, error)

    async def _beat(self, job_id: int, run: _Run) -> None:
        while True:
            await asyncio.sleep(self._heartbeat_seconds)
            if not await asyncio.to_thread(self._jobs.heartbeat, job_id, self._worker):
                run.lost = True  # another worker took it over: stop quietly


class _Run:
    """One execution of a job (a first run, or a resumption)."""

    def __init__(self, runner: JobRunner, job: JobRef) -> None:
        self.r = runner
        self.job = job
        self.worker = runner._worker
        self.counters: dict[str, int] = dict(job.counters)
        self.lost = False
        self.cancelled = False
        self.lines: list[str] = []
        self.discovered: set[str] = set()
        """Every in-scope URL seen so far: the live "found" count."""
        self.seen: set[str] = set()
        self.by_url: dict[str, DocumentRef] = {}

    def count(self, name: str, n: int = 1) -> None:
        self.counters[name] = self.counters.get(name, 0) + n

    async def say(self, message: str, level: str = "info") -> None:
        await asyncio.to_thread(self.r._jobs.log, self.job.id, message, level)

    def stopped(self) -> bool:
        """The crawler's question between pages (answered from flags, not the database)."""
        return self.lost or self.cancelled

    async def check_cancel(self) -> None:
        self.cancelled = self.cancelled or await asyncio.to_thread(self.r._jobs.cancel_requested, self.job.id)

    async def done_before(self) -> set[str]:
        return set(await asyncio.to_thread(self.r._jobs.pages, self.job.id))

    async def handled(self, key: str, outcome: str) -> None:
        await asyncio.to_thread(self.r._jobs.record_page, self.job.id, key, outcome, [])
        await asyncio.to_thread(self.r._jobs.set_counters, self.job.id, self.counters)
        await self.check_cancel()

    async def flush(self) -> None:
        """Write the crawler's log lines (it reports them synchronously)."""
        lines, self.lines = self.lines, []
        for line in lines:
            await self.say(line)

    async def execute(self) -> tuple[JobState, str | None]:
        from knowledge.crawl import Validators  # the crawler's module loads only with jobs

        jobs = self.r._jobs
        if self.job.source_config_id is None:
            return JobState.FAILED, "its source was detached"
        source = await asyncio.to_thread(self.r._sources.get, self.job.source_config_id)
        self.index = await asyncio.to_thread(self.r._indexes.get, self.job.index_id)
        if source.kind != SITE:
            return await self.sync(source)
        documents = await asyncio.to_thread(self.r._sources.documents, source.id)
        self.by_url = {d.url: d for d in documents if d.url}
        known = {
            url: Validators(d.meta.get("etag"), d.meta.get("last_modified")) for url, d in self.by_url.items()
        }
        done = await asyncio.to_thread(jobs.pages, self.job.id)
        known_links = await self.previous_links(source.id)
        self.seen.update(done)
        self.discovered.update(done)
        for links in done.values():
            self.discovered.update(links)
        resumed = f", resuming after {len(done)} pages" if done else ""
        await self.say(f"running on {self.r._worker}: crawling {', '.join(source.start_urls)}{resumed}")
        crawler = self.r._make_crawler(source.options)
        report = await crawler.crawl(
            source.start_urls,
            self.on_page,
            known=known,
            known_links=known_links,
            done=done,
            log=self.log_line,
            cancelled=self.stopped,
        )
        self.counters["pages_found"] = max(len(self.discovered), report.found + len(done))
        await self.flush()
        for limit in report.limits_hit:
            await self.say(f"limit reached: {limit}", "warning")
        if self.lost:
            return JobState.INTERRUPTED, None
        await self.check_cancel()
        if self.cancelled:
            await self.say("cancelled")
            return JobState.CANCELLED, None
        if not report.limits_hit:
            await self.prune()
        await asyncio.to_thread(self.r._sources.mark_refreshed, source.id)
        await self.say(summary(self.counters, report))
        return JobState.SUCCEEDED, None

    async def sync(self, source: SourceConfigRef) -> tuple[JobState, str | None]:
        """A connector attachment's job: its `SourceSync` does the work."""
        sync = self.r._syncs.get(source.kind)
        if sync is None:
            return JobState.FAILED, f"this Lore has no connector for {source.kind} sources"
        await sync.sync(self, source, self.index)
        if self.lost:
            return JobState.INTERRUPTED, None
        await self.check_cancel()
        if self.cancelled:
            await self.say("cancelled")
            return JobState.CANCELLED, None
        return JobState.SUCCEEDED, None

    def log_line(self, line: str) -> None:
        self.lines.append(line)

    async def previous_links(self, source_id: int) -> dict[str, list[str]]:
        """Links of the pages the last finished crawl of this source handled: with them, the
        crawler may ask for unchanged pages conditionally and still follow their links."""
        jobs = self.r._jobs
        earlier = await asyncio.to_thread(jobs.recent, source_config_id=source_id, limit=5)
        for job in earlier:
            if job.id != self.job.id and job.state == JobState.SUCCEEDED:
                return await asyncio.to_thread(jobs.pages, job.id)
        return {}

    async def on_page(self, page: CrawledPage) -> None:
        self.count(f"pages_{page.outcome}")
        self.discovered.add(page.url)
        self.discovered.update(page.links)
        self.counters["pages_found"] = max(self.counters.get("pages_found", 0), len(self.discovered))
        if page.outcome == "fetched":
            await self.ingest(page)
        elif page.outcome == "unchanged":
            self.count("documents_unchanged")
            await self.unmiss(page.url)
        elif page.outcome == "gone":
            await self.remove_gone(page)
        else:
            reason = page.reason or page.outcome
            if page.outcome == "skipped":
                self.count(f"skipped: {reason}")
            await self.say(f"{page.outcome}: {page.url}: {reason}", "warning")
        if page.outcome in ("fetched", "unchanged"):
            self.seen.add(page.url)
        await asyncio.to_thread(self.r._jobs.record_page, self.job.id, page.url, page.outcome, page.links)
        await asyncio.to_thread(self.r._jobs.set_counters, self.job.id, self.counters)
        await self.flush()
        await self.check_cancel()

    async def ingest(self, page: CrawledPage) -> None:
        extra = {"etag": page.validators.etag, "last_modified": page.validators.last_modified}
        source = Source(
            name=page.title or page.url,
            data=page.body,
            kind=SourceKind.URL,
            mime_type=page.mime_type,
            facts=DocumentFacts(
                title=page.title, url=page.url, extra={k: v for k, v in extra.items() if v is not None}
            ),
            source_config_id=self.job.source_config_id,
        )
        result = await self.r._ingestor.attempt(self.index, source)  # one page's failure is its own
        if isinstance(result, IngestError):
            self.count(f"skipped: {result.reason}")
            await self.say(f"skipped: {page.url}: {result.reason}", "warning")
            return
        self.count(f"documents_{result.outcome.value}")
        self.count("chunks", result.chunks if result.outcome != Outcome.UNCHANGED else 0)
        await self.unmiss(page.url, extra)
        verb = {"added": "added", "updated": "updated", "unchanged": "unchanged"}[result.outcome.value]
        await self.say(f"{verb}: {page.url} ({result.chunks} chunk{'' if result.chunks == 1 else 's'})")

    async def unmiss(self, url: str, validators: dict[str, str | None] | None = None) -> None:
        document = self.by_url.get(url)
        if document is None:
            return
        updates: dict[str, object] = {"missed_crawls": None}
        if validators:
            updates.update(validators)
        if document.meta.get("missed_crawls") or validators:
            await asyncio.to_thread(self.r._documents.update_meta, document.id, updates)

    async def remove_gone(self, page: CrawledPage) -> None:
        document = self.by_url.pop(page.url, None)
        if document is None:  # a link to a page that does not exist
            self.count("links_broken")
            await self.say(f"not found: {page.url} ({page.reason or 'gone'})", "warning")
            return
        await self.r._ingestor.remove(self.index, [document.id])
        self.count("documents_removed")
        await self.say(f"removed: {page.url} ({page.reason or 'gone'})")

    async def prune(self) -> None:
        """Pages indexed before but missing from this complete crawl: removed the second
        time in a row."""
        for url, document in list(self.by_url.items()):
            if url in self.seen:
                continue
            missed = int(document.meta.get("missed_crawls") or 0) + 1
            if missed >= MISSED_CRAWLS_BEFORE_REMOVAL:
                await self.r._ingestor.remove(self.index, [document.id])
                self.count("documents_removed")
                await self.say(f"removed: {url} (missing from {missed} crawls in a row)")
            else:
                await asyncio.to_thread(self.r._documents.update_meta, document.id, {"missed_crawls": missed})
                await self.say(f"missing this time: {url} (removed if missing again)")


def summary(counters: Mapping[str, int], report: CrawlReport) -> str:
    skipped = sum(v for k, v in counters.items() if k.startswith("skipped: "))
    return (
        f"done in {report.seconds:.0f} s: {counters.get('pages_fetched', 0)} pages fetched, "
        f"{counters.get('pages_unchanged', 0)} unchanged, {skipped} skipped, "
        f"{counters.get('pages_failed', 0)} failed; documents {counters.get('documents_added', 0)} added, "
        f"{counters.get('documents_updated', 0)} updated, {counters.get('documents_removed', 0)} removed; "
        f"{counters.get('chunks', 0)} chunks"
    )


class JobWorker:
    """Takes queued jobs and runs up to `concurrency` at once, until stopped.

    At start it marks jobs interrupted whose worker stopped beating (a killed process), so
    they are taken again and resumed.
    """

    def __init__(
        self,
        jobs: IndexingJobs,
        runner: JobRunner,
        *,
        concurrency: int = 2,
        poll_seconds: float = 2.0,
        stale_after: timedelta = timedelta(seconds=30),
    ) -> None:
        self._jobs = jobs
        self._runner = runner
        self._concurrency = concurrency
        self._poll_seconds = poll_seconds
        self._stale_after = stale_after
        self._running: set[asyncio.Task[JobRef]] = set()

    async def run(self, stop: asyncio.Event, worker: str) -> None:
        repository = self._jobs.repository
        while not stop.is_set():
            for job in await asyncio.to_thread(repository.interrupt_stale, self._stale_after):
                log.warning("indexing job %s was interrupted; it will resume", job.id)
            while len(self._running) < self._concurrency:
                taken = await asyncio.to_thread(repository.claim, worker)
                if taken is None:
                    break
                task = asyncio.create_task(self._runner.run(taken))
                self._running.add(task)
                task.add_done_callback(self._finished)
            await self._idle(stop)
        for task in self._running:
            task.cancel()
        await asyncio.gather(*self._running, return_exceptions=True)

    def _finished(self, task: asyncio.Task[JobRef]) -> None:
        self._running.discard(task)
        self._jobs.wake.set()

    async def _idle(self, stop: asyncio.Event) -> None:
        wake = self._jobs.wake
        waiters = [asyncio.create_task(wake.wait()), asyncio.create_task(stop.wait())]
        try:
            await asyncio.wait(waiters, timeout=self._poll_seconds, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in waiters:
                waiter.cancel()
        wake.clear()
