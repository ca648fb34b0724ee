"""The Confluence sync harness: a real index, the jobs machinery and the fake Confluence."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

import pytest

from knowledge.sources.connectors import Credentials
from knowledge.sources.connectors.confluence import parse_space
from knowledge.sources.connectors.service import Connections
from knowledge.sources.jobs import IndexingJobs, JobWorker
from knowledge.sources.web import AllowList
from storage.records import ConnectionRef, DocumentRef, IndexRef, JobRef, SourceConfigRef
from storage.repositories.sources import SourceRepository
from tests.fakes.confluence_server import EMAIL, TOKEN, FakeConfluence, Seeded, seed
from tests.knowledge.conftest import Stack
from tests.knowledge.sources.connector_jobs import connector_jobs, run_to_end

LOOPBACK = AllowList.parse("127.0.0.1")


@dataclass
class Sync:
    stack: Stack
    fake: FakeConfluence
    pages: Seeded
    connections: Connections
    jobs: IndexingJobs
    worker: JobWorker
    index: IndexRef
    connection: ConnectionRef
    waits: list[float]
    on_wait: list[Callable[[], Awaitable[object]]]
    """Called (once each) when the connector waits out a rate limit."""

    async def attach(self, *folders: str) -> SourceConfigRef:
        return await self.connections.attach(self.connection, self.index, [parse_space(f) for f in folders])

    async def run(self, source: SourceConfigRef, trigger: str = "schedule") -> JobRef:
        source = self.stack_source(source.id)
        return await self.run_job(await self.jobs.start_indexing_job(self.index, source, trigger=trigger))

    async def run_job(self, job: JobRef) -> JobRef:
        """Run the worker until `job` ends."""
        return await run_to_end(self.jobs, self.worker, job, rounds=3000)

    def stack_source(self, config_id: int) -> SourceConfigRef:
        return SourceRepository(self.stack.db).get(config_id)

    def documents(self) -> dict[str, DocumentRef]:
        return {d.name: d for d in self.stack.documents.list_ready(self.index.id, limit=1000)}

    def log(self, job: JobRef) -> str:
        return "\n".join(line.message for line in self.jobs.repository.lines(job.id))


@pytest.fixture
async def sync(stack: Stack) -> AsyncIterator[Sync]:
    built = connector_jobs(stack)
    connections, waits = built.connections, built.waits
    index = stack.index("confluence")
    async with FakeConfluence() as fake:
        pages = seed(fake)
        connection, _ = await connections.connect("T1", fake.base_url, Credentials(TOKEN, EMAIL))
        yield Sync(
            stack,
            fake,
            pages,
            connections,
            built.jobs,
            built.worker,
            index,
            connection,
            waits.seconds,
            waits.then,
        )
