"""Extraction under limits: documents read in worker processes that can be stopped.

A 2.6 MB Word file can unpack to 196 M characters and a 9 MB web page can take 50 s and
2 GB to parse; parsers written in C cannot be interrupted from Python. So a `DocumentReader`
with a deadline or a memory cap runs `extract` in worker processes
(`python -m knowledge.extraction.worker`, see there), each with its address space capped
(`RLIMIT_AS`, where the system has it). A worker past the deadline is killed; a worker whose
resident memory grew by more than `RECYCLE_MB` is retired after its reply, so memory a large
document left behind is given back to the system. Workers are reused otherwise: starting one
costs the imports of every extractor (about a second).

Refusals travel back as the same `IngestError`s `extract` raises; a deadline, an exhausted
memory cap or a crashed worker become `ExtractionLimit` or `UnreadableContent` naming it.
Thread-safe: concurrent callers get a worker each.
"""

from __future__ import annotations

import contextlib
import logging
import pickle
import selectors
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from typing import IO

from knowledge.errors import ExtractionLimit, IngestError, UnreadableContent
from knowledge.extraction.core import DEFAULT_MAX_BYTES, DEFAULT_MAX_CHARS, extract
from knowledge.extraction.types import Extracted
from knowledge.extraction.worker import memory_reason, read_message, write_message

log = logging.getLogger(__name__)

MB = 1024 * 1024
RECYCLE_MB = 256  # a worker grown this much keeps memory a large file left: replaced (see the docstring)
IDLE_WORKERS = 2  # workers kept warm between documents (each holds the extractors' imports)
STARTUP_SECONDS = 120.0
"""How long a new worker may take to import the extractors; not part of a document's time."""
_CLOSE_SECONDS = 5.0  # a worker asked to stop has this long before it is killed


@dataclass(frozen=True)
class ExtractionLimits:
    """What reading one document may cost. Without `seconds` and `memory_mb` documents are
    read in this process (only the sizes are limited)."""

    max_bytes: int = DEFAULT_MAX_BYTES
    max_chars: int = DEFAULT_MAX_CHARS
    seconds: float | None = None
    """Wall-clock time one document may take to read; None: no deadline."""
    memory_mb: int | None = None
    """Address space reading may add to a worker, in MB; None: no cap."""

    @property
    def isolated(self) -> bool:
        return self.seconds is not None or self.memory_mb is not None


