"""What the benches of syncs share: a job run to its end (`finished_job`, the crawl's too) and,
for the connectors' benches (`bench.github`, `bench.notion`, `bench.google_drive`), their
settings, the words their fake documents are made of, and the two syncs each times.

`two_syncs` connects the fake as a user would (`Connections.connect`), attaches a folder to a
fresh index and lets the worker the bot runs sync it twice: a first sync, then a scheduled
re-sync with nothing changed. Each bench measures its fake around each sync (`Measure`: it
looks at the fake before, and reports on the finished job after).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cryptography.fernet import Fernet

from bot.app.local import local_dm
from bot.app.services import Services
from bot.app.settings import Settings
from bot.app.workers import build_worker
from knowledge.sources.connectors import Credentials, FolderSpec
from storage.records import ConnectionRef, IndexRef, JobRef, SourceConfigRef

POLL_SECONDS = 0.05
JOB_TIMEOUT = 30 * 60.0
WORDS = [
    "deploy",
    "canary",
    "ledger",
    "refund",
    "webhook",
    "retry",
    "timeout",
    "gateway",
    "schema",
    "migration",
    "rollback",
    "queue",
    "worker",
    "alert",
    "dashboard",
    "latency",
    "budget",
    "owner",
    "runbook",
    "review",
    "release",
]
Report = dict[str, Any]
Measure = Callable[[], Callable[[JobRef], Report]]
"""Called before a sync (counts what the fake served so far); what it returns reports on the
finished job (what the fake served since, the job's counters)."""


def words(n: int, count: int) -> str:
    """`count` of the `WORDS`, in an order that depends on `n`."""
    return " ".join(WORDS[(n * 7 + w) % len(WORDS)] for w in range(count))


def settings(home: Path, **more: Any) -> Settings:
    """Lore at `home` on SQLite and embedded Chroma, allowed to reach the loopback fakes."""
    return Settings(
        _env_file=None,
        lore_home=home,
        database_url=None,
        chroma_host=None,
        lore_crawl_allow="127.0.0.1",
        lore_secret_key=Fernet.generate_key().decode(),
        **more,
    )


async def finished_job(
    services: Services, index: IndexRef, source: SourceConfigRef, trigger: str, *, what: str = "sync"
) -> JobRef:
    """Queue a job and wait for the worker to finish it (its state lives in SQL: polled);
    one that did not succeed is an error."""
    started = time.perf_counter()
    job = await services.jobs.start_indexing_job(index, source, trigger=trigger)
    while not job.finished:
        if time.perf_counter() - started > JOB_TIMEOUT:
            raise TimeoutError(f"{what} {job.id} did not finish in {JOB_TIMEOUT:g} s")
        await asyncio.sleep(POLL_SECONDS)
        job = await services.jobs.get_indexing_job_status(job.id)
    if job.state.value != "succeeded":
        raise RuntimeError(f"{what} {job.id} ended {job.state.value}: {job.error}")
    return job


async def two_syncs(
    services: Services,
    *,
    kind: str,
    url: str,
    credentials: Credentials,
    folder: FolderSpec,
    measure: Measure,
) -> tuple[Report, Report, ConnectionRef]:
    """The first sync's report, the unchanged re-sync's, and the connection made."""
    actor = await local_dm(services, "bench")
    index = await services.catalog.create_shared(actor.place, f"bench-{kind}")
    connection, _ = await services.connections.connect("local", url, credentials, kind=kind)
    source = await services.connections.attach(connection, index, [folder], schedule="never")
    await services.embedder.embed(["load the model before the clock starts"])
    worker, name = build_worker(services)
    stop = asyncio.Event()
    task = asyncio.create_task(worker.run(stop, name), name=f"bench-{kind}-worker")
    try:
        reports = []
        for trigger in ("manual", "schedule"):
            report = measure()
            reports.append(report(await finished_job(services, index, source, trigger)))
    finally:
        stop.set()
        await task
    first, again = reports
    return first, {**again, "seconds_vs_first": round(again["seconds"] / first["seconds"], 3)}, connection
