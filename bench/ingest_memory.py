"""`python -m bench.ingest_memory [--quick] [--corpus DIR]`: the memory ingesting takes.

- The embedder alone, fed as Lore feeds it (`Shapes()`) and as it was fed before its memory
  was bounded (`UNBOUNDED`): peak RSS over the same batches of varied lengths, and texts/s,
  each in a fresh process (`--probe`).
- `lore ingest` of a folder of generated documents, and of a sample of the real-file corpus
  when there is one (`bench.realfiles`): the process's peak RSS (from the kernel, at exit),
  its process tree's peak (sampled) and documents/s.
- `lore run` (Slack HTTP mode, fake Slack Web API) while files posted in its channel are
  ingested one message at a time and questions are asked meanwhile: its peak RSS and the
  answers' latency.

The bar is `TARGET_MB`: the small hosts (512 MB to 1 GB) the Procfile invites.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import mimetypes
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from bench.memory import PROC, peak_mb, reset_peak, rss_mb
from bench.realfiles import corpus

TARGET_MB = 600
INGEST_TIMEOUT = 1800.0
"""Seconds one `lore ingest` run or one file posted in Slack may take."""
SAMPLE_TYPES = ("pdf", "docx", "pptx", "html", "text")
SAMPLE_FILES, SAMPLE_MAX_BYTES = 60, 2_000_000
SLACK_FILES = 12
"""Files posted in Slack: the largest of those `lore ingest` read (the real sample if any)."""
QUESTION_EVERY = 1.0
"""Seconds between a question's answer and the next question while files are ingested."""
PROBE_SLICE = 64
"""Texts per `embed_sync` call, as `embed_batches` slices an ingest batch."""


# -- the embedder alone, in a process of its own ------------------------------------------------


def probe_texts(count: int, seed: int = 11) -> list[str]:
    """Texts of every length up to past the model's window, in a seeded order: about a
    third short (a line), a third medium (a paragraph) and a third long (a full chunk)."""
    rng = random.Random(seed)
    root = Path(__file__).resolve().parents[1]
    pages = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    words = " ".join(page.read_text() for page in pages).split()
    lengths = [
        rng.choice((rng.randint(2, 30), rng.randint(30, 120), rng.randint(150, 400))) for _ in range(count)
    ]
    return [" ".join(rng.choice(words) for _ in range(n)) for n in lengths]


def probe(kind: str, count: int) -> dict[str, Any]:
    """Load the embedder fed as `kind` says, embed `count` varied texts in ingest-sized
    slices; memory and speed."""
    from knowledge.backends.embedding import UNBOUNDED, LocalEmbedder, Shapes

    embedder = LocalEmbedder(shapes=UNBOUNDED if kind == "unbounded" else Shapes())
    texts = probe_texts(count)
    embedder.load()
    embedder.embed_sync(["warm up"])
    loaded = rss_mb() or 0.0
    started, cpu = time.perf_counter(), time.process_time()
    for start in range(0, len(texts), PROBE_SLICE):
        embedder.embed_sync(texts[start : start + PROBE_SLICE])
    seconds = time.perf_counter() - started
    peak = peak_mb() or 0.0
    return {
        "texts": len(texts),
        "loaded_mb": loaded,
        "peak_mb": peak,
        "growth_mb": round(peak - loaded, 1),
        "texts_per_s": round(len(texts) / seconds, 2),
        "cpu_ms_per_text": round(1000 * (time.process_time() - cpu) / len(texts), 1),
    }


def run_probe(kind: str, count: int) -> dict[str, Any]:
    command = [sys.executable, "-m", "bench.ingest_memory", "--probe", kind, "--texts", str(count)]
    done = subprocess.run(
        command, capture_output=True, text=True, check=True, cwd=_ROOT, timeout=INGEST_TIMEOUT
    )
    result: dict[str, Any] = json.loads(done.stdout)
    return result


# -- a process and its children, measured from outside -----------------------------------------

_ROOT = Path(__file__).resolve().parents[1]


def tree_rss_mb(pid: int) -> float:
    """Resident MB of `pid` and all its descendants, now."""
    children: dict[int, list[int]] = {}
    for entry in PROC.iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry.name))
    total, todo = 0.0, [pid]
    while todo:
        current = todo.pop()
        total += rss_mb(current) or 0.0
        todo += children.get(current, [])
    return round(total, 1)


