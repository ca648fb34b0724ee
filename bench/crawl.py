"""`python -m bench.crawl [--quick]`: crawl throughput, first crawl and unchanged re-crawl.

A generated documentation site (`tests.support.site.Site`) serves on 127.0.0.1 from its own
thread. Lore crawls it as it crawls any attached site: `attach_site`, `start_indexing_job`,
and the worker `bot.app.workers.build_worker` builds, running until the job ends. A second job
on the unchanged site measures a refresh (conditional requests answered 304, nothing
re-embedded). The `Crawler` alone, with a no-op `on_page`, then crawls the same site twice
(full, then conditional), so the fetch side can be told apart from the ingest side.

Politeness delay off and loopback allowed (settings); the per-source options raise the
page and depth limits above the site's size, as a user would for a large site.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import run_alone
from bench.syncs import finished_job
from bot.app.local import local_dm
from bot.app.services import Services, build_services
from bot.app.settings import Settings
from bot.app.workers import build_worker, crawl_limits
from knowledge.backends.embedding import Embedder, embed_batches
from knowledge.extraction import extract
from knowledge.indexing.chunking import ChunkSpec, chunk_text
from knowledge.sources.crawl import CrawledPage, Crawler, CrawlReport, Validators
from knowledge.sources.fetch import Fetcher
from knowledge.sources.web import AllowList
from storage.records import IndexRef, JobRef, SourceConfigRef
from tests.support.site import Site

BATCH_CHUNKS = 256
"""`Ingestor.add_many`'s default batch."""


