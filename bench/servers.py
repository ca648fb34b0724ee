"""Retrieval at scale on the servers a growing team moves to: one index on PostgreSQL and a
Chroma server, next to plain chromadb given the same vectors on the same server.

One Lore index grows through the sizes (synthetic chunks, `bench.scale`), and one plain
chromadb collection on the same Chroma server gets the same vectors and texts. At each size:
the build time of each, keyword / dense / hybrid p50 and p95 (dense and hybrid include
embedding the question), plain chromadb's dense p50 and p95 (same embedder, as many
neighbours as Lore asks for; each question is asked of every lane in turn, so a busy moment
of a shared machine slows them alike), the second stage's SQL (`KeywordIndex.frequencies`, what the
ranker asks for a question's words), and the resident memory (PSS) and disk of each process:
this one, PostgreSQL (all its processes) and the Chroma server.

After each fill the chunk table is vacuumed and analysed, as autovacuum does after a bulk
load (its time is reported): keyword search reads the planner's statistics.

The servers are the test suite's (`tests.support`): PostgreSQL with fsync off, default
shared_buffers (128 MB), the Chroma server from this environment's chromadb.

`python -m bench.servers [--quick] [--sizes N …]` prints the JSON; `python -m bench --only
servers` runs it as a section (the default run leaves it out: it takes an hour at 1M).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import re
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import chromadb
from chromadb.api.models.Collection import Collection
from chromadb.config import Settings as ChromaSettings

from bench.retrieval import WARM_UP, add_corpus, machine, search_lanes, timed
from bench.scale import Corpus, create_index, embedded_pool, fill_index, questions, synthesize
from bench.stores import Servers, shared_stores
from bot.app.services import Services, build_services
from bot.app.settings import Settings
from knowledge.search.retrieval import QueryType
from storage.keyword import KeywordIndex, query_terms
from storage.records import IndexRef
from storage.vectors import ChromaVectorStore

SIZES = (100_000, 300_000)
"""The default sizes; 1M is asked for with `--sizes 100000 300000 1000000`."""
QUICK_SIZES = (300, 1_000)
QUERIES, QUICK_QUERIES = 100, 10


async def run(
    workdir: Path, quick: bool, sizes: Sequence[int] | None = None, servers: Servers | None = None
) -> dict[str, Any]:
    """Grow one index on PostgreSQL and a Chroma server through the sizes (JSON-ready); on
    `servers` when given, else on servers of its own."""
    started = time.perf_counter()
    sizes = list(sizes or (QUICK_SIZES if quick else SIZES))
    count = QUICK_QUERIES if quick else QUERIES
    with shared_stores(servers) as stores:
        settings = Settings(
            _env_file=None,
            lore_home=workdir / "lore",
            database_url=stores.database_url,
            chroma_host=stores.chroma_host,
            chroma_port=stores.chroma_port,
        )
        services = build_services(settings)
        plain = _Plain(stores.chroma_host, stores.chroma_port)
        try:
            index = await create_index(services)
            rows = []
            for step, size in enumerate(sizes):
                rows.append(await _grow_and_measure(services, index, plain, size, step, count))
                print(f"bench servers: {json.dumps(rows[-1])}", file=sys.stderr, flush=True)
        finally:
            plain.drop()
            if isinstance(services.vectors, ChromaVectorStore):
                await asyncio.to_thread(services.vectors.drop_namespace)
            await services.aclose()
    largest = rows[-1]
    return {
        "date": datetime.date.today().isoformat(),
        "machine": machine(),
        "quick": quick,
        "queries": count,
        "sizes": rows,
        "goal": {
            "hybrid_p95_vs_chroma_dense_p95": largest["p95_vs_chroma"]["hybrid"],
            "met": largest["p95_vs_chroma"]["hybrid"] <= 2.0,
            "at_chunks": largest["chunks"],
        },
        "load_average_1m": round(os.getloadavg()[0], 2),
        "wall_seconds": round(time.perf_counter() - started, 1),
    }


async def _grow_and_measure(
    services: Services, index: IndexRef, plain: _Plain, size: int, step: int, count: int
) -> dict[str, Any]:
    before = await asyncio.to_thread(services.indexes.stats, index.id)
    filled = await fill_index(services, index, size - before.chunks, seed=step)
    pool = await embedded_pool(services.embedder)
    corpus = await asyncio.to_thread(
        synthesize, pool, filled.chunks, seed=step, first_document=before.documents
    )
    plain_seconds = await asyncio.to_thread(plain.add, corpus)
    maintenance = await asyncio.to_thread(_vacuum_analyze, services)
    latency = await _latencies(services, index, plain, count)
    return {
        "chunks": size,
        "build": {
            "added": filled.chunks,
            "lore_seconds": round(filled.seconds, 1),
            "lore_vector_store_seconds": round(filled.vector_seconds, 1),
            "lore_chunks_per_s": round(filled.chunks / filled.seconds),
            "chroma_seconds": round(plain_seconds, 1),
            "chroma_chunks_per_s": round(filled.chunks / plain_seconds),
            "vacuum_analyze_seconds": round(maintenance, 1),
        },
        "latency": latency,
        "p95_vs_chroma": {
            kind: round(latency[kind]["p95_ms"] / latency["chroma_dense"]["p95_ms"], 2)
            for kind in (QueryType.VECTOR.value, QueryType.HYBRID.value, QueryType.KEYWORD.value)
        },
        "memory_pss_mb": {
            "lore": _pss_mb([os.getpid()]),
            "postgresql": _pss_mb(_postgres_pids(services)),
            "chroma_server": _pss_mb(_chroma_pids(plain.port)),
        },
        "disk_mb": _disk_mb(services, plain.port),
    }


class _Plain:
    """The baseline: a collection on the same Chroma server, used directly."""

    def __init__(self, host: str, port: int) -> None:
        self.port = port
        client = chromadb.HttpClient(
            host=host, port=port, settings=ChromaSettings(anonymized_telemetry=False)
        )
        self._client = client
        self.collection: Collection = client.create_collection(
            f"plain-baseline-{uuid.uuid4().hex[:8]}",
            embedding_function=None,
            metadata={"hnsw:space": "cosine"},
        )

    def drop(self) -> None:
        self._client.delete_collection(self.collection.name)

    def add(self, corpus: Corpus) -> float:
        return add_corpus(self.collection, corpus, min(self._client.get_max_batch_size(), 5000))


async def _latencies(
    services: Services, index: IndexRef, plain: _Plain, count: int
) -> dict[str, dict[str, float]]:
    pool = await embedded_pool(services.embedder)
    asked = questions(pool, WARM_UP + count, seed=7)
    keyword = KeywordIndex(services.db)

    async def second_stage(question: str) -> object:
        return await asyncio.to_thread(keyword.frequencies, query_terms(question))

    lanes = search_lanes(services, index, plain.collection)
    lanes["second_stage_sql"] = second_stage
    return await timed(lanes, asked[:WARM_UP], asked[WARM_UP:])


def _vacuum_analyze(services: Services) -> float:
    started = time.perf_counter()
    with services.db.engine.connect() as connection:
        connection.execution_options(isolation_level="AUTOCOMMIT").exec_driver_sql("VACUUM ANALYZE chunk")
    return time.perf_counter() - started


def _postgres_pids(services: Services) -> list[int]:
    with services.db.engine.connect() as connection:
        data = Path(str(connection.exec_driver_sql("SHOW data_directory").scalar_one()))
    postmaster = int((data / "postmaster.pid").read_text().split()[0])
    return [postmaster, *_children(postmaster)]


def _chroma_pids(port: int) -> list[int]:
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                command = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if "chroma" in command and " run " in command and f"--port {port}" in command:
                found.append(int(proc.name))
    return found


def _children(parent: int) -> list[int]:
    children = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if int(fields[1]) == parent:
                children.append(int(proc.name))
    return children


def _pss_mb(pids: Sequence[int]) -> int:
    """Proportional set size summed over the processes (shared memory counted once)."""
    total = 0
    for pid in pids:
        try:
            text = Path(f"/proc/{pid}/smaps_rollup").read_text()
        except OSError:
            continue
        match = re.search(r"^Pss:\s+(\d+) kB", text, re.MULTILINE)
        total += int(match.group(1)) if match else 0
    return round(total / 1024)


def _disk_mb(services: Services, chroma_port: int) -> dict[str, int]:
    with services.db.engine.connect() as connection:
        database = connection.exec_driver_sql("SELECT pg_database_size(current_database())").scalar_one()
        chunks = connection.exec_driver_sql("SELECT pg_total_relation_size('chunk')").scalar_one()
        keyword = connection.exec_driver_sql("SELECT pg_relation_size('ix_chunk_tsv')").scalar_one()
    chroma = 0
    for pid in _chroma_pids(chroma_port):
        command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        if b"--path" in command:
            folder = Path(command[command.index(b"--path") + 1].decode())
            chroma = sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())
    return {
        "postgresql_database": round(database / 1e6),
        "chunk_table_with_indexes": round(chunks / 1e6),
        "keyword_index": round(keyword / 1e6),
        "chroma_server_both_collections": round(chroma / 1e6),
    }


async def keyword_only(workdir: Path, chunks: int, count: int = QUERIES) -> dict[str, Any]:
    """PostgreSQL alone at a size whose vectors this machine cannot build in the time: the
    chunks of the same synthetic documents copied in (`COPY`, the keyword index built after),
    then keyword search and the second stage's SQL timed on the same questions. Not Lore's
    write path, and no dense side: what it shows is how keyword search grows."""
    from bench.scale import handbook
    from tests.support.postgres import create_database, serve_postgres

    started = time.perf_counter()
    with serve_postgres() as admin_url:
        settings = Settings(
            _env_file=None, lore_home=workdir / "lore", database_url=create_database(admin_url)
        )
        services = build_services(settings)
        try:
            index = await create_index(services)
            load = await asyncio.to_thread(_copy_in, services, index, handbook(), chunks)
            maintenance = await asyncio.to_thread(_vacuum_analyze, services)
            pool = await embedded_pool(services.embedder)
            asked = questions(pool, WARM_UP + count, seed=7)
            keyword = KeywordIndex(services.db)
            candidates = services.retriever.spec.candidates

            async def search(question: str) -> object:
                return await asyncio.to_thread(keyword.search, [index.id], question, candidates)

            async def second_stage(question: str) -> object:
                return await asyncio.to_thread(keyword.frequencies, query_terms(question))

            lanes = {"keyword": search, "second_stage_sql": second_stage}
            latency = await timed(lanes, asked[:WARM_UP], asked[WARM_UP:])
            return {
                "chunks": chunks,
                "copy_and_index_seconds": round(load, 1),
                "vacuum_analyze_seconds": round(maintenance, 1),
                "latency": latency,
                "memory_pss_mb": {"postgresql": _pss_mb(_postgres_pids(services))},
                "disk_mb": _disk_mb(services, 0),
                "load_average_1m": round(os.getloadavg()[0], 2),
                "wall_seconds": round(time.perf_counter() - started, 1),
            }
        finally:
            await services.aclose()


def _copy_in(services: Services, index: IndexRef, facts: Sequence[Any], chunks: int) -> float:
    """The documents (ready) and their chunks, by COPY; the keyword index dropped before and
    built after, as a bulk load does. Seconds taken."""
    from bench.scale import synthetic_texts

    started = time.perf_counter()
    raw = services.db.engine.raw_connection()
    try:
        cursor = raw.cursor()
        cursor.execute("DROP INDEX IF EXISTS ix_chunk_tsv")
        cursor.execute("SELECT coalesce(max(id), 0) FROM document")
        first = int(cursor.fetchone()[0]) + 1
        # One COPY at a time on a connection: the documents, then their chunks (drawn again).
        with cursor.copy(
            "COPY document (id, index_id, source_kind, source_key, name, time_added, mime_type, size, "
            "characters, content_hash, chunk_count, status, meta) FROM STDIN"
        ) as documents:
            for document_id, (title, texts) in enumerate(synthetic_texts(facts, chunks), start=first):
                name = f"{title.lower().replace(',', '').replace(' ', '-')}.md"
                row = (document_id, index.id, "file", name, name, "2026-01-01", "text/markdown")
                documents.write_row((*row, 0, 0, f"h{document_id}", len(texts), "ready", "{}"))
        with cursor.copy("COPY chunk (document_id, index_id, position, heading, text) FROM STDIN") as rows:
            for document_id, (title, texts) in enumerate(synthetic_texts(facts, chunks), start=first):
                for position, text in enumerate(texts):
                    rows.write_row((document_id, index.id, position, title, text))
        cursor.execute("SELECT setval('document_id_seq', (SELECT max(id) FROM document))")
        cursor.execute("CREATE INDEX ix_chunk_tsv ON chunk USING GIN (index_id, tsv)")
        raw.commit()
    finally:
        raw.close()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.servers")
    parser.add_argument("--quick", action="store_true", help="a minutes-long run (two small sizes)")
    parser.add_argument("--sizes", type=int, nargs="+", help=f"chunks at each step (default {SIZES})")
    parser.add_argument(
        "--keyword-only", type=int, metavar="CHUNKS", help="PostgreSQL alone, filled by COPY to CHUNKS"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="lore-servers-") as workdir:
        if args.keyword_only:
            result = asyncio.run(keyword_only(Path(workdir), args.keyword_only))
        else:
            result = asyncio.run(run(Path(workdir), args.quick, args.sizes))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
