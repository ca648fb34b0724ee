"""Indexing jobs end to end: a real crawl of the loopback site into a real index, refreshes
that cost nothing when nothing changed, removal of pages that went away, cancellation."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta

import pytest

from knowledge.indexing.ingest import Source, collection_for
from knowledge.indexing.metadata import DocumentFacts
from knowledge.sources.crawl import Crawler, CrawlLimits
from knowledge.sources.fetch import Fetcher
from knowledge.sources.jobs import IndexingJobs, JobRunner, JobWorker, Schedule
from knowledge.sources.web import AllowList
from storage.leases import Writer
from storage.records import IndexRef, JobRef, NewChunk, NewDocument, SourceConfigRef
from storage.repositories.documents import DocumentRepository
from storage.repositories.jobs import JobRepository
from storage.repositories.sources import SourceRepository
from storage.values import JobState, SourceKind, utcnow
from storage.vectors import VectorRecord
from tests.knowledge.conftest import Stack
from tests.support.site import Site

LOOPBACK = AllowList.parse("127.0.0.1")
POLL = 0.02


@dataclass
class Jobs:
    stack: Stack
    site: Site
    service: IndexingJobs
    worker: JobWorker
    index: IndexRef

    async def run(self, job: JobRef) -> JobRef:
        """Run the worker until `job` ends."""
        stop = asyncio.Event()
        task = asyncio.create_task(self.worker.run(stop, "test-worker"))
        try:
            return await self.when(job, lambda j: j.finished)
        finally:
            stop.set()
            await task

    async def when(self, job: JobRef, condition: Callable[[JobRef], bool], seconds: float = 60) -> JobRef:
        """The job once `condition` holds (its state lives in SQL, so this polls)."""
        for _ in range(int(seconds / POLL)):
            if condition(job := await self.service.get_indexing_job_status(job.id)):
                return job
            await asyncio.sleep(POLL)
        raise AssertionError(f"job {job.id} never got there: {job}")

    async def crawl(self, source: SourceConfigRef) -> JobRef:
        return await self.run(await self.service.start_indexing_job(self.index, source))

    def urls(self) -> set[str]:
        return {d.url or "" for d in self.stack.documents.list_ready(self.index.id, limit=1000)}


@pytest.fixture
async def jobs(stack: Stack) -> AsyncIterator[Jobs]:
    sources, repository = SourceRepository(stack.db), JobRepository(stack.db)
    service = IndexingJobs(repository, sources, stack.indexes, stack.ingestor, LOOPBACK)

    def make_crawler(options: Mapping[str, object]) -> Crawler:
        limits = CrawlLimits(delay_seconds=0.0, request_timeout=5.0, max_depth=10)
        return Crawler(Fetcher(LOOPBACK, max_bytes=limits.max_page_bytes), limits)

    runner = JobRunner(
        repository,
        sources,
        stack.indexes,
        stack.documents,
        stack.ingestor,
        make_crawler,
        worker="test-worker",
    )
    worker = JobWorker(service, runner, poll_seconds=0.05, stale_after=timedelta(minutes=5))
    async with Site(pages=12) as site:
        yield Jobs(stack, site, service, worker, stack.index("docs"))


def docs_pages(site: Site) -> set[str]:
    return {site.url("/docs/")} | {site.url(f"/docs/page-{n}") for n in range(1, site.pages + 1)}


async def test_a_site_is_crawled_into_the_index_with_counters_and_a_log(jobs: Jobs) -> None:
    source = await jobs.service.attach_site(jobs.index, [jobs.site.url("/docs/")])
    assert source.name == "127.0.0.1/docs"
    job = await jobs.crawl(source)
    assert job.state == JobState.SUCCEEDED, job.error
    expected = docs_pages(jobs.site) | {jobs.site.url("/docs/hidden")}  # the sitemap's page too
    assert jobs.urls() == expected
    counters = job.counters
    assert counters["documents_added"] == len(expected) == counters["pages_fetched"]
    assert counters["pages_found"] >= len(expected) and counters["chunks"] >= len(expected)
    assert counters["skipped: robots.txt disallows it"] == 1
    assert jobs.site.hits("/docs/private/secret") == 0 and jobs.site.hits("/blog/post-1") == 0
    lines = [line.message async for line in jobs.service.tail_indexing_job(job.id)]
    assert lines[0].startswith("queued") and lines[-1].startswith("done in")
    assert any(line.startswith("added: ") for line in lines)
    hits = await jobs.stack.retriever.search([jobs.index], "Some text about Page 7")
    assert hits.hits[0].document.url == jobs.site.url("/docs/page-7")
    info = await jobs.service.get_index_info(jobs.index)
    assert info.last_job is not None and info.last_job.id == job.id
    assert [s.id for s in info.sources] == [source.id] and info.stats.documents == len(expected)
    assert info.sources[0].last_refresh_at is not None


def half_written(
    stack: Stack, index: IndexRef, url: str, source_config_id: int | None, *, killed: bool = True
) -> int:
    """What a worker killed between writing a document's vectors and marking it ready leaves:
    a pending document whose vectors are in the store, its writer's lease run out (or, not
    `killed`, what a live process is writing now)."""
    documents = stack.documents
    if killed:
        documents = DocumentRepository(stack.db, writer=Writer("killed", lease_seconds=-1.0))
    new = NewDocument(
        index.id,
        SourceKind.URL,
        url,
        url,
        "text/html",
        "0" * 64,
        10,
        10,
        url=url,
        source_config_id=source_config_id,
    )
    document, ids = documents.create_pending(new, [NewChunk(0, "", "half written words")])
    if killed:
        documents.close()
    vector = stack.embedder.embed_sync(["half written words"])[0].tolist()
    stack.vectors.add(
        collection_for(index),
        [VectorRecord(ids[0], vector, "half written words", {"document_id": document.id, "position": 0})],
    )
    return document.id


async def test_a_job_clears_what_a_killed_run_of_it_left_half_written(jobs: Jobs) -> None:
    source = await jobs.service.attach_site(jobs.index, [jobs.site.url("/docs/")])
    mine = half_written(jobs.stack, jobs.index, jobs.site.url("/docs/page-3"), source.id)
    live = half_written(jobs.stack, jobs.index, jobs.site.url("/docs/page-9"), source.id, killed=False)
    upload = half_written(jobs.stack, jobs.index, "notes.txt", None)  # another ingest's
    job = await jobs.crawl(source)
    assert job.state == JobState.SUCCEEDED, job.error
    left = {d.id for d in jobs.stack.documents.unfinished()}
    assert mine not in left and upload in left and live in left  # a live writer's is never touched
    ready = jobs.stack.documents.list_ready(jobs.index.id, limit=1000)
    chunks = sum(d.chunk_count for d in ready)
    assert jobs.stack.vectors.count(collection_for(jobs.index)) == chunks + 2  # and the others'


async def test_a_refresh_of_an_unchanged_site_downloads_and_embeds_nothing(jobs: Jobs) -> None:
    source = await jobs.service.attach_site(jobs.index, [jobs.site.url("/docs/")])
    first = await jobs.crawl(source)
    bodies_before = len(jobs.site.log)
    again = await jobs.run(await jobs.service.start_indexing_job(jobs.index, source, trigger="refresh"))
    assert again.state == JobState.SUCCEEDED
    assert again.counters.get("pages_fetched", 0) == 0
    assert again.counters["pages_unchanged"] == first.counters["pages_fetched"]
    assert again.counters.get("chunks", 0) == 0 and again.counters.get("documents_removed", 0) == 0
    refreshed = jobs.site.log[bodies_before:]
    assert [hit.path for hit in refreshed if hit.path.startswith("/docs/") and hit.status == 200] == []
    assert sum(hit.status == 304 for hit in refreshed) == first.counters["pages_fetched"]
    assert jobs.urls() == docs_pages(jobs.site) | {jobs.site.url("/docs/hidden")}


async def test_pages_that_disappear_are_removed(jobs: Jobs) -> None:
    source = await jobs.service.attach_site(jobs.index, [jobs.site.url("/docs/")])
    await jobs.crawl(source)
    orphan = jobs.site.url("/docs/old-page")  # indexed once, no longer linked from anywhere
    await jobs.stack.ingestor.add(
        jobs.index,
        Source(
            name="Old page",
            data=b"<html><body><p>An old page about retired deploy scripts.</p></body></html>",
            kind=SourceKind.URL,
            mime_type="text/html",
            facts=DocumentFacts(url=orphan),
            source_config_id=source.id,
        ),
    )
    jobs.site.pages = 5  # pages 6-12 now answer 404
    second = await jobs.crawl(source)
    gone = {jobs.site.url(f"/docs/page-{n}") for n in range(6, 11)}  # still linked from /docs/
    assert second.counters["pages_gone"] >= len(gone) and not gone & jobs.urls()  # removed at once
    assert orphan in jobs.urls()  # missing once: kept, in case it was a hiccup
    third = await jobs.crawl(source)
    assert orphan not in jobs.urls() and third.counters["documents_removed"] == 1
    assert jobs.urls() == docs_pages(jobs.site) | {jobs.site.url("/docs/hidden")}


async def test_a_cancelled_job_stops_and_keeps_what_it_indexed(jobs: Jobs) -> None:
    source = await jobs.service.attach_site(jobs.index, [jobs.site.url("/docs/")])
    job = await jobs.service.start_indexing_job(jobs.index, source)
    assert (await jobs.service.start_indexing_job(jobs.index, source)).id == job.id  # no second job
    queued = await jobs.service.cancel(job.id)
    assert queued.state == JobState.CANCELLED  # not yet taken: ends at once
    job = await jobs.service.start_indexing_job(jobs.index, source)
    stop = asyncio.Event()
    task = asyncio.create_task(jobs.worker.run(stop, "test-worker"))
    await jobs.when(job, lambda j: j.counters.get("pages_fetched", 0) >= 2)
    await jobs.service.cancel(job.id)
    final = await jobs.when(job, lambda j: j.finished)
    stop.set()
    await task
    assert final.state == JobState.CANCELLED
    assert 2 <= len(jobs.urls()) < len(docs_pages(jobs.site))


async def test_detaching_a_site_removes_its_documents(jobs: Jobs) -> None:
    source = await jobs.service.attach_site(jobs.index, [jobs.site.url("/docs/")])
    await jobs.crawl(source)
    removed = await jobs.service.detach_docsource_from_index(jobs.index, source)
    assert removed == len(docs_pages(jobs.site)) + 1 and jobs.urls() == set()
    assert await jobs.service.list_docsources(jobs.index) == []


async def test_sources_due_a_refresh_are_queued_by_their_schedule(jobs: Jobs) -> None:
    daily = await jobs.service.attach_site(jobs.index, [jobs.site.url("/docs/")])
    never = await jobs.service.attach_site(jobs.index, [jobs.site.url("/edge/")], schedule="never")
    [queued] = await jobs.service.enqueue_due()  # never refreshed: due at once
    assert queued.source_config_id == daily.id and queued.trigger == "schedule"
    assert await jobs.service.enqueue_due() == []  # already queued: not twice
    await jobs.run(queued)
    assert await jobs.service.enqueue_due() == []  # refreshed just now: due tomorrow
    sources = SourceRepository(jobs.stack.db)
    sources.mark_refreshed(daily.id, at=utcnow() - timedelta(days=1, minutes=1))
    assert [j.source_config_id for j in await jobs.service.enqueue_due()] == [daily.id]
    assert never.schedule == "never"


def test_schedules_are_read_from_what_people_type() -> None:
    def interval(text: str) -> timedelta | None:
        schedule = Schedule.parse(text)
        assert schedule is not None, text
        return schedule.interval

    assert interval("daily") == timedelta(days=1)
    assert interval("every 6 hours") == timedelta(hours=6)
    assert interval("Every  2 WEEKS") == timedelta(weeks=2)
    assert interval("never") is None and Schedule.parse("every 0 days") is None
    assert str(Schedule.parse("Weekly")) == "weekly" and str(Schedule.parse("off")) == "never"
    assert str(Schedule.parse("every 1 days")) == "every 1 day"
    assert Schedule.parse("sometimes") is None and Schedule.parse("every -3 hours") is None
    assert Schedule.stored("garbage").never and not Schedule.stored("hourly").never
