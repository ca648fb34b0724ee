"""The worker: takes queued jobs and runs them, in the bot's process or in `lore worker`."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from datetime import timedelta

from knowledge.sources.jobs.runner import JobRunner
from knowledge.sources.jobs.service import IndexingJobs
from storage.records import JobRef

log = logging.getLogger(__name__)


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


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
