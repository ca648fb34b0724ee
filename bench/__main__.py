"""`python -m bench [--quick] [--only SECTION …]`: Lore's speed, scale and quality on this
machine, each next to what a user would otherwise pick, measured in the same run.

Sections: ingest (mixed corpus; the embedder alone; plain chromadb), extraction (real files
from public test suites, when their cache is there: `--corpus`), memory (the embedder, `lore
ingest` and `lore run` while ingesting, against 600 MB), retrieval (latency
against index size; plain chromadb), mcp (`search_knowledge` over Streamable HTTP beside the HTTP
API's search, through `lore serve`), crawl (a loopback site, first and unchanged), github (a
fake GitHub repository of 300 docs and 1,000 issues: first sync, unchanged re-sync), google_drive
(a fake Drive folder of 500 Docs, Sheets, Slides, PDFs and Markdown files: first sync, unchanged
re-sync through the change feed), notion (a fake Notion workspace of 300 pages with nested
blocks: first sync, unchanged re-sync), slack
(mentions through `lore run`'s real Bolt endpoint at three index sizes, one and fifty at a
time; memory), quality (SciFact for keyword, dense and hybrid; answers over a generated
handbook), help (a help channel through `lore run`: 60 messages to nobody; verified answers
found for reworded questions), console (the admin console's overview over 100k questions, the coverage-gap job
over 10k); on request only (`--only`): servers (retrieval on PostgreSQL and a Chroma server
up to 1M chunks) and replicas (the Slack burst on one and two `lore run` replicas). Writes
bench/results/latest.json, latest.md (the table `docs/performance.md` shows) and the charts.
`--quick` runs a tiny version of each (seconds) so CI keeps them working.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import functools
import json
import os
import platform
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import (
    Section,
    access,
    console,
    crawl,
    extraction,
    github,
    google_drive,
    help_channel,
    ingest,
    ingest_memory,
    mcp,
    notion,
    quality,
    replicas,
    retrieval,
    servers,
    stop_children_on_term,
)
from bench.report import charts, markdown
from bench.slack_path import Plan, measure, prepare_channel

RESULTS = Path(__file__).parent / "results"
SLACK_SIZES, QUICK_SLACK_SIZES = (1_000, 10_000, 100_000), (300,)
SLACK_PLANS = (Plan(1, 30), Plan(50, 150))
QUICK_SLACK_PLANS = {"extractive": (Plan(1, 3), Plan(50, 50)), "generative": (Plan(1, 3),)}
"""The smoke run's burst (50 in flight) is extractive only: the generative path is the same
queue with an instant model, smoked one at a time (each burst embeds ~60 units a question)."""


async def slack(workdir: Path, quick: bool) -> dict[str, Any]:
    """For each size: a channel with three enabled indexes holding that many chunks, then
    mentions one at a time and fifty at a time, answered extractively and by a model."""
    sizes = []
    for chunks in QUICK_SLACK_SIZES if quick else SLACK_SIZES:
        home = workdir / f"slack-{chunks}"
        questions, filled = await prepare_channel(home, chunks)
        row: dict[str, Any] = {"chunks": chunks, "indexes": 3, **filled}
        for kind in ("extractive", "generative"):
            plans = QUICK_SLACK_PLANS[kind] if quick else SLACK_PLANS
            row[kind] = await measure(home, questions, plans, llm=kind == "generative")
        sizes.append(row)
    return {"sizes": sizes}


def sections(corpus: Path) -> dict[str, Section]:
    """Every section in the order they run; the real-file ones read `corpus`."""
    return {
        "ingest": ingest.run,
        "extraction": functools.partial(extraction.run, corpus_dir=corpus),
        "memory": functools.partial(ingest_memory.run, corpus_dir=corpus),
        "retrieval": retrieval.run,
        "access": access.run,
        "mcp": mcp.run,
        "crawl": crawl.run,
        "github": github.run,
        "google_drive": google_drive.run,
        "notion": notion.run,
        "slack": slack,
        "quality": quality.run,
        "help": help_channel.run,
        "console": console.run,
        "servers": servers.run,
        "replicas": replicas.run,
    }


ON_REQUEST = frozenset({"servers", "replicas"})
"""Sections on PostgreSQL and a Chroma server, run only when `--only` names them: at full
size they take an hour (`bench.servers` at 1M chunks) and start servers of their own."""


SECTIONS = sections(extraction.DEFAULT_CORPUS)


def machine() -> str:
    return f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench")
    parser.add_argument("--quick", action="store_true", help="a seconds-long smoke run (CI)")
    parser.add_argument("--only", nargs="+", choices=sorted(SECTIONS), help="run only these sections")
    parser.add_argument("--out", type=Path, default=RESULTS, help="folder for latest.json, latest.md, charts")
    parser.add_argument(
        "--redraw", action="store_true", help="only redo the table and charts from latest.json"
    )
    parser.add_argument(
        "--corpus",
        type=Path,
        default=extraction.DEFAULT_CORPUS,
        help="the real-file corpus (bench.realfiles)",
    )
    args = parser.parse_args()
    stop_children_on_term()
    if args.redraw:
        publish(json.loads((args.out / "latest.json").read_text()), args.out)
        return
    report: dict[str, Any] = {
        "date": datetime.date.today().isoformat(),
        "machine": machine(),
        "quick": args.quick,
        "seconds": {},
    }
    with tempfile.TemporaryDirectory(prefix="lore-bench-") as scratch:
        for name, section in sections(args.corpus).items():
            if (args.only and name not in args.only) or (name in ON_REQUEST and not args.only):
                continue
            started = time.perf_counter()
            print(f"bench: {name}…", flush=True)
            workdir = Path(scratch) / name
            workdir.mkdir()
            report[name] = asyncio.run(section(workdir, args.quick))
            report["seconds"][name] = round(time.perf_counter() - started, 1)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "latest.json").write_text(json.dumps(report, indent=2) + "\n")
    publish(report, args.out)


def publish(report: dict[str, Any], folder: Path) -> None:
    """latest.md and the charts, from a report."""
    charts(report, folder)
    table = markdown(report)
    (folder / "latest.md").write_text(table + "\n")
    print(table)


if __name__ == "__main__":
    main()
