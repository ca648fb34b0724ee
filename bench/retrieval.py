"""Retrieval latency against index size: Lore's keyword, dense and hybrid search next to
plain chromadb given the same vectors, texts and query embedder, in the same run.

One Lore index (SQLite and embedded Chroma) and one plain chromadb collection grow through
the sizes, the same synthetic chunks added to both (`bench.scale`); at each size every way
of searching is timed. Every measured question is new to the retriever that answers it,
so dense and hybrid latency include embedding the question, as a user waits for it.

`python -m bench.retrieval [--quick] [--chart PATH]` prints the JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import itertools
import json
import os
import platform
import resource
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import chromadb
from chromadb.api.client import Client
from chromadb.api.models.Collection import Collection
from chromadb.config import Settings as ChromaSettings

from bench.charts import size_chart
from bench.memory import rss_mb
from bench.scale import Corpus, Filled, create_index, embedded_pool, fill_index, questions, synthesize
from bot.app.services import Services, build_services
from bot.app.settings import Settings
from knowledge.backends.embedding import Embedder
from knowledge.search.retrieval import QueryType, Retriever
from storage.keyword import KeywordIndex
from storage.records import IndexRef

SIZES = (1_000, 10_000, 100_000)
QUICK_SIZES = (200, 1_000)
QUERIES, QUICK_QUERIES = 100, 10
WARM_UP = 5
BUDGET_SECONDS = 300


async def run(workdir: Path, quick: bool) -> dict[str, Any]:
    """Grow an index through the sizes, timing each way of searching it at each (JSON-ready)."""
    started, load_before = time.perf_counter(), os.getloadavg()
    count = QUICK_QUERIES if quick else QUERIES
    services = build_services(
        Settings(_env_file=None, lore_home=workdir / "lore", database_url=None, chroma_host=None)
    )
    try:
        index = await create_index(services)
        with _Plain(workdir / "plain-chroma") as plain:
            sizes: list[dict[str, Any]] = []
            for step, size in enumerate(QUICK_SIZES if quick else SIZES):
                sizes.append(await _grow_and_measure(services, index, plain, size, step, count))
    finally:
        await services.aclose()
    for previous, row in itertools.pairwise(sizes):
        for key in ("lore_total_seconds", "chroma_total_seconds"):
            row["build"][key] = round(row["build"][key] + previous["build"][key], 2)
    return {
        "date": datetime.date.today().isoformat(),
        "machine": machine(),
        "quick": quick,
        "queries": count,
        "sizes": sizes,
        "1m": not_run(sizes),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "load_average_1m": {"before": round(load_before[0], 2), "after": round(os.getloadavg()[0], 2)},
        "wall_seconds": round(time.perf_counter() - started, 1),
    }


def machine() -> str:
    """Architecture, cores and CPU model, e.g. "x86_64, 2 cores, AMD EPYC"."""
    return f"{platform.machine()}, {os.cpu_count()} cores, {_cpu_model()}"


def _cpu_model() -> str:
    cpuinfo = Path("/proc/cpuinfo")
    lines = cpuinfo.read_text().splitlines() if cpuinfo.exists() else []
    names = [line.split(":", 1)[1].strip() for line in lines if line.startswith("model name")]
    return names[0] if names else platform.processor() or "unknown CPU"


async def _grow_and_measure(
    services: Services, index: IndexRef, plain: _Plain, size: int, step: int, count: int
) -> dict[str, Any]:
    """Bring Lore's index and the plain collection to `size` chunks, one after the other (so
    neither build shares the two cores), then time every lane."""
    before = await asyncio.to_thread(services.indexes.stats, index.id)
    filled = await fill_index(services, index, size - before.chunks, seed=step)
    pool = await embedded_pool(services.embedder)
    corpus = await asyncio.to_thread(
        synthesize, pool, filled.chunks, seed=step, first_document=before.documents
    )
    plain_seconds = await asyncio.to_thread(plain.add, corpus)
    latency = await _latencies(services, index, plain, count)
    return {
        "chunks": size,
        "documents": before.documents + filled.documents,
        "build": _build(filled, plain_seconds),
        "latency": latency,
        "p95_vs_chroma": {
            kind.value: round(latency[kind]["p95_ms"] / latency["chroma_dense"]["p95_ms"], 2)
            for kind in (QueryType.VECTOR, QueryType.HYBRID)
        },
        "hybrid_answers": await _answered(services, index, filled),
        "rss_mb": round(rss_mb() or 0.0),
        "disk_mb": {"lore": disk_mb(services.settings.lore_home), "chroma": disk_mb(plain.path)},
    }


def _build(filled: Filled, plain_seconds: float) -> dict[str, float]:
    """This step's build figures; the totals are summed over steps by `run`."""
    return {
        "added": filled.chunks,
        "lore_seconds": round(filled.seconds, 2),
        "lore_vector_store_seconds": round(filled.vector_seconds, 2),
        "lore_chunks_per_s": round(filled.chunks / filled.seconds),
        "chroma_seconds": round(plain_seconds, 2),
        "chroma_chunks_per_s": round(filled.chunks / plain_seconds),
        "lore_vs_chroma_seconds": round(filled.seconds / plain_seconds, 2),
        "lore_total_seconds": round(filled.seconds, 2),
        "chroma_total_seconds": round(plain_seconds, 2),
    }


