"""`JobRunner`: runs one taken job to its end (crawl or sync, ingest, prune, summarise),
beating while it runs so that a job whose worker died is resumed elsewhere. Every write of
the run carries the job's claim, so once another worker has taken the job over (this one
was paused past the stale time) the database refuses them (`ClaimLost`) and the run stops
without another word."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from knowledge.errors import IngestError, KnowledgeError
from knowledge.indexing.ingest import Ingestor, IngestResult, Outcome, Source
from knowledge.indexing.metadata import DocumentFacts
from knowledge.sources.jobs.context import MakeCrawler, SourceSync
from knowledge.sources.jobs.counters import Count, JobCounters, skipped_key
from storage.records import ClaimLost, DocumentRef, JobRef, SourceConfigRef
from storage.repositories.documents import DocumentRepository
from storage.repositories.indexes import IndexRepository
from storage.repositories.jobs import JobRepository
from storage.repositories.sources import SITE, SourceRepository
from storage.values import JobState, SourceKind

if TYPE_CHECKING:
    from knowledge.sources.crawl import CrawledPage, CrawlReport

log = logging.getLogger(__name__)
T = TypeVar("T")
MISSED_CRAWLS_BEFORE_REMOVAL = 2  # a page missing once may be a hiccup; twice, it is gone


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
        beat = asyncio.create_task(self._beat(job, run))
        try:
            try:
                state, error = await run.execute()
            except ClaimLost:
                raise
            except KnowledgeError as exc:  # said on purpose (bad credentials …): no traceback
                log.warning("indexing job %s failed: %s", job.id, exc)
                state, error = JobState.FAILED, str(exc)
                await run.say(f"failed: {error}", "error")
            except Exception as exc:
                log.exception("indexing job %s failed", job.id)
                state, error = JobState.FAILED, f"{type(exc).__name__}: {exc}"
                await run.say(f"failed: {error}", "error")
            if not run.lost:
                await asyncio.to_thread(self._jobs.set_counters, job.id, run.counters, claim=job.claim)
                return await asyncio.to_thread(self._jobs.finish, job.id, state, error, claim=job.claim)
        except ClaimLost:
            log.warning("indexing job %s was taken over by another worker; this one stops", job.id)
        finally:
            beat.cancel()
        return await asyncio.to_thread(self._jobs.get, job.id)

    async def _beat(self, job: JobRef, run: _Run) -> None:
        while True:
            await asyncio.sleep(self._heartbeat_seconds)
            if not await asyncio.to_thread(self._jobs.heartbeat, job.claim):
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

    def count(self, name: Count, n: int = 1) -> None:
        self.counters[name] = self.counters.get(name, 0) + n

    def skip(self, reason: str) -> None:
        key = skipped_key(reason)
        self.counters[key] = self.counters.get(key, 0) + 1

    async def say(self, message: str, level: str = "info") -> None:
        await self.fenced(self.r._jobs.log, self.job.id, message, level, claim=self.job.claim)

    async def fenced(self, write: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run a write that carries the job's claim; a refused one marks the run lost."""
        try:
            return await asyncio.to_thread(write, *args, **kwargs)
        except ClaimLost:
            self.lost = True
            raise

    def stopped(self) -> bool:
        """The crawler's question between pages (answered from flags, not the database)."""
        return self.lost or self.cancelled

    async def check_cancel(self) -> None:
        self.cancelled = self.cancelled or await asyncio.to_thread(self.r._jobs.cancel_requested, self.job.id)

    async def done_before(self) -> set[str]:
        return set(await asyncio.to_thread(self.r._jobs.pages, self.job.id))

    async def handled(self, key: str, outcome: str) -> None:
        await self.fenced(self.r._jobs.record_page, self.job.id, key, outcome, [], claim=self.job.claim)
        await self.fenced(self.r._jobs.set_counters, self.job.id, self.counters, claim=self.job.claim)
        await self.check_cancel()

    async def flush(self) -> None:
        """Write the crawler's log lines (it reports them synchronously)."""
        lines, self.lines = self.lines, []
        for line in lines:
            await self.say(line)

    async def execute(self) -> tuple[JobState, str | None]:
        from knowledge.sources.crawl import Validators  # the crawler's module loads only with jobs

        jobs = self.r._jobs
        if self.job.source_config_id is None:
            return JobState.FAILED, "its source was detached"
        source = await asyncio.to_thread(self.r._sources.get, self.job.source_config_id)
        self.index = await asyncio.to_thread(self.r._indexes.get, self.job.index_id)
        # One job per source runs at a time: documents of this source still half written
        # are what a killed worker left of an earlier run of it.
        await self.r._ingestor.repair({self.index.id: self.index}, source_config_id=source.id)
        if self.lost:
            return JobState.INTERRUPTED, None
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
        self.counters[Count.PAGES_FOUND] = max(len(self.discovered), report.found + len(done))
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
        await self.fenced(self.r._sources.mark_refreshed, source.id, claim=self.job.claim)
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
        self.count(Count.page(page.outcome))
        self.discovered.add(page.url)
        self.discovered.update(page.links)
        self.counters[Count.PAGES_FOUND] = max(self.counters.get(Count.PAGES_FOUND, 0), len(self.discovered))
        if page.outcome == "fetched":
            await self.ingest(page)
        elif page.outcome == "unchanged":
            self.count(Count.DOCUMENTS_UNCHANGED)
            await self.unmiss(page.url)
        elif page.outcome == "gone":
            await self.remove_gone(page)
        else:
            reason = page.reason or page.outcome
            if page.outcome == "skipped":
                self.skip(reason)
            await self.say(f"{page.outcome}: {page.url}: {reason}", "warning")
        if page.outcome in ("fetched", "unchanged"):
            self.seen.add(page.url)
        claim = self.job.claim
        await self.fenced(
            self.r._jobs.record_page, self.job.id, page.url, page.outcome, page.links, claim=claim
        )
        await self.fenced(self.r._jobs.set_counters, self.job.id, self.counters, claim=claim)
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
            claim=self.job.claim,
        )
        result = await self.fenced_ingest(source)  # one page's failure is its own
        if isinstance(result, IngestError):
            self.skip(result.reason)
            await self.say(f"skipped: {page.url}: {result.reason}", "warning")
            return
        self.count(Count.document(result.outcome.value))
        self.count(Count.CHUNKS, result.chunks if result.outcome != Outcome.UNCHANGED else 0)
        await self.unmiss(page.url, extra)
        verb = {"added": "added", "updated": "updated", "unchanged": "unchanged"}[result.outcome.value]
        await self.say(f"{verb}: {page.url} ({result.chunks} chunk{'' if result.chunks == 1 else 's'})")

    async def fenced_ingest(self, source: Source) -> IngestResult | IngestError:
        try:
            return await self.r._ingestor.attempt(self.index, source)
        except ClaimLost:
            self.lost = True
            raise

    async def remove(self, document: DocumentRef) -> None:
        try:
            await self.r._ingestor.remove(self.index, [document.id], claim=self.job.claim)
        except ClaimLost:
            self.lost = True
            raise

    async def unmiss(self, url: str, validators: dict[str, str | None] | None = None) -> None:
        document = self.by_url.get(url)
        if document is None:
            return
        updates: dict[str, object] = {"missed_crawls": None}
        if validators:
            updates.update(validators)
        if document.meta.get("missed_crawls") or validators:
            await self.fenced(self.r._documents.update_meta, document.id, updates, claim=self.job.claim)

    async def remove_gone(self, page: CrawledPage) -> None:
        document = self.by_url.pop(page.url, None)
        if document is None:  # a link to a page that does not exist
            self.count(Count.LINKS_BROKEN)
            await self.say(f"not found: {page.url} ({page.reason or 'gone'})", "warning")
            return
        await self.remove(document)
        self.count(Count.DOCUMENTS_REMOVED)
        await self.say(f"removed: {page.url} ({page.reason or 'gone'})")

    async def prune(self) -> None:
        """Pages indexed before but missing from this complete crawl: removed the second
        time in a row."""
        for url, document in list(self.by_url.items()):
            if url in self.seen:
                continue
            missed = int(document.meta.get("missed_crawls") or 0) + 1
            if missed >= MISSED_CRAWLS_BEFORE_REMOVAL:
                await self.remove(document)
                self.count(Count.DOCUMENTS_REMOVED)
                await self.say(f"removed: {url} (missing from {missed} crawls in a row)")
            else:
                await self.fenced(
                    self.r._documents.update_meta,
                    document.id,
                    {"missed_crawls": missed},
                    claim=self.job.claim,
                )
                await self.say(f"missing this time: {url} (removed if missing again)")


def summary(counters: Mapping[str, int], report: CrawlReport) -> str:
    c = JobCounters(counters)
    return (
        f"done in {report.seconds:.0f} s: {c[Count.PAGES_FETCHED]} pages fetched, "
        f"{c[Count.PAGES_UNCHANGED]} unchanged, {sum(c.skipped.values())} skipped, "
        f"{c[Count.PAGES_FAILED]} failed; documents {c[Count.DOCUMENTS_ADDED]} added, "
        f"{c[Count.DOCUMENTS_UPDATED]} updated, {c[Count.DOCUMENTS_REMOVED]} removed; "
        f"{c[Count.CHUNKS]} chunks"
    )
