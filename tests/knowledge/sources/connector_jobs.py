"""Running connector syncs for real in tests: the jobs machinery (queue, worker, runner) over
a real stack, with a sleep that records waits instead of waiting."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta

from cryptography.fernet import Fernet

from knowledge.sources.connectors.registry import CONNECTORS
from knowledge.sources.connectors.service import ClientLimits, Connections
from knowledge.sources.connectors.sync import ConnectorSync, SyncPolicy
from knowledge.sources.crawl import Crawler
from knowledge.sources.jobs import IndexingJobs, JobRunner, JobWorker
from knowledge.sources.web import AllowList
from storage.records import DocumentRef, IndexRef, JobRef, SourceConfigRef
from storage.repositories.connections import ConnectionRepository
from storage.repositories.jobs import JobRepository
from storage.repositories.sources import SourceRepository
from storage.secrets import SecretBox
from tests.knowledge.conftest import Stack

LOOPBACK = AllowList.parse("127.0.0.1")


@dataclass
class Waits:
    """The sleep connectors get: records each wait, runs what a test queued, returns at once."""

    seconds: list[float] = field(default_factory=list)
    then: list[Callable[[], Awaitable[object]]] = field(default_factory=list)

    async def __call__(self, seconds: float) -> None:
        self.seconds.append(seconds)
        while self.then:
            await self.then.pop(0)()


async def run_to_end(jobs: IndexingJobs, worker: JobWorker, job: JobRef, *, rounds: int) -> JobRef:
    """Run `worker` until `job` ends (polling every 20 ms, `rounds` times at most)."""
    stop = asyncio.Event()
    task = asyncio.create_task(worker.run(stop, "test-worker"))
    try:
        for _ in range(rounds):
            job = await jobs.get_indexing_job_status(job.id)
            if job.finished:
                return job
            await asyncio.sleep(0.02)
        raise AssertionError(f"job {job.id} never finished")
    finally:
        stop.set()
        await task


@dataclass
class Jobs:
    stack: Stack
    connections: Connections
    jobs: IndexingJobs
    worker: JobWorker
    waits: Waits

    async def run(self, index: IndexRef, source: SourceConfigRef, trigger: str = "schedule") -> JobRef:
        source = SourceRepository(self.stack.db).get(source.id)
        return await self.run_job(await self.jobs.start_indexing_job(index, source, trigger=trigger))

    async def run_job(self, job: JobRef) -> JobRef:
        """Run the worker until `job` ends."""
        return await run_to_end(self.jobs, self.worker, job, rounds=6000)

    def documents(self, index: IndexRef) -> dict[str, DocumentRef]:
        """Every ready document, whoever may read it."""
        return {d.name: d for d in self.stack.documents.list_ready(index.id, limit=5000, access=None)}

    def log(self, job: JobRef) -> str:
        return "\n".join(line.message for line in self.jobs.repository.lines(job.id))


def connector_jobs(
    stack: Stack, *, policy: SyncPolicy | None = None, limits: ClientLimits | None = None
) -> Jobs:
    waits = Waits()
    sources, repository = SourceRepository(stack.db), JobRepository(stack.db)
    box = SecretBox(Fernet.generate_key().decode())
    connections = Connections(ConnectionRepository(stack.db, box), LOOPBACK, sleep=waits, limits=limits)
    service = IndexingJobs(repository, sources, stack.indexes, stack.ingestor, LOOPBACK)

    def no_crawler(options: Mapping[str, object]) -> Crawler:
        raise AssertionError("a connector's job never crawls")

    sync = ConnectorSync(connections, sources, stack.documents, stack.ingestor, policy or SyncPolicy())
    runner = JobRunner(
        repository,
        sources,
        stack.indexes,
        stack.documents,
        stack.ingestor,
        no_crawler,
        worker="test-worker",
        syncs=dict.fromkeys(CONNECTORS, sync),
    )
    worker = JobWorker(service, runner, poll_seconds=0.05, stale_after=timedelta(minutes=5))
    return Jobs(stack, connections, service, worker, waits)