class TreePeak:
    """Samples a process tree's RSS every `every` seconds in a thread, keeping the peak."""

    def __init__(self, pid: int, every: float = 0.25) -> None:
        self.peak = 0.0
        self._pid, self._every = pid, every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> TreePeak:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _sample(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, tree_rss_mb(self._pid))
            self._stop.wait(self._every)


def lore_env(home: Path) -> dict[str, str]:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "OPENAI_", "LORE_", "DATABASE_"))
    }
    return {**env, "LORE_HOME": str(home), "ANONYMIZED_TELEMETRY": "False"}


def lore_ingest(home: Path, folder: Path) -> dict[str, Any]:
    """`lore ingest` of `folder` into a fresh home: exit code, time, peak RSS (the kernel's
    count for the process, and the sampled peak of its tree)."""
    files = sum(1 for path in folder.rglob("*") if path.is_file())
    lore = str(Path(sys.executable).with_name("lore"))
    home.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    with (home / "lore-ingest.log").open("wb") as log:
        process = subprocess.Popen(
            [lore, "ingest", "-i", "bench", str(folder)], env=lore_env(home), stdout=log, stderr=log
        )
        try:
            with TreePeak(process.pid) as tree:
                _, status, usage = os.wait4(process.pid, 0)
        except BaseException:  # the bench stopped: so does its `lore ingest`
            process.kill()
            process.wait()
            raise
        process.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - started
    return {
        "files": files,
        "mb": round(sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e6, 2),
        "exit_code": process.returncode,
        "seconds": round(seconds, 1),
        "docs_per_s": round(files / seconds, 2),
        "peak_mb": round(usage.ru_maxrss / 1024, 1),
        "tree_peak_mb": tree.peak,
    }


# -- the folders --------------------------------------------------------------------------------


def generated_folder(folder: Path, quick: bool) -> Path:
    """bench.ingest's generated Markdown, HTML, PDF and Word documents, as files."""
    from bench.ingest import mixed_corpus

    folder.mkdir(parents=True, exist_ok=True)
    for item in mixed_corpus(
        seed=20250102, per_format=1 if quick else 6, blocks=(4, 8) if quick else (8, 22)
    ):
        (folder / item.source.name).write_bytes(item.source.data)
    return folder


