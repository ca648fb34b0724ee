"""The benchmarks keep working: `python -m bench --quick`, a tiny version of every section,
writes the JSON, the table and the charts."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.support.processes import run_in_group

ROOT = Path(__file__).resolve().parents[1]
SCIFACT = ROOT.parent / "shared" / "data" / "scifact"


@pytest.mark.slow
def test_quick_benchmark_runs_every_section_and_reports(tmp_path: Path) -> None:
    # its own process group: a timeout stops the bench and the `lore run`s it started
    run = run_in_group(
        [sys.executable, "-m", "bench", "--quick", "--out", str(tmp_path)], cwd=ROOT, timeout=1200
    )
    assert run.returncode == 0, run.stderr[-3000:]
    report = json.loads((tmp_path / "latest.json").read_text())
    assert set(report["seconds"]) == {
        "ingest",
        "extraction",
        "memory",
        "retrieval",
        "access",
        "mcp",
        "crawl",
        "github",
        "google_drive",
        "notion",
        "slack",
        "quality",
        "help",
        "console",
    }

    assert report["ingest"]["pipeline"]["chunks"] == report["ingest"]["embedder"]["chunks"] > 0
    assert report["ingest"]["ratios"]["pipeline_vs_embedder"] > 0
    for size in report["retrieval"]["sizes"]:
        assert set(size["latency"]) >= {"keyword", "vector", "hybrid", "chroma_dense"}
    access = report["access"]
    assert access["search"]["restricted_documents"] > access["search"]["asker_reads_restricted"] > 0
    assert access["permission_sync"]["first_changed"] == access["permission_sync"]["pages"] > 0
    assert access["permission_sync"]["unchanged_changed"] == 0
    mcp = report["mcp"]  # search_knowledge over MCP beside the HTTP API's search, through lore serve
    assert (
        set(mcp["latency"]) == {"api_query", "mcp_legacy", "mcp_auto"} and mcp["p95_vs_api"]["mcp_legacy"] > 0
    )
    assert report["crawl"]["recrawl"]["pages_unchanged"] == report["crawl"]["first_crawl"]["pages"] > 0
    github = report["github"]
    assert github["unchanged_resync"]["items_unchanged"] == github["first_sync"]["items"] > 0
    assert (
        github["unchanged_resync"]["blobs_fetched"] == github["unchanged_resync"]["issue_bodies_fetched"] == 0
    )
    assert github["ratios"]["sync_vs_embedder"] > 0
    drive = report["google_drive"]  # an unchanged Drive costs one change-feed request
    assert drive["first_sync"]["files"] == drive["drive"]["files"] > 0
    assert drive["unchanged_resync"]["by_path"] == {"changes": 1}
    assert drive["unchanged_resync"]["exports_and_downloads"] == 0
    shared = drive["permission_sync"]  # Drive's sharing read again: a listing, no content
    assert shared["permissions"]["exports_and_downloads"] == 0 and shared["permissions"]["requests"] > 0
    assert shared["restricted"] == shared["documents"] > 0, "shared with their owner only"
    notion = report["notion"]
    assert notion["unchanged_resync"]["pages_unchanged"] == notion["first_sync"]["pages"] > 0
    assert (
        notion["unchanged_resync"]["block_children_read"] == 0 < notion["first_sync"]["block_children_read"]
    )
    [slack] = report["slack"]["sizes"]
    for kind in ("extractive", "generative"):
        for run_ in slack[kind]["runs"].values():
            assert 0 < run_["ack"]["p50_ms"] <= run_["answer"]["p50_ms"]
        assert slack[kind]["memory"]["idle_mb"] > 0
    lore_ask = report["quality"]["docs_qa"]["lore_ask"]  # `lore ask` in a process of its own
    assert lore_ask["questions"] > 0 and 0 < lore_ask["p50_s"] <= lore_ask["p95_s"]
    seen_once = report["quality"]["docs_qa"]["seen_once"]["tune"]  # HTTPX, Click, Uvicorn, FastAPI
    assert seen_once["answerable"] > 0 and 0 <= seen_once["facts"] <= 1 and 0 <= seen_once["lead_facts"] <= 1
    scifact = report["quality"]["scifact"]
    if SCIFACT.joinpath("corpus.jsonl").exists():
        assert 0 < scifact["hybrid"]["ndcg@10"] <= 1
    else:  # SciFact is not redistributable here (CC BY-NC): optional, and said to be skipped
        assert scifact == {"skipped": f"no BEIR corpus at {SCIFACT}"}
    extraction = report["extraction"]  # the real-file corpus is a cache: skipped without it
    assert extraction.get("skipped", "").startswith("no corpus at ") or extraction["files"] > 0
    memory = report["memory"]
    assert memory["embedder"]["bounded"]["peak_mb"] > 0
    assert memory["lore_ingest"]["generated"]["exit_code"] == 0 and memory["lore_ingest"]["peak_mb"] > 0
    assert memory["lore_run"]["tree_peak_mb"] > 0 and memory["lore_run"]["questions_answered"] > 0

    help_ = report["help"]  # a help channel through lore run, and verified answers reworded
    assert (
        help_["messages"] == 9
        and 0 <= help_["precision"] <= 1
        and help_["by_kind"]["chatter"]["messages"] == 3
    )
    assert help_["verified"]["heldout"]["verified"] == 3
    console = report["console"]  # the admin console: its overview page and the coverage-gap job
    assert 0 < console["overview"]["p50_ms"] <= console["overview"]["p95_ms"]
    assert console["gaps"]["embedded_first"] > 0 and console["gaps"]["embedded_again"] == 0

    table = (tmp_path / "latest.md").read_text()
    assert "**Help channel**" in table and "facts at a glance" in table
    assert "| seen-once projects (" in table and "| facts | first line | facts at a glance |" in table
    assert "| Ack p99 at 50 concurrent mentions, ms |" in table and "not measured" not in table
    assert "**Slack path**" in table and "**Quality**" in table and "**Memory**" in table
    assert "**Real-world files**" in table and "**MCP**" in table and "**GitHub sync**" in table
    for chart in ("retrieval.png", "slack.png"):
        assert (tmp_path / chart).read_bytes().startswith(b"\x89PNG")
