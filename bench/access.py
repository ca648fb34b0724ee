"""What document-level access costs: hybrid search over a large index where 30% of the
documents are restricted by their source to small groups, for an asker who may read 10% of
those, beside the same search with nothing restricted (and a channel's public-only search);
and a permission sync of 10,000 pages against the fake Confluence.

The index is the scale bench's synthetic one (`bench.scale`, 20 chunks a document). Each
restricted document gets two clauses, as a Confluence page in a restricted space under a
restricted parent does: the space's group, and one of 100 small groups; the asker holds the
space's group and 10 of the 100. Each lane gets a retriever of its own (no query embedding
cached from another lane) and the same questions. The permission sync lists pages with their
restrictions (no bodies), reads the space's permission, and writes every document's access,
first when all of it changes, then when none does.

`python -m bench.access [--quick]` prints the JSON.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from pathlib import Path
from typing import Any

from cryptography.fernet import Fernet

from bench import run_alone
from bench.scale import create_index, embedded_pool, fill_index, questions
from bot.app.services import Services, build_services
from bot.app.settings import Settings
from knowledge.search.retrieval import QueryType, Retriever
from storage.document_access import PUBLIC_ONLY, AccessFilter, DocumentAccess
from storage.keyword import KeywordIndex
from storage.records import IndexRef, NewChunk, NewDocument
from storage.values import SourceKind

CHUNKS, QUICK_CHUNKS = 100_000, 2_000
QUERIES, QUICK_QUERIES = 100, 10
RESTRICTED = 0.3
GROUPS = 100
ASKER_GROUPS = 10
SYNC_PAGES, QUICK_SYNC_PAGES = 10_000, 300
SPACE_GROUP = "staff"


async def run(workdir: Path, quick: bool) -> dict[str, Any]:
    settings = Settings(
        _env_file=None,
        lore_home=workdir / "lore",
        database_url=None,
        chroma_host=None,
        lore_secret_key=Fernet.generate_key().decode(),  # type: ignore[arg-type]
        lore_crawl_allow="127.0.0.1",
    )
    services = build_services(settings)
    try:
        search = await _search(
            services, QUICK_CHUNKS if quick else CHUNKS, QUICK_QUERIES if quick else QUERIES
        )
        sync = await _permission_sync(services, QUICK_SYNC_PAGES if quick else SYNC_PAGES)
    finally:
        await services.aclose()
    return {"quick": quick, "search": search, "permission_sync": sync}


async def _search(services: Services, chunks: int, count: int) -> dict[str, Any]:
    index = await create_index(services, "access")
    filled = await fill_index(services, index, chunks)
    asked = questions(await embedded_pool(services.embedder), count, seed=7)
    unrestricted = await _lane(services, index, asked, PUBLIC_ONLY)
    documents = await asyncio.to_thread(services.documents.list_ready, index.id, limit=10**7, access=None)
    restricted = documents[:: round(1 / RESTRICTED)][: round(len(documents) * RESTRICTED)]
    changes = {
        d.id: DocumentAccess.restricted({f"1:group:{SPACE_GROUP}"}, {f"1:group:g{n % GROUPS}"})
        for n, d in enumerate(restricted)
    }
    started = time.perf_counter()
    await asyncio.to_thread(services.documents.set_access, changes)
    write_seconds = time.perf_counter() - started
    asker = AccessFilter(
        frozenset({f"1:group:{SPACE_GROUP}", *(f"1:group:g{n}" for n in range(ASKER_GROUPS))})
    )
    readable = sum(1 for a in changes.values() if a.readable_by(asker.principals))
    lanes = {
        "unrestricted": unrestricted,
        "asker": await _lane(services, index, asked, asker),
        "public_only": await _lane(services, index, asked, PUBLIC_ONLY),
    }
    return {
        "chunks": filled.chunks,
        "documents": len(documents),
        "restricted_documents": len(restricted),
        "asker_reads_restricted": readable,
        "access_write_seconds": round(write_seconds, 2),
        "latency": lanes,
        "p95_ratio": {
            "asker_vs_unrestricted": round(lanes["asker"]["p95_ms"] / unrestricted["p95_ms"], 2),
            "public_only_vs_unrestricted": round(lanes["public_only"]["p95_ms"] / unrestricted["p95_ms"], 2),
        },
    }


async def _lane(
    services: Services, index: IndexRef, asked: list[str], access: AccessFilter
) -> dict[str, float]:
    retriever = Retriever(services.documents, services.vectors, KeywordIndex(services.db), services.embedder)
    for question in asked[:3]:  # warm the collection and SQLite's pages, not the questions
        await retriever.search([index], question + " warm", query_type=QueryType.HYBRID, access=access)
    times = []
    for question in asked:
        started = time.perf_counter()
        await retriever.search([index], question, query_type=QueryType.HYBRID, access=access)
        times.append((time.perf_counter() - started) * 1000)
    return _stats(times)


def _stats(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    return {
        "p50_ms": round(statistics.median(ordered), 1),
        "p95_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))], 1),
    }


async def _permission_sync(services: Services, pages: int) -> dict[str, Any]:
    from knowledge.sources.connectors import Credentials
    from knowledge.sources.connectors.confluence import parse_space
    from tests.fakes.confluence_server import EMAIL, TOKEN, FakeConfluence

    async with FakeConfluence(page_size=50) as fake:
        fake.add_space("BIG", "Big", anonymous=False, viewers=[f"group:{SPACE_GROUP}"])
        ids = _pages(fake, pages)
        await asyncio.to_thread(services.directory.ensure_tenant, "bench")
        connection, _ = await services.connections.connect("bench", fake.base_url, Credentials(TOKEN, EMAIL))
        index = await create_index(services, "synced")
        source = await services.connections.attach(connection, index, [parse_space("BIG")])
        await asyncio.to_thread(_documents_of, services, index, source.id, ids)
        syncer = services.access_sync
        before = len(fake.requests.snapshot())
        started = time.perf_counter()
        first = await syncer.permissions(source)
        first_seconds = time.perf_counter() - started
        requests = len(fake.requests.snapshot()) - before
        started = time.perf_counter()
        again = await syncer.permissions(source)
        again_seconds = time.perf_counter() - started
    assert first.error is None and again.error is None, (first.error, again.error)
    return {
        "pages": pages,
        "restricted": first.restricted,
        "requests": requests,
        "first_seconds": round(first_seconds, 2),
        "first_changed": first.changed,
        "unchanged_seconds": round(again_seconds, 2),
        "unchanged_changed": again.changed,
        "pages_per_second": round(pages / first_seconds),
    }


def _pages(fake: Any, count: int) -> list[str]:
    """`count` pages in trees of ten: each tree's root restricted to a small group for 30%
    of trees (its pages inherit it), a few pages restricted further."""
    ids: list[str] = []
    for tree in range(count // 10):
        root = fake.add_page("BIG", f"Tree {tree}", "<p>root</p>")
        if tree % 10 < 3:
            fake.restrict(root, f"group:g{tree % GROUPS}")
        ids.append(root)
        for leaf in range(9):
            page = fake.add_page("BIG", f"Tree {tree} page {leaf}", "<p>leaf</p>", parent=root)
            if leaf == 0 and tree % 10 < 3:
                fake.restrict(page, f"user:acc-{tree}")
            ids.append(page)
    return ids


def _documents_of(services: Services, index: IndexRef, source_id: int, page_ids: list[str]) -> None:
    """One small ready document per page, as a content sync leaves them (no vectors: the
    permission sync never reads them)."""
    for page_id in page_ids:
        new = NewDocument(
            index_id=index.id,
            source_kind=SourceKind.CONNECTOR,
            source_key=f"page:{page_id}",
            name=f"page {page_id}",
            mime_type="text/markdown",
            content_hash=page_id,
            size=10,
            characters=10,
            external_id=page_id,
            source_config_id=source_id,
        )
        document, _ = services.documents.create_pending(new, [NewChunk(0, "", f"page {page_id}")])
        services.documents.mark_ready(document.id)


if __name__ == "__main__":
    run_alone("access", run, "a seconds-long smoke run")