class _Plain:
    """The baseline: a chromadb collection used directly, as an app without Lore would: same
    cosine space and HNSW defaults, no embedding function, batches as big as it accepts."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._client = chromadb.PersistentClient(
            path=str(path), settings=ChromaSettings(anonymized_telemetry=False)
        )
        self.collection: Collection = self._client.get_or_create_collection(
            "plain-baseline", embedding_function=None, metadata={"hnsw:space": "cosine"}
        )

    def __enter__(self) -> _Plain:
        return self

    def __exit__(self, *_: object) -> None:
        if isinstance(self._client, Client):  # what PersistentClient returns; ClientAPI has no close
            self._client.close()

    def add(self, corpus: Corpus) -> float:
        """Add the corpus's chunks after those already there; the seconds it took."""
        return add_corpus(self.collection, corpus, self._client.get_max_batch_size())


def add_corpus(collection: Collection, corpus: Corpus, batch: int) -> float:
    """Add the corpus's chunks (text, vector, document and position) to a plain collection
    after those already there, `batch` at a time; the seconds `collection.add` took."""
    first = collection.count()
    ids: list[str] = []
    texts: list[str] = []
    metadatas: list[dict[str, int]] = []
    for number, chunk_texts in enumerate(corpus.texts):
        for position, text in enumerate(chunk_texts):
            ids.append(str(first + len(ids)))
            texts.append(text)
            metadatas.append({"document_id": corpus.first_document + number, "position": position})
    started = time.perf_counter()
    for start in range(0, len(ids), batch):
        end = start + batch
        collection.add(
            ids=ids[start:end],
            embeddings=corpus.vectors[start:end],
            documents=texts[start:end],
            metadatas=cast(Any, metadatas[start:end]),
        )
    return time.perf_counter() - started


async def _latencies(
    services: Services, index: IndexRef, plain: _Plain, count: int
) -> dict[str, dict[str, float]]:
    """p50/p95 of each Lore query type, of plain chromadb, and of the query embedding alone."""
    pool = await embedded_pool(services.embedder)
    asked = questions(pool, WARM_UP + count)
    lanes = search_lanes(services, index, plain.collection)
    lanes["query_embedding"] = lambda question: services.embedder.embed([question])
    return await timed(lanes, asked[:WARM_UP], asked[WARM_UP:])


Lane = Callable[[str], Awaitable[object]]


def search_lanes(services: Services, index: IndexRef, plain: Collection) -> dict[str, Lane]:
    """Lore's keyword, dense and hybrid search of `index` (each with a retriever of its own)
    and plain chromadb's dense search of `plain` with the same embedder and neighbours."""
    spec = services.retriever.spec
    lanes: dict[str, Lane] = {
        kind.value: _lore_search(_fresh_retriever(services), index, kind) for kind in QueryType
    }
    lanes["chroma_dense"] = _plain_search(plain, services.embedder, max(spec.candidates, spec.top_k))
    return lanes


def _fresh_retriever(services: Services) -> Retriever:
    """A retriever built as `build_services` builds one, with an empty query-embedding
    cache, so a lane never reuses an embedding another lane paid for."""
    keyword = KeywordIndex(services.db)
    return Retriever(
        services.documents, services.vectors, keyword, services.embedder, spec=services.retriever.spec
    )


def _lore_search(retriever: Retriever, index: IndexRef, kind: QueryType) -> Lane:
    async def search(question: str) -> object:
        return await retriever.search([index], question, query_type=kind)

    return search


def _plain_search(collection: Collection, embedder: Embedder, k: int) -> Lane:
    """Embed the question with Lore's embedder, then ask chromadb for as many neighbours as
    Lore asks it for, texts included (an app without Lore has nowhere else to read them)."""

    async def search(question: str) -> object:
        vector = (await embedder.embed([question]))[0]
        return await asyncio.to_thread(
            collection.query,
            query_embeddings=[vector],
            n_results=k,
            include=["documents", "metadatas", "distances"],
        )

    return search