def real_folder(folder: Path, corpus_dir: Path, count: int) -> Path | None:
    """About `count` corpus files of the types in `SAMPLE_TYPES` (every n-th, under 2 MB),
    copied flat; None without a corpus."""
    files = [
        f for f in corpus(corpus_dir) if f.type in SAMPLE_TYPES and f.path.stat().st_size <= SAMPLE_MAX_BYTES
    ]
    if not files:
        return None
    folder.mkdir(parents=True, exist_ok=True)
    for file in files[:: max(1, len(files) // count)][:count]:
        flat = str(file.path.relative_to(corpus_dir)).replace("/", "__")
        shutil.copyfile(file.path, folder / flat)
    return folder


# -- lore run while ingesting -----------------------------------------------------------------


def cpu_seconds(pid: int) -> float:
    fields = (PROC / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def settled(pid: int, limit: float = 300.0) -> None:
    """Wait until `pid` spends under a tenth of a core for two seconds in a row (work queued
    behind the replies is done), at most `limit` seconds."""
    deadline = time.monotonic() + limit
    calm, last = 0, cpu_seconds(pid)
    while calm < 4 and time.monotonic() < deadline:
        await asyncio.sleep(0.5)
        now = cpu_seconds(pid)
        calm = calm + 1 if now - last < 0.05 else 0
        last = now


async def lore_run_while_ingesting(home: Path, files: Sequence[Path], quick: bool) -> dict[str, Any]:
    """`lore run` over a channel with a small index: each file posted with a mention asking
    Lore to add it, one message after another, while a question is asked every second or so;
    peak RSS of the process (and its tree) from the first file until it is idle again."""
    import aiohttp

    from bench.slack_path import BOT, CHANNEL, TEAM, USER, Driver, lore_run, prepare_channel
    from tests.fakes.slack_server import FakeSlack
    from tests.support.ports import free_port

    questions, _ = await prepare_channel(home, 300 if quick else 1_000)
    async with FakeSlack("xoxb-bench", TEAM, BOT) as slack:
        slack.add_channel(CHANNEL, "bench")
        slack.add_user(USER, "bench")
        for n, path in enumerate(files):
            mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
            slack.add_file(f"FBENCH{n}", path.name, path.read_bytes(), mime, path.suffix.lstrip("."))
        port = free_port()
        async with (
            lore_run(home, port, slack.api_url, None, jobs_in_process=True) as pid,
            aiohttp.ClientSession(f"http://127.0.0.1:{port}") as http,
        ):
            driver = Driver(slack, http, f"{os.getpid()}{int(time.time())}")
            await driver.mention(questions[0])
            loaded, resettable = rss_mb(pid), reset_peak(pid)
            started = time.perf_counter()
            with TreePeak(pid) as tree:
                answers = await _add_while_asking(driver, len(files), questions)
                await settled(pid)
            seconds = time.perf_counter() - started
            peak = peak_mb(pid) if resettable else None
    return {
        "files": len(files),
        "seconds": round(seconds, 1),
        "loaded_mb": loaded,
        "peak_mb": peak,
        "tree_peak_mb": tree.peak,
        "questions_answered": len(answers),
        "answer_p50_ms": round(statistics.median(answers), 1) if answers else None,
    }


async def _add_while_asking(driver: Any, files: int, questions: Sequence[str]) -> list[float]:
    """Post files FBENCH0… one mention at a time while questions are asked; the answers' ms."""
    stop = asyncio.Event()

    async def ask() -> list[float]:
        answers = []
        for question in _cycle(questions):
            if stop.is_set():
                break
            answers.append((await driver.mention(question)).answer)
            await asyncio.sleep(QUESTION_EVERY)
        return answers

    asker = asyncio.create_task(ask())
    try:
        for n in range(files):
            await driver.mention("please add this file to your memory", [f"FBENCH{n}"], INGEST_TIMEOUT)
    finally:
        stop.set()
    return await asker


def _cycle(items: Sequence[str]) -> Iterator[str]:
    while True:
        yield from items


# -- the section --------------------------------------------------------------------------------


async def run(workdir: Path, quick: bool, corpus_dir: Path | None = None) -> dict[str, Any]:
    from bench.extraction import DEFAULT_CORPUS

    corpus_dir = corpus_dir or DEFAULT_CORPUS
    result: dict[str, Any] = {"target_mb": TARGET_MB}
    kinds = ("bounded",) if quick else ("unbounded", "bounded")
    count = 48 if quick else 480
    result["embedder"] = {kind: await asyncio.to_thread(run_probe, kind, count) for kind in kinds}
    folders = {"generated": generated_folder(workdir / "generated", quick)}
    real = None if quick else real_folder(workdir / "real", corpus_dir, SAMPLE_FILES)
    if real is not None:
        folders["real"] = real
    ingests = {
        name: await asyncio.to_thread(lore_ingest, workdir / f"home-{name}", folder)
        for name, folder in folders.items()
    }
    result["lore_ingest"] = {**ingests, "peak_mb": max(i["tree_peak_mb"] for i in ingests.values())}
    posted = sorted((real or folders["generated"]).iterdir(), key=lambda path: -path.stat().st_size)
    slack_files = posted[: 2 if quick else SLACK_FILES]
    result["lore_run"] = await lore_run_while_ingesting(workdir / "home-run", slack_files, quick)
    return result


def main() -> None:
    from bench.extraction import DEFAULT_CORPUS

    parser = argparse.ArgumentParser(prog="python -m bench.ingest_memory")
    parser.add_argument("--quick", action="store_true", help="a small run (a minute)")
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="the real-file corpus")
    parser.add_argument("--probe", choices=("bounded", "unbounded"), help=argparse.SUPPRESS)
    parser.add_argument("--texts", type=int, default=480, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.probe:
        print(json.dumps(probe(args.probe, args.texts)))
        return
    with tempfile.TemporaryDirectory(prefix="lore-bench-memory-") as workdir:
        print(json.dumps(asyncio.run(run(Path(workdir), args.quick, args.corpus)), indent=2))


if __name__ == "__main__":
    main()
