"""The sections on request only keep working, at a smoke's size, on the test session's own
PostgreSQL and Chroma server: `servers` (one index on both, beside plain chromadb on the same
server) and `replicas` (the Slack burst on one and two real `lore run` replicas, with two
`lore worker` processes, on shared stores)."""

from __future__ import annotations

from pathlib import Path

import chromadb
import pytest
from chromadb.config import Settings as ChromaSettings

from bench import replicas, servers
from bench.stores import Servers

pytestmark = [pytest.mark.slow, pytest.mark.postgres, pytest.mark.chroma_server]


def collections(chroma_server: tuple[str, int]) -> set[str]:
    client = chromadb.HttpClient(
        host=chroma_server[0], port=chroma_server[1], settings=ChromaSettings(anonymized_telemetry=False)
    )
    return {c.name for c in client.list_collections()}


async def test_servers_section_measures_every_lane_and_leaves_nothing(
    tmp_path: Path, postgres_admin_url: str, chroma_server: tuple[str, int]
) -> None:
    before = collections(chroma_server)
    report = await servers.run(
        tmp_path, True, sizes=[120], servers=Servers(postgres_admin_url, *chroma_server)
    )
    [row] = report["sizes"]
    assert row["chunks"] == row["build"]["added"] == 120
    lanes = {"keyword", "vector", "hybrid", "chroma_dense", "second_stage_sql"}
    assert set(row["latency"]) == lanes
    assert all(0 < row["latency"][lane]["p50_ms"] <= row["latency"][lane]["p95_ms"] for lane in lanes)
    assert row["p95_vs_chroma"]["hybrid"] > 0 and report["goal"]["at_chunks"] == 120
    assert row["memory_pss_mb"]["postgresql"] > 0 and row["memory_pss_mb"]["chroma_server"] > 0
    assert row["disk_mb"]["chunk_table_with_indexes"] >= 0
    assert collections(chroma_server) == before, "the plain collection and Lore's are dropped"


async def test_replicas_section_answers_every_mention_on_one_and_two_replicas(
    tmp_path: Path, postgres_admin_url: str, chroma_server: tuple[str, int]
) -> None:
    before = collections(chroma_server)
    report = await replicas.run(tmp_path, True, servers=Servers(postgres_admin_url, *chroma_server))
    assert report["chunks"] >= replicas.QUICK_CHUNKS and report["workers"] == replicas.WORKERS
    for count in (1, 2):
        burst = report[f"replicas_{count}"]
        assert burst["mentions"] == replicas.QUICK_PLAN.mentions
        assert 0 < burst["ack"]["p50_ms"] <= burst["answer"]["p50_ms"] <= burst["answer"]["p95_ms"]
    assert collections(chroma_server) == before