@dataclass(frozen=True)
class SiteShape:
    pages: int
    padding: int
    """Bytes of filler text and links per page (`Site`'s option)."""

    @property
    def options(self) -> dict[str, object]:
        """A source's limit overrides: room for every page, at any depth of the site's tree."""
        return {"max_pages": self.pages + 50, "max_depth": self.pages // 10 + 20}


def settings(home: Path) -> Settings:
    return Settings(
        _env_file=None,
        lore_home=home,
        database_url=None,
        chroma_host=None,
        lore_crawl_delay_seconds=0,
        lore_crawl_allow="127.0.0.1",
    )


# -- indexing jobs ------------------------------------------------------------------------


@dataclass(frozen=True)
class JobRun:
    job: JobRef
    wall_seconds: float
    """From queueing the job to seeing it finished (the worker's pick-up included)."""
    statuses: Counter[int]
    """HTTP statuses the site answered during the job."""
    limits_hit: list[str]

    @property
    def pages(self) -> int:
        counters = self.job.counters
        return counters.get("pages_fetched", 0) + counters.get("pages_unchanged", 0)

    def as_json(self) -> dict[str, Any]:
        seconds = self.job.seconds
        counters = self.job.counters
        return {
            "state": self.job.state.value,
            "pages": self.pages,
            "pages_fetched": counters.get("pages_fetched", 0),
            "pages_unchanged": counters.get("pages_unchanged", 0),
            "seconds": round(seconds, 2),
            "wall_seconds": round(self.wall_seconds, 2),
            "pages_per_s": round(self.pages / seconds, 2) if seconds else 0.0,
            "chunks": counters.get("chunks", 0),
            "documents_added": counters.get("documents_added", 0),
            "http_statuses": {str(status): n for status, n in sorted(self.statuses.items())},
            "limits_hit": self.limits_hit,
        }


async def indexing_jobs(services: Services, site: Site, shape: SiteShape) -> tuple[JobRun, JobRun]:
    """A first crawl of the site into a fresh index, then a refresh of the unchanged site,
    both run by the worker the bot runs."""
    actor = await local_dm(services, "bench")
    index = await services.catalog.create_shared(actor.place, "bench-crawl")
    source = await services.jobs.attach_site(
        index, [site.url("/docs/")], schedule="never", options=shape.options
    )
    await services.embedder.embed(["load the model before the clock starts"])
    worker, name = build_worker(services)
    stop = asyncio.Event()
    task = asyncio.create_task(worker.run(stop, name), name="bench-job-worker")
    try:
        first = await one_job(services, site, index, source, "manual")
        again = await one_job(services, site, index, source, "refresh")
    finally:
        stop.set()
        await task
    return first, again


async def one_job(
    services: Services, site: Site, index: IndexRef, source: SourceConfigRef, trigger: str
) -> JobRun:
    """Queue a job and wait for the worker to finish it (its state lives in SQL: polled)."""
    seen = len(site.log)
    started = time.perf_counter()
    job = await finished_job(services, index, source, trigger, what="indexing job")
    wall = time.perf_counter() - started
    lines = [line.message async for line in services.jobs.tail_indexing_job(job.id, follow=False)]
    limits = [line.removeprefix("limit reached: ") for line in lines if line.startswith("limit reached: ")]
    statuses = Counter(hit.status for hit in site.log[seen:])
    return JobRun(job, wall, statuses, limits)


# -- the crawler alone --------------------------------------------------------------------


@dataclass(frozen=True)
class CrawlOnly:
    report: CrawlReport
    pages: dict[str, tuple[Validators, tuple[str, ...]]]
    """Each page handled: its validators and links, what a refresh sends back."""
    fetched: list[CrawledPage]

    def as_json(self) -> dict[str, Any]:
        pages = self.report.fetched + self.report.unchanged
        seconds = self.report.seconds
        return {
            "pages": pages,
            "pages_fetched": self.report.fetched,
            "pages_unchanged": self.report.unchanged,
            "seconds": round(seconds, 3),
            "pages_per_s": round(pages / seconds, 1) if seconds else 0.0,
            "limits_hit": self.report.limits_hit,
        }


async def crawl_alone(
    settings: Settings, site: Site, options: Mapping[str, object], previous: CrawlOnly | None = None
) -> CrawlOnly:
    """The `Crawler` the worker would build for this source, with nothing behind `on_page`;
    given a `previous` crawl, a refresh that asks for each page conditionally."""
    limits = crawl_limits(settings, options)
    fetcher = Fetcher(
        AllowList.parse(settings.lore_crawl_allow),
        max_bytes=limits.max_page_bytes,
        timeout=limits.request_timeout,
    )
    handled: dict[str, tuple[Validators, tuple[str, ...]]] = {}
    fetched: list[CrawledPage] = []

    async def on_page(page: CrawledPage) -> None:
        if page.outcome in ("fetched", "unchanged"):
            handled[page.url] = (page.validators, page.links)
        if page.outcome == "fetched":
            fetched.append(page)

    known = {url: v for url, (v, _) in previous.pages.items()} if previous else {}
    links = {url: list(ls) for url, (_, ls) in previous.pages.items()} if previous else {}
    report = await Crawler(fetcher, limits).crawl(
        [site.url("/docs/")], on_page, known=known, known_links=links
    )
    return CrawlOnly(report, handled, fetched)


# -- the embedder alone -------------------------------------------------------------------


def page_texts(page: CrawledPage, max_bytes: int) -> list[str]:
    """The texts a job embeds for `page`: extracted and chunked as `Ingestor` does it."""
    name = page.title or page.url
    extracted = extract(page.body, name, mime_type=page.mime_type, max_bytes=max_bytes)
    title = page.title or extracted.title or name
    return [c.embedding_text(title) for c in chunk_text(extracted.text, title=title, spec=ChunkSpec())]


async def embedder_floor(embedder: Embedder, pages: list[list[str]]) -> dict[str, Any]:
    """The embedder alone on the crawl's chunk texts: a page per call, as a job hands them
    to it, and in `add_many`'s batches of `BATCH_CHUNKS`, as an upload of many files is."""

    async def timed(groups: list[list[str]]) -> dict[str, float]:
        started = time.perf_counter()
        for texts in groups:
            await embed_batches(embedder, texts)
        seconds = time.perf_counter() - started
        return {"seconds": round(seconds, 2), "chunks_per_s": round(chunks / seconds, 2)}

    chunks = sum(len(texts) for texts in pages)
    flat = [text for texts in pages for text in texts]
    batched = [flat[i : i + BATCH_CHUNKS] for i in range(0, len(flat), BATCH_CHUNKS)]
    return {"chunks": chunks, "page_at_a_time": await timed(pages), "batched": await timed(batched)}


# -- the run ------------------------------------------------------------------------------


async def run(workdir: Path, quick: bool) -> dict[str, Any]:
    """Indexing jobs (first crawl, unchanged re-crawl), then the crawler alone (the same
    two), against one loopback site; Lore's files stay under `workdir`."""
    shape = SiteShape(pages=10, padding=1000) if quick else SiteShape(pages=200, padding=4000)
    config = settings(workdir / "lore")
    load_before = os.getloadavg()[0]
    with Site(pages=shape.pages, padding=shape.padding) as site:
        services = build_services(config)
        try:
            first, again = await indexing_jobs(services, site, shape)
            fetch_first = await crawl_alone(config, site, shape.options)
            fetch_again = await crawl_alone(config, site, shape.options, fetch_first)
            texts = [
                await asyncio.to_thread(page_texts, page, config.max_file_bytes)
                for page in fetch_first.fetched
            ]
            floor = await embedder_floor(services.embedder, texts)
        finally:
            await services.aclose()
    chunks = first.job.counters.get("chunks", 0)
    if chunks != floor["chunks"]:
        raise RuntimeError(f"the job made {chunks} chunks, extraction alone {floor['chunks']}")
    crawl_rate = chunks / first.job.seconds
    return {
        "quick": quick,
        "load_average": {"before": round(load_before, 2), "after": round(os.getloadavg()[0], 2)},
        "site": {"pages": shape.pages, "padding_bytes": shape.padding, "options": shape.options},
        "first_crawl": first.as_json(),
        "recrawl": {
            **again.as_json(),
            "seconds_vs_first": round(again.job.seconds / first.job.seconds, 3),
        },
        "crawl_only": {
            "first": fetch_first.as_json(),
            "recrawl": fetch_again.as_json(),
        },
        "embedder": floor,
        "ratios": {
            "first_crawl_chunks_per_s": round(crawl_rate, 2),
            "first_crawl_vs_embedder_page_at_a_time": round(
                crawl_rate / floor["page_at_a_time"]["chunks_per_s"], 3
            ),
            "first_crawl_vs_embedder_batched": round(crawl_rate / floor["batched"]["chunks_per_s"], 3),
        },
    }


def main() -> None:
    run_alone("crawl", run, "a ten-page site (seconds)")


if __name__ == "__main__":
    main()
