"""`python -m bench.extraction [--quick] [--corpus DIR]`: Lore's extraction over real files.

Every file of the corpus (`bench.realfiles`: public projects' test files, in a cache) goes
through `knowledge.extraction.extract` and `knowledge.indexing.ingest.content_hash`, as the
`Ingestor` prepares a document, in a worker process of its own: a file that hangs or kills
the worker is reported as such (after `DEADLINE` seconds) and the next one gets a fresh
worker, and the worker's resident memory is the extraction's own.

Per type: files accepted, refused (an `IngestError`, which tells the user why) and failed
(any other exception, a crash or a hang), MB/s and the worker's peak RSS. Text quality:

- readability's test pages: recall of the expected main content, and the share of our text
  that is not in it (boilerplate);
- PDF: word agreement with pdfminer.six (a second extractor), files whose text disagrees,
  and files one reads and the other does not;
- Word and PowerPoint: the share of the words of all parts (body, notes, headers, footers,
  comments, text boxes) that our text has.

Without a corpus the section reports `skipped: no corpus at …`; `--quick` takes every 25th
file.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import multiprocessing
import statistics
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from bench import agreement
from bench.memory import peak_mb, reset_peak
from bench.realfiles import RealFile, corpus

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = ROOT.parent / "cache" / "realfiles"
DEADLINE = 120.0
"""Seconds one file may take (ours or the reference extractor) before it counts as hung."""
QUICK_EVERY = 25
DISAGREE_BELOW = 0.5
"""PDF agreement under which the two extractors read different text (one of them garbage)."""
READS_WORDS = 20
"""Words an extractor must find for a file to count as read by it."""


@dataclass(frozen=True)
class Outcome:
    """What one extraction of one file came to, measured inside the worker."""

    outcome: str  # accepted, refused, failed
    reason: str
    seconds: float
    text: str
    peak_mb: float


# -- the worker -------------------------------------------------------------------------------


def _serve(connection: Connection) -> None:
    """The worker's loop: (kind, path) in, an `Outcome`'s fields out, until None."""
    logging.disable(logging.WARNING)  # damaged files make the PDF libraries talk a lot
    connection.send("ready")
    while (request := connection.recv()) is not None:
        kind, path = request
        connection.send(_extract(kind, Path(path)))


def _extract(kind: str, path: Path) -> dict[str, Any]:
    from knowledge.errors import IngestError
    from knowledge.extraction import extract
    from knowledge.indexing.ingest import content_hash

    data = path.read_bytes()
    reset_peak()
    started = time.perf_counter()
    text, reason, outcome = "", "", "accepted"
    try:
        if kind == "lore":
            text = extract(data, path.name).text
            content_hash(text)
        else:
            text = agreement.pdfminer_text(data)
    except IngestError as exc:
        outcome, reason = "refused", type(exc).__name__
    except Exception as exc:  # what the benchmark is there to find
        outcome, reason = "failed", f"{type(exc).__name__}: {str(exc)[:160]}"
    seconds = time.perf_counter() - started
    return {
        "outcome": outcome,
        "reason": reason,
        "seconds": seconds,
        "text": text,
        "peak_mb": peak_mb() or 0.0,
    }


class Worker:
    """One extraction process at a time; replaced after a hang or a crash."""

    def __init__(self) -> None:
        self._process: multiprocessing.process.BaseProcess | None = None
        self._connection: Connection | None = None
        self.peak_mb = 0.0

    def run(self, kind: str, path: Path) -> Outcome:
        connection = self._ready()
        connection.send((kind, str(path)))
        try:
            if connection.poll(DEADLINE):
                result = Outcome(**connection.recv())
                self.peak_mb = max(self.peak_mb, result.peak_mb)
                return result
            reason = f"no answer in {DEADLINE:g} s"
        except EOFError:
            reason = "the worker died"
        self.close()
        return Outcome("failed", reason, DEADLINE, "", 0.0)

    def _ready(self) -> Connection:
        if self._connection is None:
            context = multiprocessing.get_context("spawn")
            parent, child = context.Pipe()
            self._process = context.Process(target=_serve, args=(child,), daemon=True)
            self._process.start()
            child.close()
            if not parent.poll(DEADLINE) or parent.recv() != "ready":
                raise RuntimeError("the extraction worker did not start")
            self._connection = parent
        return self._connection

    def close(self) -> None:
        if self._connection is not None:
            with contextlib.suppress(OSError):
                self._connection.send(None)
            self._connection.close()
        if self._process is not None:
            self._process.join(5)
            if self._process.is_alive():
                self._process.kill()
                self._process.join()
        self._process, self._connection = None, None


# -- the measures -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Measured:
    file: RealFile
    size: int
    ours: Outcome
    reference: Outcome | None
    """pdfminer.six's reading of a PDF; None for other types."""


def measure(files: Sequence[RealFile], worker: Worker) -> list[Measured]:
    measured = []
    for file in files:
        ours = worker.run("lore", file.path)
        reference = worker.run("pdfminer", file.path) if file.type == "pdf" else None
        measured.append(Measured(file, file.path.stat().st_size, ours, reference))
    return measured


def by_type(measured: Sequence[Measured]) -> dict[str, Any]:
    groups: dict[str, list[Measured]] = defaultdict(list)
    for m in measured:
        groups[m.file.group].append(m)
    return {name: _counts(group) for name, group in sorted(groups.items())}


