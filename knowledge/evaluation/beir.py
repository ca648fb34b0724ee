"""Retrieval quality on a BEIR folder (corpus.jsonl, queries.jsonl, qrels/<split>.tsv):
nDCG@10 and Recall@100 for keyword, dense and hybrid retrieval through Lore's own pipeline."""

from __future__ import annotations

import csv
import json
import math
import statistics
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from knowledge.indexing.ingest import Ingestor, Source
from knowledge.indexing.metadata import DocumentFacts
from knowledge.judging.ranking import Ranker
from knowledge.search.retrieval import QueryType, Retriever
from storage.records import IndexRef


@dataclass(frozen=True)
class BeirSet:
    corpus: dict[str, tuple[str, str]]
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]

    def sample(self, queries: int = 0, documents: int = 0) -> BeirSet:
        """The first `queries` queries (0: all), over a corpus of the documents they judge
        and then the corpus's first others, `documents` in all (0: the whole corpus; never
        fewer than those judged): a subset anyone rebuilds from the same two numbers."""
        kept = dict(list(self.queries.items())[:queries]) if queries else dict(self.queries)
        qrels = {q: self.qrels[q] for q in kept}
        if not documents:
            return BeirSet(self.corpus, kept, qrels)
        judged = {d for judged in qrels.values() for d in judged if d in self.corpus}
        others = [d for d in self.corpus if d not in judged][: max(0, documents - len(judged))]
        chosen = judged | set(others)
        return BeirSet({d: t for d, t in self.corpus.items() if d in chosen}, kept, qrels)


def load_beir(folder: Path, split: str = "test") -> BeirSet:
    """Read a BEIR folder; only queries judged in `split` are kept."""
    qrels: dict[str, dict[str, int]] = {}
    with (folder / "qrels" / f"{split}.tsv").open(newline="") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            qrels.setdefault(row["query-id"], {})[row["corpus-id"]] = int(row["score"])
    corpus = {
        str(d["_id"]): (str(d.get("title") or ""), str(d.get("text") or ""))
        for d in _jsonl(folder / "corpus.jsonl")
    }
    queries = {
        str(q["_id"]): str(q["text"]) for q in _jsonl(folder / "queries.jsonl") if str(q["_id"]) in qrels
    }
    return BeirSet(corpus, queries, {q: r for q, r in qrels.items() if q in queries})


def beir_sources(beir: BeirSet) -> Iterator[Source]:
    for doc_id, (title, text) in beir.corpus.items():
        body = f"# {title}\n\n{text}" if title else text
        yield Source(
            name=doc_id,
            data=body.encode("utf-8"),
            mime_type="text/markdown",
            facts=DocumentFacts(title=title or doc_id, external_id=doc_id),
        )


def ndcg_at_k(ranked: Sequence[str], relevant: Mapping[str, int], k: int = 10) -> float:
    gains = sum((2 ** relevant.get(d, 0) - 1) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted(relevant.values(), reverse=True)[:k]
    best = sum((2**g - 1) / math.log2(i + 2) for i, g in enumerate(ideal))
    return gains / best if best > 0 else 0.0


def recall_at_k(ranked: Sequence[str], relevant: Mapping[str, int], k: int = 100) -> float:
    wanted = {d for d, g in relevant.items() if g > 0}
    return len(wanted.intersection(ranked[:k])) / len(wanted) if wanted else 0.0


async def ingest_corpus(
    ingestor: Ingestor,
    index: IndexRef,
    beir: BeirSet,
    progress: Callable[[int, int], None] | None = None,
) -> int:
    """Add the corpus to `index`; returns the number of failures."""
    done = failures = 0

    def count(_source: Source, result: object) -> None:
        nonlocal done, failures
        done += 1
        failures += isinstance(result, Exception)
        if progress is not None:
            progress(done, len(beir.corpus))

    await ingestor.add_many(index, beir_sources(beir), count)
    return failures


async def evaluate_retrieval(
    retriever: Retriever,
    index: IndexRef,
    beir: BeirSet,
    query_types: Sequence[QueryType] = tuple(QueryType),
    ranker: Ranker | None = None,
) -> dict[str, dict[str, float]]:
    """nDCG@10 and Recall@100 per query type, ranking documents by their best chunk, with
    the search latency (p50/p95 ms of these 100-hit searches). With a `ranker`, hybrid
    retrieval is scored once more with the second stage reordering its first hits
    ("reranked")."""
    scores: dict[str, dict[str, float]] = {}
    runs: list[tuple[str, QueryType, Ranker | None]] = [
        ({QueryType.VECTOR: "dense"}.get(t, t.value), t, None) for t in query_types
    ]
    if ranker is not None:
        runs.append(("reranked", QueryType.HYBRID, ranker))
    for name, query_type, second in runs:
        ndcg = recall = 0.0
        latency: list[float] = []
        for query_id, text in beir.queries.items():
            started = time.perf_counter()
            retrieval = await retriever.search(
                [index], text, top_k=100, candidates=300, query_type=query_type
            )
            hits = retrieval.hits if second is None else (await second.rank(text, retrieval.hits)).hits
            latency.append((time.perf_counter() - started) * 1000)
            ranked = [h.document.external_id or h.document.name for h in hits]
            ndcg += ndcg_at_k(ranked, beir.qrels[query_id])
            recall += recall_at_k(ranked, beir.qrels[query_id])
        n = max(1, len(beir.queries))
        latency.sort()
        scores[name] = {
            "ndcg@10": round(ndcg / n, 4),
            "recall@100": round(recall / n, 4),
            "p50_ms": round(statistics.median(latency), 1) if latency else 0.0,
            "p95_ms": round(latency[int(0.95 * (len(latency) - 1))], 1) if latency else 0.0,
        }
    return scores


def _jsonl(path: Path) -> Iterator[dict[str, object]]:
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)
