"""`python -m bench.notion [--quick]`: Notion sync cost, first and unchanged, in requests and seconds.

The fake Notion (`tests.fakes.notion_server`, the real wire format, on loopback) serves a
shared handbook of 300 pages: twelve area pages under the handbook, pages under them, and a
database of rows; each page has headings, paragraphs, a bulleted list nested two deep, a
toggle holding a paragraph and a code block, so that reading a page follows its blocks'
children. Lore connects it as a user would (`Connections.connect`, a token), attaches the
workspace to an index and the worker the bot runs syncs it: a first sync, then a scheduled
re-sync with nothing changed (a listing newest first that stops at the last sync; no block
read). The client's pacing is off here (`LORE_NOTION_REQUESTS_PER_SECOND=0`) so that the
seconds are Lore's; at Notion's documented three requests a second, a sync takes at least
its requests ÷ 3 seconds, which the report says beside.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections import Counter
from pathlib import Path
from typing import Any

from cryptography.fernet import Fernet

from bench import run_alone
from bench.crawl import JOB_TIMEOUT, POLL_SECONDS
from bench.github import WORDS
from bot.app.local import local_dm
from bot.app.services import Services, build_services
from bot.app.settings import Settings
from bot.app.workers import build_worker
from knowledge.sources.connectors import Credentials, FolderSpec
from storage.records import IndexRef, JobRef, SourceConfigRef
from tests.fakes.notion_server import TOKEN, FakeBlock, FakeNotion

NOTION_RATE = 3.0
"""Notion's documented average rate for an integration, in requests a second."""


def words(n: int, count: int) -> str:
    return " ".join(WORDS[(n * 7 + w) % len(WORDS)] for w in range(count))


def blocks(fake: FakeNotion, n: int) -> list[FakeBlock]:
    b = fake.block
    return [
        b("heading_2", f"Section {n}"),
        b("paragraph", words(n, 80) + "."),
        b(
            "bulleted_list_item",
            words(n + 1, 12),
            b("bulleted_list_item", words(n + 2, 12), b("bulleted_list_item", words(n + 3, 12))),
        ),
        b("toggle", f"Details of {n}", b("paragraph", words(n + 4, 60) + ".")),
        b("code", {"rich_text": [f"TIMEOUT_{n} = {n % 90 + 10}\n"], "language": "python"}),
        b("paragraph", words(n + 5, 60) + "."),
    ]


def fill(fake: FakeNotion, pages: int) -> None:
    """A shared handbook of `pages` documents: twelve areas, pages under them, and a sixth of
    them as rows of a database in the handbook."""
    handbook = fake.add_page("Handbook", shared=True, blocks=blocks(fake, 0))
    areas = [fake.add_page(f"Area {a}", parent=handbook.id, blocks=blocks(fake, a)) for a in range(12)]
    database = fake.add_database(
        "Decisions", {"Name": "title", "Status": "select", "Summary": "rich_text"}, parent=handbook.id
    )
    rows = max(1, (pages - 13) // 6)
    for n in range(rows):
        fake.add_row(
            database,
            f"Decision {n}",
            {
                "Status": {"select": {"id": "s1", "name": "Accepted", "color": "green"}},
                "Summary": {"rich_text": [words(n, 30)]},
            },
            blocks=blocks(fake, n)[:3],
        )
    for n in range(pages - 13 - rows):
        fake.add_page(f"Page {n}", parent=areas[n % 12].id, blocks=blocks(fake, n))


def settings(home: Path) -> Settings:
    return Settings(
        _env_file=None,
        lore_home=home,
        database_url=None,
        chroma_host=None,
        lore_crawl_allow="127.0.0.1",
        lore_secret_key=Fernet.generate_key().decode(),
        lore_notion_requests_per_second=0,
    )


async def one_job(
    services: Services, fake: FakeNotion, index: IndexRef, source: SourceConfigRef, trigger: str
) -> dict[str, Any]:
    seen, read = len(fake.api_requests()), len(fake.children_served)
    started = time.perf_counter()
    job = await services.jobs.start_indexing_job(index, source, trigger=trigger)
    while not job.finished:
        if time.perf_counter() - started > JOB_TIMEOUT:
            raise TimeoutError(f"sync {job.id} did not finish in {JOB_TIMEOUT:g} s")
        await asyncio.sleep(POLL_SECONDS)
        job = await services.jobs.get_indexing_job_status(job.id)
    if job.state.value != "succeeded":
        raise RuntimeError(f"sync {job.id} ended {job.state.value}: {job.error}")
    return _job_json(job, fake.api_requests()[seen:], len(fake.children_served) - read)


def _job_json(job: JobRef, made: list[Any], children_read: int) -> dict[str, Any]:
    counters, seconds = job.counters, job.seconds
    pages = counters.get("pages_fetched", 0) + counters.get("pages_unchanged", 0)
    return {
        "pages": pages,
        "pages_fetched": counters.get("pages_fetched", 0),
        "pages_unchanged": counters.get("pages_unchanged", 0),
        "seconds": round(seconds, 2),
        "pages_per_s": round(pages / seconds, 1) if seconds else 0.0,
        "chunks": counters.get("chunks", 0),
        "requests": len(made),
        "requests_by_path": dict(Counter(_kind(r.path) for r in made).most_common()),
        "block_children_read": children_read,
        "seconds_at_notion_rate": round(len(made) / NOTION_RATE, 1),
    }


def _kind(path: str) -> str:
    """A request's endpoint, ids left out: `/v1/blocks/{id}/children`."""
    parts = path.split("/")
    return "/".join("{id}" if len(p) >= 32 else p for p in parts)


async def run(workdir: Path, quick: bool) -> dict[str, Any]:
    pages = 30 if quick else 300
    config = settings(workdir / "lore")
    load_before = os.getloadavg()[0]
    fake = FakeNotion().start_in_thread()
    try:
        fill(fake, pages)
        blocks_total = len(fake.blocks)
        services = build_services(config)
        try:
            actor = await local_dm(services, "bench")
            index = await services.catalog.create_shared(actor.place, "bench-notion")
            connection, _ = await services.connections.connect(
                "local", fake.base_url, Credentials(TOKEN), kind="notion"
            )
            source = await services.connections.attach(
                connection, index, [FolderSpec("workspace")], schedule="never"
            )
            await services.embedder.embed(["load the model before the clock starts"])
            worker, name = build_worker(services)
            stop = asyncio.Event()
            task = asyncio.create_task(worker.run(stop, name), name="bench-notion-worker")
            try:
                first = await one_job(services, fake, index, source, "manual")
                again = await one_job(services, fake, index, source, "schedule")
            finally:
                stop.set()
                await task
        finally:
            await services.aclose()
    finally:
        fake.stop()
    return {
        "quick": quick,
        "load_average": {"before": round(load_before, 2), "after": round(os.getloadavg()[0], 2)},
        "workspace": {"pages": pages, "blocks": blocks_total},
        "first_sync": first,
        "unchanged_resync": {**again, "seconds_vs_first": round(again["seconds"] / first["seconds"], 3)},
    }


def main() -> None:
    run_alone("notion", run, "thirty pages (seconds)")


if __name__ == "__main__":
    main()
