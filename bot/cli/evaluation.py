"""`lore eval beir`: build a throw-away store, ingest the corpus, score the three retrievals."""

from __future__ import annotations

import sys
import time
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
from storage.keyword import KeywordIndex
from storage.records import IndexRef

EVAL_SPEC = RetrievalSpec(min_similarity=-1.0, max_per_document=1)
"""No threshold and one chunk per document: BEIR ranks documents."""


async def run_beir(
    settings: Settings,
    folder: Path,
    *,
    split: str = "test",
    max_queries: int = 0,
    quiet: bool = False,
) -> dict[str, dict[str, float]]:
    beir = load_beir(folder, split)
    if max_queries:
        kept = dict(list(beir.queries.items())[:max_queries])
        beir = type(beir)(beir.corpus, kept, {q: beir.qrels[q] for q in kept})
    services = build_services(settings)
    try:
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
        await services.aclose()
