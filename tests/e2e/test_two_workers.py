"""Two `lore worker` processes on one PostgreSQL database and one Chroma server: every
queued job is run by exactly one of them (row locks, SKIP LOCKED), both take a share, and
no page is fetched twice for the same job."""

from __future__ import annotations

import asyncio
import os
import select
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
JOBS = 6
PAGES = 5


@pytest.fixture
def database_url(postgres_admin_url: str) -> Iterator[str]:
    from tests.support.postgres import create_database, drop_database

    url = create_database(postgres_admin_url)
    yield url
    drop_database(postgres_admin_url, url)


def start_worker(home: Path, database_url: str, chroma: tuple[str, int]) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "OPENAI_", "LORE_"))}
    env.update(
        LORE_HOME=str(home),
        DATABASE_URL=database_url,
        CHROMA_HOST=chroma[0],
        CHROMA_PORT=str(chroma[1]),
        LORE_CRAWL_ALLOW="127.0.0.1",
        LORE_CRAWL_DELAY_SECONDS="0.05",
        LORE_JOB_WORKERS="1",
    )
    return subprocess.Popen([LORE, "worker"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def ready(worker: subprocess.Popen[bytes], timeout: float = 60.0) -> str:
    """Wait for the worker's greeting; its name."""
    assert worker.stdout is not None
    readable, _, _ = select.select([worker.stdout], [], [], timeout)
    assert readable, "the worker did not start"
    line = worker.stdout.readline().decode()
    assert line.startswith("worker "), (
        line,
        worker.stderr.read().decode() if worker.poll() is not None else "",
    )
    return line.split()[1]


def stop(worker: subprocess.Popen[bytes]) -> str:
    worker.terminate()
    _, errors = worker.communicate(timeout=30)
    return errors.decode()


@pytest.mark.e2e
@pytest.mark.postgres
@pytest.mark.chroma_server
def test_two_worker_processes_share_the_jobs_and_never_run_one_twice(
    tmp_path: Path, database_url: str, chroma_server: tuple[str, int]
) -> None:
    home = tmp_path / "home"
    settings = Settings(
        _env_file=None,
        lore_home=home,
        database_url=database_url,
        chroma_host=chroma_server[0],
        chroma_port=chroma_server[1],
        lore_crawl_allow="127.0.0.1",
    )
    services = build_services(settings)
    workers = [start_worker(home, database_url, chroma_server) for _ in range(2)]
    errors, indexes = "", []
    try:
        names = {ready(w) for w in workers}
        assert len(names) == 2
        with Site(pages=PAGES) as site:
            actor = asyncio.run(local_dm(services))
            jobs = []
            for n in range(JOBS):
                index = asyncio.run(services.catalog.create_shared(actor.place, f"docs-{n}"))
                source = asyncio.run(services.jobs.attach_site(index, [site.url("/docs/")]))
                jobs.append(asyncio.run(services.jobs.start_indexing_job(index, source)))
                indexes.append(index)
            repository = services.jobs.repository
            deadline = time.monotonic() + 180
            while not all(repository.get(j.id).finished for j in jobs):
                assert time.monotonic() < deadline, "the workers did not finish the jobs"
                time.sleep(0.2)
            errors = "".join(stop(w) for w in workers)

            finished = [repository.get(j.id) for j in jobs]
            assert [j.state for j in finished] == [JobState.SUCCEEDED] * JOBS, errors[-2000:]
            assert {j.worker for j in finished} == names, "both workers took a share"
            for job in finished:
                assert (
                    sum(1 for line in repository.lines(job.id) if line.message.startswith("running on ")) == 1
                )
            for path in ["/docs/", *(f"/docs/page-{n}" for n in range(1, PAGES + 1))]:
                assert site.hits(path) == JOBS, f"{path}: fetched {site.hits(path)} times for {JOBS} jobs"
            for index in indexes:
                documents = services.documents.list_ready(index.id, limit=100)
                assert len(documents) == PAGES + 2  # the pages, /docs/ and /docs/hidden
                chunks = sum(d.chunk_count for d in documents)
                assert services.vectors.count(collection_for(services.indexes.get(index.id))) == chunks
    finally:
        for worker in workers:
            if worker.poll() is None:
                stop(worker)
        for index in indexes:
            services.vectors.drop(collection_for(services.indexes.get(index.id)))
        asyncio.run(services.aclose())
