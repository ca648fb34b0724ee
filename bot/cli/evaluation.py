"""`lore eval beir`: build a throw-away store, ingest the corpus, score the three retrievals."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from bot.app.services import build_services
from bot.app.settings import Settings
from knowledge.evaluation import corpus_sources, evaluate, ingest_corpus, load_beir
from knowledge.retrieval import RetrievalSpec, Retriever
from storage.keyword import KeywordIndex
from storage.values import LOCAL_TENANT, Scope

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
        services.directory.ensure_tenant(LOCAL_TENANT)
        index = services.indexes.create(
            LOCAL_TENANT,
            "beir",
            Scope.SHARED,
            embedding_model=services.embedder.model_id,
            embedding_dimension=services.embedder.dimension,
        )
        started = time.perf_counter()
        failures = await ingest_corpus(services.ingestor, index, beir, None if quiet else _progress)
        seconds = time.perf_counter() - started
        stats = services.indexes.stats(index.id)
        megabytes = sum(len(s.data) for s in corpus_sources(beir)) / 1e6
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
        return await evaluate(retriever, services.indexes.get(index.id), beir)
    finally:
        await services.aclose()


def _progress(done: int, total: int) -> None:
    if done % 250 == 0 or done == total:
        print(f"\ringesting {done}/{total}", end="", file=sys.stderr, flush=True)
