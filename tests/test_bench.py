"""The benchmarks keep working: a seconds-long run of `python -m bench --quick`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_quick_benchmark_runs_and_reports(tmp_path: Path) -> None:
    out = tmp_path / "quick.json"
    run = subprocess.run(
        [sys.executable, "-m", "bench", "--quick", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    report = json.loads(out.read_text())
    assert report["embedder"]["passages_per_s"] > 0 and report["ingest"]["chunks"] > 0
    assert set(report["ingest"]["query_latency"]) == {"vector", "keyword", "hybrid"}
    assert "| ingest / embedder alone |" in run.stdout
    for kind in ("extractive", "generative"):
        slack = report["slack"][kind]
        assert slack["mentions"] == 5 and slack["llm"] == (kind == "generative")
        assert 0 < slack["ack"]["p50_ms"] <= slack["answer"]["p50_ms"]
    assert "| Slack mention → answer, generative p50 / p95, ms |" in run.stdout
