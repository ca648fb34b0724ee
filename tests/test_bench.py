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
