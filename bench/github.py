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
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import run_alone
from bench.crawl import BATCH_CHUNKS
from bench.syncs import WORDS, Report, settings, two_syncs
from bot.app.services import Services, build_services
from knowledge.backends.embedding import embed_batches
from knowledge.extraction import extract
from knowledge.indexing.chunking import ChunkSpec, chunk_text
from knowledge.sources.connectors import Credentials, FolderSpec
from knowledge.sources.connectors.base import Item, ItemRef
from storage.records import ConnectionRef, JobRef
from tests.fakes.github_server import TOKEN, FakeGitHub

REPO = "acme/handbook"


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


def measure(fake: FakeGitHub) -> Callable[[JobRef], Report]:
    """What the fake served during a sync: requests (304s apart), blobs and issue bodies."""
    seen = len(fake.api_requests())
    blobs, bodies = len(fake.blobs_served), len(fake.issue_bodies_served)

    def report(job: JobRef) -> Report:
        made = fake.api_requests()[seen:]
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
            "blobs_fetched": len(fake.blobs_served) - blobs,
            "issue_bodies_fetched": len(fake.issue_bodies_served) - bodies,
        }

    return report


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
            first, again, connection = await two_syncs(
                services,
                kind="github",
                url=fake.base_url,
                credentials=Credentials(TOKEN),
                folder=FolderSpec(REPO),
                measure=lambda: measure(fake),
            )
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
        "unchanged_resync": again,
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
