"""`lore eval beir` / `lore eval qa`: build throw-away stores like the configured ones, ingest
the corpus, score. SQLite and embedded Chroma in a temporary folder by default; with
`DATABASE_URL`, a throw-away schema in that PostgreSQL database; with `CHROMA_HOST`, a
deployment of its own on that Chroma server, whose collections are dropped at the end. So
keyword search on PostgreSQL is measured by the product's own command."""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bot.app.local import index_for_cli, local_dm
from bot.app.services import Services, build_services
from bot.app.settings import Settings
from knowledge import (
    IngestError,
    IngestResult,
    Ranker,
    RetrievalSpec,
    Retriever,
    Source,
    ask_all,
    beir_sources,
    evaluate_retrieval,
    folder_sources,
    ingest_corpus,
    load_beir,
    load_questions,
    score_answers,
)
from storage.db import scratch_schema
from storage.keyword import KeywordIndex
from storage.records import IndexRef
from storage.vectors import ChromaVectorStore

EVAL_SPEC = RetrievalSpec(min_similarity=-1.0, max_per_document=1)
"""No threshold and one chunk per document: BEIR ranks documents."""


@contextmanager
def evaluation_stores(settings: Settings) -> Iterator[Settings]:
    """Settings for throw-away stores of the kinds `settings` configure (see the module)."""
    with tempfile.TemporaryDirectory(prefix="lore-eval-") as home:
        scratch = settings.model_copy(update={"lore_home": Path(home)})
        if settings.database_url is None:
            yield scratch
            return
        with scratch_schema(settings.database_url) as url:
            yield scratch.model_copy(update={"database_url": url})


def describe_stores(services: Services) -> str:
    url = services.db.engine.url
    where = (
        "SQLite"
        if url.get_backend_name() == "sqlite"
        else f"PostgreSQL {url.host}/{url.database} (a throw-away schema)"
    )
    return f"evaluating on {where} and {services.vectors.describe()}"


async def discard(services: Services) -> None:
    """Drop what the evaluation put on a Chroma server (its database goes with its schema)."""
    if services.settings.chroma_host and isinstance(services.vectors, ChromaVectorStore):
        await asyncio.to_thread(services.vectors.drop_namespace)


async def run_beir(
    settings: Settings,
    folder: Path,
    *,
    split: str = "test",
    max_queries: int = 0,
    max_documents: int = 0,
    quiet: bool = False,
) -> dict[str, dict[str, float]]:
    beir = load_beir(folder, split).sample(max_queries, max_documents)
    services = build_services(settings)
    try:
        print(describe_stores(services), file=sys.stderr)  # what was measured, even with --json
        index = await throwaway_index(services, "beir")
        started = time.perf_counter()
        failures = await ingest_corpus(services.ingestor, index, beir, None if quiet else _progress)
        seconds = time.perf_counter() - started
        stats = services.indexes.stats(index.id)
        megabytes = sum(len(s.data) for s in beir_sources(beir)) / 1e6
        print(
            f"\ningested {len(beir.corpus)} documents ({megabytes:.1f} MB, {stats.chunks} chunks, "
            f"{failures} failed) in {seconds:.0f} s: {megabytes / seconds:.3f} MB/s, "
            f"{stats.chunks / seconds:.1f} chunks/s",
            file=sys.stderr,
        )
        retriever = Retriever(
            services.documents,
            services.vectors,
            KeywordIndex(services.db),
            services.embedder,
            spec=EVAL_SPEC,
        )
        ranker = Ranker(services.embedder, retriever.term_frequencies)
        return await evaluate_retrieval(retriever, services.indexes.get(index.id), beir, ranker=ranker)
    finally:
        await discard(services)
        await services.aclose()


async def throwaway_index(services: Services, name: str) -> IndexRef:
    """A shared index in a store of its own, made as the local user makes one."""
    return await index_for_cli(services, await local_dm(services), name, create=True)


def _progress(done: int, total: int) -> None:
    if done % 250 == 0 or done == total:
        print(f"\ringesting {done}/{total}", end="", file=sys.stderr, flush=True)


async def run_qa(
    settings: Settings, folder: Path, questions: Path, *, split: str = "tune", quiet: bool = False
) -> dict[str, Any]:
    """Ingest `folder` into a fresh store, ask every question of `split` as `lore ask` does,
    and score the answers (`knowledge.evaluation.qa`)."""
    items = load_questions(questions, split)
    services = build_services(settings)
    try:
        index = await throwaway_index(services, "docs")
        keys: dict[int, str] = {}

        def record(source: Source, result: IngestResult | IngestError) -> None:
            if isinstance(result, IngestResult):
                keys[result.document.id] = source.key
            elif not quiet:
                print(f"  ✗ {result}", file=sys.stderr)

        started = time.perf_counter()
        await services.ingestor.add_many(index, folder_sources(folder), record)
        ingest_seconds = time.perf_counter() - started
        index = services.indexes.get(index.id)
        await services.retriever.search([index], "warm up")  # the first question should not pay the loads
        results = await ask_all(services.knowledge, [index], items, lambda d: keys.get(d, f"#{d}"))
        if not quiet:
            print(f"ingested {len(keys)} files in {ingest_seconds:.0f} s", file=sys.stderr)
        return {
            "split": split,
            "model": services.knowledge.model or "extractive",
            "files": len(keys),
            "ingest_seconds": round(ingest_seconds, 1),
            **score_answers(results),
            "items": [r.as_json() for r in results],
        }
    finally:
        await discard(services)
        await services.aclose()