class DocumentReader:
    """`extract` within `ExtractionLimits`; `close()` stops the idle workers."""

    def __init__(self, limits: ExtractionLimits | None = None) -> None:
        self.limits = limits or ExtractionLimits()
        self._idle: list[_Worker] = []
        self._busy: set[_Worker] = set()
        self._lock = threading.Lock()
        self._closed = False

    def extract(self, data: bytes, name: str, mime_type: str | None = None) -> Extracted:
        """The document's text; raises what `extract` raises, or ExtractionLimit when the
        deadline or the memory cap is reached."""
        limits = self.limits
        if not limits.isolated:
            return extract(
                data, name, mime_type=mime_type, max_bytes=limits.max_bytes, max_chars=limits.max_chars
            )
        worker = self._take()
        try:
            ok, payload = worker.ask(
                (data, name, mime_type, limits.max_bytes, limits.max_chars), limits.seconds
            )
        except BaseException as exc:
            self._lose(worker)
            raise self._refusal(exc, worker, name) from None
        self._give_back(worker)
        if ok:
            assert isinstance(payload, Extracted)
            return payload
        assert isinstance(payload, IngestError)
        raise payload

    def _refusal(self, exc: BaseException, worker: _Worker, name: str) -> BaseException:
        """What the caller hears when the worker did not reply (it has been stopped)."""
        limits = self.limits
        if isinstance(exc, _Timeout):
            return ExtractionLimit(
                name,
                f"reading it took longer than {limits.seconds:g} seconds (LORE_EXTRACT_TIMEOUT_SECONDS); "
                "split it into smaller files or save it in a simpler format",
            )
        if isinstance(exc, _Died):
            log.warning("the reader of %s died (exit code %s)", name, worker.exit_code)
            if limits.memory_mb is not None:
                return ExtractionLimit(name, memory_reason(limits.memory_mb))
            return UnreadableContent(name, "reading it crashed the reader (the file looks damaged)")
        return exc

    def close(self) -> None:
        """Stop every worker: the idle ones end, a busy one is killed (its caller hears the
        reader stopped). No process outlives the reader."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
            busy, self._busy = set(self._busy), set()
        for worker in idle:
            worker.close()
        for worker in busy:
            worker.kill()

    def _take(self) -> _Worker:
        with self._lock:
            worker = self._idle.pop() if self._idle else None
        worker = worker or _Worker(self.limits.memory_mb or 0)
        with self._lock:
            self._busy.add(worker)
        return worker

    def _lose(self, worker: _Worker) -> None:
        with self._lock:
            self._busy.discard(worker)
        worker.kill()

    def _give_back(self, worker: _Worker) -> None:
        with self._lock:
            self._busy.discard(worker)
            if not self._closed and worker.reusable and len(self._idle) < IDLE_WORKERS:
                self._idle.append(worker)
                return
        worker.close()


class _Timeout(Exception):
    pass


class _Died(Exception):
    pass


def _wait(stream: IO[bytes], seconds: float) -> None:
    """Return when `stream` has something to read; _Timeout after `seconds`. (A selector,
    not select(): a busy server holds more than the 1,024 descriptors select() can watch.)"""
    deadline = time.monotonic() + seconds
    with selectors.DefaultSelector() as selector:
        selector.register(stream, selectors.EVENT_READ)
        while not selector.select(max(0.0, deadline - time.monotonic())):
            if time.monotonic() >= deadline:
                raise _Timeout


class _Worker:
    """One worker process and its pipes."""

    def __init__(self, memory_mb: int) -> None:
        paths = [path for path in sys.path if path]
        boot = f"import sys; sys.path[:0] = {paths!r}; from knowledge.extraction.worker import serve; serve({memory_mb})"
        self._process = subprocess.Popen(  # noqa: S603 (our own interpreter and module)
            [sys.executable, "-c", boot], stdin=subprocess.PIPE, stdout=subprocess.PIPE, close_fds=True
        )
        self._ready = False
        self._lowest_rss = 0
        self._rss = 0
        self.retiring = False
        """True when the process said it ends after its last reply."""

    @property
    def alive(self) -> bool:
        return self._process.poll() is None

    @property
    def reusable(self) -> bool:
        return self.alive and not self.bloated and not self.retiring

    @property
    def exit_code(self) -> int | None:
        return self._process.returncode

    @property
    def bloated(self) -> bool:
        """True when its memory grew by more than `RECYCLE_MB` since its leanest reply."""
        return self._rss - self._lowest_rss > RECYCLE_MB * MB

    def ask(self, request: tuple[object, ...], seconds: float | None) -> tuple[bool, object]:
        """Send a request, wait for its reply; _Timeout after `seconds`, _Died without reply."""
        stdin, stdout = self._pipes()
        if not self._ready:
            _wait(stdout, STARTUP_SECONDS)
            if read_message(stdout) != b"":
                raise _Died
            self._ready = True
        try:
            write_message(stdin, pickle.dumps(request, protocol=pickle.HIGHEST_PROTOCOL))
        except (BrokenPipeError, OSError):
            raise _Died from None
        if seconds is not None:
            _wait(stdout, seconds)
        reply = read_message(stdout)
        if reply is None:
            raise _Died
        ok, payload, rss, last = pickle.loads(reply)  # noqa: S301 (from our own worker)
        self._rss = rss
        self.retiring = last
        self._lowest_rss = min(self._lowest_rss or rss, rss)
        return ok, payload

    def kill(self) -> int | None:
        """Kill the process now; its exit code."""
        if self.alive:
            self._process.kill()
        code = self._process.wait()
        self._close_pipes()
        return code

    def close(self) -> None:
        """End the process by closing its input; kill it if it does not end soon."""
        self._close_pipes()
        try:
            self._process.wait(_CLOSE_SECONDS)
        except subprocess.TimeoutExpired:
            self.kill()

    def _pipes(self) -> tuple[IO[bytes], IO[bytes]]:
        stdin, stdout = self._process.stdin, self._process.stdout
        if stdin is None or stdout is None:
            raise _Died
        return stdin, stdout

    def _close_pipes(self) -> None:
        for pipe in (self._process.stdin, self._process.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()
