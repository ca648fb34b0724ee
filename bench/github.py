"""`python -m bench.github [--quick]`: GitHub sync throughput, and an unchanged re-sync's cost.

The fake GitHub (`tests.fakes.github_server`, the real wire format, on loopback) serves one
repository of 300 Markdown files and 1,000 issues and pull requests (most with comments) and
a few discussions. Lore connects it as a user would (`Connections.connect`, a token), attaches
the repository to an index and the worker the bot runs syncs it: a first sync, then a
scheduled re-sync with nothing changed (ETags answered 304; no blob, issue body or comment
fetched). The connector alone then lists and reads everything once more with nothing behind
it, and the embedder alone embeds the chunks the first sync made, so that "sync ÷ embedder"
says how much of a sync is the model's work.
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
from bench.crawl import BATCH_CHUNKS, JOB_TIMEOUT, POLL_SECONDS
from bot.app.local import local_dm
from bot.app.services import Services, build_services
from bot.app.settings import Settings
from bot.app.workers import build_worker
from knowledge.backends.embedding import embed_batches
from knowledge.extraction import extract
from knowledge.indexing.chunking import ChunkSpec, chunk_text
from knowledge.sources.connectors import Credentials, FolderSpec
from knowledge.sources.connectors.base import Item, ItemRef
from storage.records import ConnectionRef, IndexRef, JobRef, SourceConfigRef
from tests.fakes.github_server import TOKEN, FakeGitHub

REPO = "acme/handbook"
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


def fill(fake: FakeGitHub, files: int, issues: int) -> None:
    """A repository of `files` Markdown pages (a few sections each) and `issues` issues and
    pull requests, three in four with comments; five discussions with an answer."""
    fake.add_repo(REPO, description="Engineering handbook")
    for n in range(files):
        sections = "\n\n".join(
            f"## Section {s}\n\n" + " ".join(WORDS[(n * 7 + s * 3 + w) % len(WORDS)] for w in range(90)) + "."
            for s in range(3)
        )
        fake.write(REPO, f"docs/area-{n % 12}/page-{n}.md", f"# Page {n}\n\n{sections}\n")
    for n in range(issues):
        body = " ".join(WORDS[(n + w) % len(WORDS)] for w in range(60))
        issue = fake.add_issue(REPO, f"Issue {n}: {WORDS[n % len(WORDS)]}", body, pull=n % 5 == 0)
        for c in range(n % 4):
            fake.comment(
                REPO,
                issue.number,
                "grace",
                f"Comment {c}: " + " ".join(WORDS[(n + c + w) % 20] for w in range(30)),
            )
    for n in range(5):
        discussion = fake.add_discussion(
            REPO, f"Question {n}", "How do we " + " ".join(WORDS[n : n + 8]) + "?"
        )
        fake.reply(REPO, discussion.number, "ada", "Like this: " + " ".join(WORDS[n : n + 30]), answer=True)


def settings(home: Path) -> Settings:
    return Settings(
        _env_file=None,
        lore_home=home,
        database_url=None,
        chroma_host=None,
        lore_crawl_allow="127.0.0.1",
        lore_secret_key=Fernet.generate_key().decode(),
    )


async def one_job(
    services: Services, fake: FakeGitHub, index: IndexRef, source: SourceConfigRef, trigger: str
) -> dict[str, Any]:
    seen = len(fake.api_requests())
    blobs, bodies = len(fake.blobs_served), len(fake.issue_bodies_served)
    started = time.perf_counter()
    job = await services.jobs.start_indexing_job(index, source, trigger=trigger)
    while not job.finished:
        if time.perf_counter() - started > JOB_TIMEOUT:
            raise TimeoutError(f"sync {job.id} did not finish in {JOB_TIMEOUT:g} s")
        await asyncio.sleep(POLL_SECONDS)
        job = await services.jobs.get_indexing_job_status(job.id)
    if job.state.value != "succeeded":
        raise RuntimeError(f"sync {job.id} ended {job.state.value}: {job.error}")
    made = fake.api_requests()[seen:]
    return _job_json(job, made, len(fake.blobs_served) - blobs, len(fake.issue_bodies_served) - bodies)


def _job_json(job: JobRef, made: list[Any], blobs: int, bodies: int) -> dict[str, Any]:
    counters, seconds = job.counters, job.seconds
    items = counters.get("pages_fetched", 0) + counters.get("pages_unchanged", 0)
    return {
        "items": items,
        "items_fetched": counters.get("pages_fetched", 0),
        "items_unchanged": counters.get("pages_unchanged", 0),
        "seconds": round(seconds, 2),
        "items_per_s": round(items / seconds, 1) if seconds else 0.0,
        "chunks": counters.get("chunks", 0),
        "requests": len(made),
        "requests_counted": sum(1 for r in made if r.status != 304),
        "statuses": {str(s): n for s, n in sorted(Counter(r.status for r in made).items())},
        "blobs_fetched": blobs,
        "issue_bodies_fetched": bodies,
    }


async def connector_alone(services: Services, connection: ConnectionRef) -> tuple[dict[str, Any], list[Item]]:
    """List and read every item once, with nothing behind it (a fresh listing: no ETags)."""
    started = time.perf_counter()
    items: list[Item] = []
    async with services.connections.open(connection) as connector:
        refs = [
            r
            async for r in connector.changed_since([FolderSpec(REPO)], None, state={})
            if isinstance(r, ItemRef)
        ]
        for start in range(0, len(refs), 20):
            items += [
                i
                for i in await connector.fetch([r.id for r in refs[start : start + 20]])
                if isinstance(i, Item)
            ]
    seconds = time.perf_counter() - started
    return {
        "items": len(items),
        "seconds": round(seconds, 2),
        "items_per_s": round(len(items) / seconds, 1),
    }, items


def item_texts(item: Item, max_bytes: int) -> list[str]:
    """The texts a sync embeds for `item`: extracted and chunked as `Ingestor` does it."""
    extracted = extract(item.text.encode(), item.title, mime_type=item.mime_type, max_bytes=max_bytes)
    heading = " > ".join((*item.path, item.title))
    return [c.embedding_text(heading) for c in chunk_text(extracted.text, title=heading, spec=ChunkSpec())]


async def run(workdir: Path, quick: bool) -> dict[str, Any]:
    files, issues = (10, 30) if quick else (300, 1000)
    config = settings(workdir / "lore")
    load_before = os.getloadavg()[0]
    with FakeGitHub() as fake:
        fill(fake, files, issues)
        services = build_services(config)
        try:
            actor = await local_dm(services, "bench")
            index = await services.catalog.create_shared(actor.place, "bench-github")
            connection, _ = await services.connections.connect(
                "local", fake.base_url, Credentials(TOKEN), kind="github"
            )
            source = await services.connections.attach(
                connection, index, [FolderSpec(REPO)], schedule="never"
            )
            await services.embedder.embed(["load the model before the clock starts"])
            worker, name = build_worker(services)
            stop = asyncio.Event()
            task = asyncio.create_task(worker.run(stop, name), name="bench-github-worker")
            try:
                first = await one_job(services, fake, index, source, "manual")
                again = await one_job(services, fake, index, source, "schedule")
            finally:
                stop.set()
                await task
            alone, items = await connector_alone(services, connection)
            texts = [await asyncio.to_thread(item_texts, item, config.max_file_bytes) for item in items]
            flat = [t for group in texts for t in group]
            started = time.perf_counter()
            for batch in range(0, len(flat), BATCH_CHUNKS):
                await embed_batches(services.embedder, flat[batch : batch + BATCH_CHUNKS])
            embed_seconds = time.perf_counter() - started
        finally:
            await services.aclose()
    if first["chunks"] != len(flat):
        raise RuntimeError(f"the sync made {first['chunks']} chunks, chunking alone {len(flat)}")
    sync_rate, embed_rate = first["chunks"] / first["seconds"], len(flat) / embed_seconds
    return {
        "quick": quick,
        "load_average": {"before": round(load_before, 2), "after": round(os.getloadavg()[0], 2)},
        "repository": {"files": files, "issues_and_pulls": issues, "discussions": 5},
        "first_sync": first,
        "unchanged_resync": {**again, "seconds_vs_first": round(again["seconds"] / first["seconds"], 3)},
        "connector_alone": alone,
        "embedder": {
            "chunks": len(flat),
            "seconds": round(embed_seconds, 2),
            "chunks_per_s": round(embed_rate, 1),
        },
        "ratios": {
            "sync_chunks_per_s": round(sync_rate, 1),
            "sync_vs_embedder": round(sync_rate / embed_rate, 3),
        },
    }


def main() -> None:
    run_alone("github", run, "ten files and thirty issues (seconds)")


if __name__ == "__main__":
    main()