def _counts(group: Sequence[Measured]) -> dict[str, Any]:
    outcomes = Counter(m.ours.outcome for m in group)
    mb = sum(m.size for m in group) / 1e6
    seconds = sum(m.ours.seconds for m in group)
    return {
        "files": len(group),
        "accepted": outcomes["accepted"],
        "refused": outcomes["refused"],
        "failed": outcomes["failed"],
        "mb": round(mb, 2),
        "seconds": round(seconds, 2),
        "mb_per_s": round(mb / seconds, 2) if seconds else None,
        "peak_mb": round(max(m.ours.peak_mb for m in group), 1),
        "refusals": dict(Counter(m.ours.reason for m in group if m.ours.outcome == "refused").most_common()),
        "failures": [f"{m.file.path.name}: {m.ours.reason}" for m in group if m.ours.outcome == "failed"],
    }


def _share(values: Iterable[float]) -> dict[str, Any]:
    ordered = sorted(values)
    if not ordered:
        return {"files": 0}
    return {
        "files": len(ordered),
        "median": round(statistics.median(ordered), 3),
        "mean": round(statistics.fmean(ordered), 3),
        "p10": round(ordered[len(ordered) // 10], 3),
    }


def readability(measured: Sequence[Measured]) -> dict[str, Any]:
    """Recall of readability's expected text and the boilerplate share of ours, per page we
    accepted; pages we refused count with recall 0."""
    recalls, boilerplate = [], []
    for m in measured:
        if m.file.expected is None:
            continue
        expected = agreement.words(agreement.html_text(m.file.expected.read_bytes()))
        ours = agreement.words(m.ours.text)
        recalls.append(agreement.recall(ours, expected))
        if m.ours.outcome == "accepted":
            boilerplate.append(agreement.excess(ours, expected))
    return {
        "recall": _share(recalls),
        "boilerplate": _share(boilerplate),
        "pages_under_half_recall": sum(1 for r in recalls if r < 0.5),
    }


def pdf(measured: Sequence[Measured]) -> dict[str, Any]:
    """Our PDF text next to pdfminer.six's, file by file."""
    agreements, disagree, only_theirs, only_ours = [], [], [], []
    for m in measured:
        if m.reference is None:
            continue
        ours, theirs = agreement.words(m.ours.text), agreement.words(m.reference.text)
        ours_reads = sum(ours.values()) >= READS_WORDS and m.ours.outcome == "accepted"
        theirs_reads = sum(theirs.values()) >= READS_WORDS and m.reference.outcome == "accepted"
        if ours_reads and theirs_reads:
            value = agreement.agreement(ours, theirs)
            agreements.append(value)
            if value < DISAGREE_BELOW:
                disagree.append(f"{m.file.path.name} ({value:.2f})")
        elif theirs_reads:
            only_theirs.append(f"{m.file.path.name}: {m.ours.reason or 'few words'}")
        elif ours_reads:
            only_ours.append(m.file.path.name)
    return {
        "agreement": _share(agreements),
        "disagreeing": disagree,
        "read_only_by_pdfminer": only_theirs,
        "read_only_by_lore": only_ours,
        "pdfminer_seconds": round(sum(m.reference.seconds for m in measured if m.reference), 1),
    }


def coverage(measured: Sequence[Measured], kind: str) -> dict[str, Any]:
    """The share of the words of all parts of each Word or PowerPoint file that our text has
    (files we refused count as 0); and across the type, all words pooled."""
    shares, common, total = [], 0, 0
    for m in measured:
        if m.file.type != kind or m.ours.outcome == "failed":
            continue
        try:
            everything = agreement.words(agreement.ooxml_text(m.file.path.read_bytes()))
        except (OSError, ValueError):  # not a zip at all: nothing to compare with
            continue
        if not everything:
            continue
        ours = agreement.words(m.ours.text)
        shares.append(agreement.recall(ours, everything))
        common += sum((ours & everything).values())
        total += sum(everything.values())
    return {**_share(shares), "pooled": round(common / total, 3) if total else None}


def select(files: Sequence[RealFile], quick: bool) -> list[RealFile]:
    return list(files[::QUICK_EVERY]) if quick else list(files)


def report(
    measured: Sequence[Measured], worker_peak: float, corpus_dir: Path, seconds: float
) -> dict[str, Any]:
    total_mb = sum(m.size for m in measured) / 1e6
    ours_seconds = sum(m.ours.seconds for m in measured)
    return {
        "corpus": str(corpus_dir),
        "files": len(measured),
        "mb": round(total_mb, 2),
        "by_type": by_type(measured),
        "overall": {
            **{k: v for k, v in _counts(measured).items() if k not in ("refusals", "failures")},
            "mb_per_s": round(total_mb / ours_seconds, 2) if ours_seconds else None,
        },
        "worker_peak_mb": round(worker_peak, 1),
        "quality": {
            "readability": readability(measured),
            "pdf": pdf(measured),
            "docx": coverage(measured, "docx"),
            "pptx": coverage(measured, "pptx"),
        },
        "seconds": round(seconds, 1),
    }


async def run(workdir: Path, quick: bool, corpus_dir: Path = DEFAULT_CORPUS) -> dict[str, Any]:
    """The section: every corpus file through a fresh extraction worker; `skipped` without a
    corpus."""
    files = select(corpus(corpus_dir), quick)
    if not files:
        return {"skipped": f"no corpus at {corpus_dir} (build it with python -m bench.realfiles)"}
    started = time.perf_counter()
    worker = Worker()
    try:
        measured = await asyncio.to_thread(measure, files, worker)
    finally:
        worker.close()
    return report(measured, worker.peak_mb, corpus_dir, time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.extraction")
    parser.add_argument("--quick", action="store_true", help=f"every {QUICK_EVERY}th file")
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="the real-file corpus")
    args = parser.parse_args()
    print(json.dumps(asyncio.run(run(Path("."), args.quick, args.corpus)), indent=2))


if __name__ == "__main__":
    main()
