"""A worker process killed mid-crawl: the next worker finds the job, marks it interrupted,
resumes it without fetching the pages already handled, and leaves no duplicate chunks and
no orphan vectors."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.app.local import local_dm
from bot.app.services import build_services
from bot.app.settings import Settings
from knowledge.indexing.ingest import collection_for
from storage.values import JobState
from tests.support.site import Site

LORE = str(Path(sys.executable).with_name("lore"))
PAGES = 30


@pytest.fixture
def site() -> Iterator[Site]:
    with Site(pages=PAGES) as running:
        yield running


def settings(home: Path) -> Settings:
    return Settings(
        _env_file=None, lore_home=home, database_url=None, chroma_host=None, lore_crawl_allow="127.0.0.1"
    )


def worker(home: Path) -> subprocess.Popen[bytes]:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "OPENAI_", "DATABASE_", "CHROMA_"))
    }
    env.update(
        LORE_HOME=str(home),
        LORE_CRAWL_ALLOW="127.0.0.1",
        LORE_CRAWL_CONCURRENCY="1",
        LORE_CRAWL_DELAY_SECONDS="0.1",
        LORE_JOB_STALE_SECONDS="1",
    )
    return subprocess.Popen([LORE, "worker"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def wait_until(condition: object, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.mark.e2e
def test_a_killed_worker_s_job_is_resumed_by_the_next_one(tmp_path: Path, site: Site) -> None:
    home = tmp_path / "home"
    services = build_services(settings(home))
    try:
        actor = asyncio.run(local_dm(services))
        index = asyncio.run(services.catalog.create_shared(actor.place, "docs"))
        source = asyncio.run(services.jobs.attach_site(index, [site.url("/docs/")]))
        job = asyncio.run(services.jobs.start_indexing_job(index, source))
        repository = services.jobs.repository

        first = worker(home)
        try:
            wait_until(lambda: len(repository.pages(job.id)) >= 6, 120, "the first worker to handle 6 pages")
        finally:
            first.send_signal(signal.SIGKILL)
            first.communicate(timeout=30)
        handled_before_kill = repository.pages(job.id)
        assert repository.get(job.id).state == JobState.RUNNING  # as the dead worker left it

        second = worker(home)
        try:
            wait_until(lambda: repository.get(job.id).finished, 180, "the second worker to finish the job")
        finally:
            second.terminate()
            _, errors = second.communicate(timeout=30)
        finished = repository.get(job.id)
        assert finished.state == JobState.SUCCEEDED, (finished.error, errors.decode()[-2000:])
        assert any("interrupted" in line.message for line in repository.lines(job.id))

        for url in handled_before_kill:
            path = url.removeprefix(site.base_url)
            assert site.hits(path) <= 1, f"{path} was fetched again after the restart"
        documents = services.documents.list_ready(index.id, limit=1000)
        urls = [d.url for d in documents]
        assert len(urls) == len(set(urls)) == PAGES + 2  # the pages, /docs/ and /docs/hidden
        chunks = sum(d.chunk_count for d in documents)
        # What the killed worker left half written waits for its lease to run out (issue 36:
        # no process deletes another's work at start); its vectors, if it wrote them, stay
        # until a repair takes it over. Nothing else may differ.
        left = sum(d.chunk_count for d in services.documents.unfinished() if d.index_id == index.id)
        assert services.vectors.count(collection_for(services.indexes.get(index.id))) in (
            chunks,
            chunks + left,
        )
        assert services.indexes.stats(index.id).chunks == chunks
    finally:
        asyncio.run(services.aclose())
