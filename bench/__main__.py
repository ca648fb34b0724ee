"""`python -m bench [--quick]`: embedder, ingest and retrieval figures on this machine.

Writes bench/results/latest.json and prints a Markdown table. `--quick` runs a tiny
version (seconds) so CI keeps the benchmarks working.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.slack_path import measure_mentions
from knowledge.chunking import chunk_text
from knowledge.embedding import LocalEmbedder
from knowledge.ingest import Ingestor, Source
from knowledge.retrieval import QueryType, Retriever
from storage.db import open_database
from storage.keyword import KeywordIndex
from storage.models import Scope
from storage.repositories.directory import Directory
from storage.repositories.documents import DocumentRepository
from storage.repositories.indexes import IndexRepository
from storage.vectors import ChromaVectorStore, chroma_client

SCIFACT = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "scifact"
RESULTS = Path(__file__).parent / "results"


def corpus(limit: int) -> list[tuple[str, str]]:
    """SciFact abstracts when available, else generated prose."""
    path = SCIFACT / "corpus.jsonl"
    if path.exists():
        with path.open() as handle:
            docs = [json.loads(line) for line, _ in zip(handle, range(limit), strict=False)]
        return [(d["title"], d["text"]) for d in docs]
    words = [
        "retrieval",
        "pager",
        "deploy",
        "rollback",
        "index",
        "memory",
        "channel",
        "answer",
        "source",
        "thread",
    ]
    return [
        (f"Doc {i}", " ".join(words[(i + j) % len(words)] for j in range(220)) + ".") for i in range(limit)
    ]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def bench_embedder(embedder: LocalEmbedder, docs: list[tuple[str, str]]) -> dict[str, float]:
    passages = [f"{t}\n{x}" for t, x in docs]
    embedder.embed_sync(passages[:16])  # warm-up
    started = time.perf_counter()
    embedder.embed_sync(passages)
    passage_rate = len(passages) / (time.perf_counter() - started)
    queries = [t for t, _ in docs][:200]
    started = time.perf_counter()
    for query in queries:
        embedder.embed_sync([query])
    return {
        "passages_per_s": round(passage_rate, 2),
        "queries_per_s": round(len(queries) / (time.perf_counter() - started), 1),
    }


def bench_chunking(docs: list[tuple[str, str]]) -> dict[str, float]:
    texts = [f"# {t}\n\n{x}" for t, x in docs] * 4
    size = sum(len(t.encode()) for t in texts)
    started = time.perf_counter()
    chunks = sum(len(chunk_text(t, title="doc")) for t in texts)
    elapsed = time.perf_counter() - started
    return {"mb_per_s": round(size / 1e6 / elapsed, 2), "chunks": chunks}


async def bench_ingest_and_query(
    home: Path, embedder: LocalEmbedder, docs: list[tuple[str, str]], queries: int
) -> dict[str, Any]:
    db = open_database(f"sqlite:///{home / 'lore.db'}")
    documents = DocumentRepository(db)
    vectors = ChromaVectorStore(chroma_client(path=home / "chroma"))
    Directory(db).ensure_tenant("bench")
    index = IndexRepository(db).create(
        "bench",
        "bench",
        Scope.SHARED,
        embedding_model=embedder.model_id,
        embedding_dimension=embedder.dimension,
    )
    ingestor = Ingestor(documents, vectors, embedder, max_bytes=50_000_000)
    sources = [
        Source(name=f"d{i}.md", data=f"# {t}\n\n{x}".encode(), mime_type="text/markdown")
        for i, (t, x) in enumerate(docs)
    ]
    started = time.perf_counter()
    results = await ingestor.add_many(index, sources)
    elapsed = time.perf_counter() - started
    chunks = sum(getattr(r, "chunks", 0) for r in results)
    mb = sum(len(s.data) for s in sources) / 1e6
    retriever = Retriever(documents, vectors, KeywordIndex(db), embedder)
    latency: dict[str, dict[str, float]] = {}
    questions = [t for t, _ in docs][:queries]
    for kind in QueryType:
        times = []
        for question in questions:
            began = time.perf_counter()
            await retriever.search([index], question + " ?", query_type=kind)
            times.append((time.perf_counter() - began) * 1000)
        latency[kind.value] = {
            "p50_ms": round(statistics.median(times), 2),
            "p95_ms": round(percentile(times, 0.95), 2),
        }
    db.dispose()
    return {
        "documents": len(sources),
        "chunks": chunks,
        "seconds": round(elapsed, 2),
        "mb_per_s": round(mb / elapsed, 3),
        "chunks_per_s": round(chunks / elapsed, 2),
        "query_latency": latency,
    }


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench")
    parser.add_argument("--quick", action="store_true", help="a seconds-long smoke run (CI)")
    parser.add_argument("--out", type=Path, default=RESULTS / "latest.json", help="where to write the JSON")
    args = parser.parse_args()
    size = 24 if args.quick else 600
    docs = corpus(size)
    embedder = LocalEmbedder()
    embedder.load()
    report: dict[str, Any] = {
        "machine": f"{platform.machine()}, {platform.processor() or 'cpu'}",
        "quick": args.quick,
    }
    report["embedder"] = bench_embedder(embedder, docs[: 32 if args.quick else 256])
    report["chunking"] = bench_chunking(docs)
    with tempfile.TemporaryDirectory(prefix="lore-bench-") as home:
        report["ingest"] = asyncio.run(
            bench_ingest_and_query(Path(home), embedder, docs, 10 if args.quick else 200)
        )
        mentions = 5 if args.quick else 100
        questions = [title for title, _ in docs][:mentions]
        report["slack"] = {
            kind: asyncio.run(
                measure_mentions(Path(home) / f"slack-{kind}", docs, questions, llm=kind == "generative")
            )
            for kind in ("extractive", "generative")
        }
    ingest = report["ingest"]
    report["ingest"]["pipeline_vs_embedder"] = round(
        ingest["chunks_per_s"] / report["embedder"]["passages_per_s"], 3
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(table(report))


def table(report: dict[str, Any]) -> str:
    ingest, latency = report["ingest"], report["ingest"]["query_latency"]
    rows = [
        ("embedder, passages/s (≤256 word pieces)", report["embedder"]["passages_per_s"]),
        ("embedder, queries/s", report["embedder"]["queries_per_s"]),
        ("chunking, MB/s", report["chunking"]["mb_per_s"]),
        ("ingest end to end, chunks/s", ingest["chunks_per_s"]),
        ("ingest / embedder alone", ingest["pipeline_vs_embedder"]),
        *(
            (f"{kind} retrieval p50 / p95, ms ({ingest['chunks']} chunks)", f"{v['p50_ms']} / {v['p95_ms']}")
            for kind, v in latency.items()
        ),
        *(
            (f"Slack mention → {step}, {kind} p50 / p95, ms", f"{v[step]['p50_ms']} / {v[step]['p95_ms']}")
            for kind, v in report["slack"].items()
            for step in ("ack", "working", "answer")
        ),
    ]
    return "| measure | value |\n|---|---|\n" + "\n".join(f"| {name} | {value} |" for name, value in rows)


if __name__ == "__main__":
    main()