async def timed(
    lanes: Mapping[str, Lane], warm: Sequence[str], asked: Sequence[str]
) -> dict[str, dict[str, float]]:
    """p50/p95 milliseconds of each lane over `asked`, after every lane answered the warm-up
    questions untimed. Each question goes through every lane in turn, so a busy moment of a
    shared machine slows all lanes alike instead of one."""
    for question in warm:
        for lane in lanes.values():
            await lane(question)
    times: dict[str, list[float]] = {name: [] for name in lanes}
    for question in asked:
        for name, lane in lanes.items():
            began = time.perf_counter()
            await lane(question)
            times[name].append((time.perf_counter() - began) * 1000)
    return {name: summary(values) for name, values in times.items()}


def summary(milliseconds: Sequence[float]) -> dict[str, float]:
    ordered = sorted(milliseconds)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"p50_ms": round(statistics.median(ordered), 2), "p95_ms": round(p95, 2)}


async def _answered(services: Services, index: IndexRef, filled: Filled) -> dict[str, str]:
    """How many of the index's own questions hybrid search answers with its top hit, and
    anywhere in its hits: a latency figure means little if the wrong chunks come back."""
    top = anywhere = 0
    for question, sentence in filled.answers.items():
        texts = [hit.text for hit in (await services.retriever.search([index], question)).hits]
        top += bool(texts) and sentence in texts[0]
        anywhere += any(sentence in text for text in texts)
    return {"top_hit": f"{top}/{len(filled.answers)}", "in_hits": f"{anywhere}/{len(filled.answers)}"}


def not_run(sizes: list[dict[str, Any]]) -> str:
    """Why there is no 1M-chunk figure, with its cost extrapolated linearly from the sizes
    run (which flatters: HNSW inserts slow down as the graph grows). Memory grows by the
    resident size the last step added per chunk, so one-time costs (the model, Chroma's
    start-up) are not multiplied."""
    largest = sizes[-1]
    scale = 1_000_000 / largest["chunks"]
    lore = largest["build"]["lore_total_seconds"] * scale / 60
    chroma = largest["build"]["chroma_total_seconds"] * scale / 60
    before = sizes[-2] if len(sizes) > 1 else {"chunks": 0, "rss_mb": 0}
    per_chunk_mb = (largest["rss_mb"] - before["rss_mb"]) / (largest["chunks"] - before["chunks"])
    memory_gb = largest["rss_mb"] / 1000 + per_chunk_mb * (1_000_000 - largest["chunks"]) / 1000
    disk_gb = (largest["disk_mb"]["lore"] + largest["disk_mb"]["chroma"]) * scale / 1000
    return (
        f"not run: extrapolated linearly from {largest['chunks']:,} chunks, building Lore's index and "
        f"the plain chromadb one would take ~{lore + chroma:.0f} min (Lore {lore:.0f}, chromadb "
        f"{chroma:.0f}), far over the {BUDGET_SECONDS // 60}-minute budget for the whole run; with both "
        f"HNSW graphs resident the process would need ~{memory_gb:.1f} GB of memory and "
        f"~{disk_gb:.1f} GB of disk{'' if largest['chunks'] >= 100_000 else ' (from small sizes: rough)'}"
    )


def disk_mb(path: Path) -> int:
    return round(sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 1e6)


def chart(result: dict[str, Any], path: Path) -> None:
    """p95 latency against index size (log x) for each Lore query type and plain chromadb."""
    lines = {
        "keyword": ("Lore keyword", "-"),
        "vector": ("Lore dense", "-"),
        "hybrid": ("Lore hybrid", "-"),
        "chroma_dense": ("plain chromadb dense", "--"),
    }
    size_chart(
        path,
        title=f"Retrieval p95 latency against index size\n{result['date']}, {result['machine']}",
        xlabel="chunks in the index (log scale)",
        ylabel="p95 latency, ms (dense ones include embedding the question)",
        sizes=[row["chunks"] for row in result["sizes"]],
        series={
            label: ([row["latency"][key]["p95_ms"] for row in result["sizes"]], style)
            for key, (label, style) in lines.items()
        },
    )


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.retrieval")
    parser.add_argument("--quick", action="store_true", help="a seconds-long run (two small sizes)")
    parser.add_argument("--chart", type=Path, help="also draw the p95 chart to this PNG")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="lore-retrieval-") as workdir:
        result = asyncio.run(run(Path(workdir), args.quick))
    if args.chart:
        chart(result, args.chart)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
