"""The child side of `sandbox`: a process that reads documents one request at a time.

Started as `python -m knowledge.extraction.worker MEMORY_MB`. It imports the extractors, caps
its own address space at what it uses then plus MEMORY_MB (0: no cap), and serves requests
on stdin/stdout until stdin closes. A request is a pickled `(data, name, mime_type, max_bytes,
max_chars)`; the reply a pickled `(ok, Extracted or IngestError, resident bytes, last)`,
`last` being True when the process ends after it. An empty message says the process is
ready, before the first request. Each is
preceded by its length (8 bytes, big-endian). Anything the extractors print goes to stderr.

After a MemoryError the process replies and exits, since its heap may be in a poor state.
Parsers in C report a failed allocation as damage (lxml: "unknown error"), so a refusal as
damaged or empty while the peak resident memory climbed near the cap counts as the cap too.
"""

from __future__ import annotations

import logging
import os
import pickle
import resource
import sys
from typing import IO

from knowledge.errors import EmptyContent, ExtractionLimit, IngestError, UnreadableContent
from knowledge.extraction.core import extract, preload

MB = 1024 * 1024
HEADER = 8  # a message's length, as 8 bytes before it
NEAR_CAP = 0.6  # a failure after using this share of the memory cap may be the cap's: the worker retires


def memory_reason(memory_mb: int) -> str:
    return (
        f"reading it needs more than the {memory_mb:,} MB of memory I give one document "
        "(LORE_EXTRACT_MEMORY_MB); split it into smaller files"
    )


def serve(memory_mb: int) -> None:
    requests = os.fdopen(os.dup(0), "rb")
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # stray prints must not corrupt the replies
    logging.getLogger("pdfminer").setLevel(logging.ERROR)  # it warns about every odd font
    preload()
    if memory_mb:
        _cap_memory(memory_mb)
    near_cap = resident_bytes() + int(NEAR_CAP * memory_mb * MB)
    write_message(replies, b"")  # ready: the deadlines count from here, not from the imports
    while (request := read_message(requests)) is not None:
        data, name, mime_type, max_bytes, max_chars = pickle.loads(request)  # noqa: S301 (from our parent)
        reply: tuple[bool, object, int, bool]
        try:
            extracted = extract(data, name, mime_type=mime_type, max_bytes=max_bytes, max_chars=max_chars)
            reply = True, extracted, resident_bytes(), False
        except (UnreadableContent, EmptyContent) as exc:
            if memory_mb and _peak_resident() >= near_cap:
                _last_reply(replies, name, memory_mb)
                return
            reply = False, exc, resident_bytes(), False
        except IngestError as exc:
            reply = False, exc, resident_bytes(), False
        except MemoryError:
            del data
            _last_reply(replies, name, memory_mb)
            return
        del data
        write_message(replies, pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL))


def _last_reply(replies: IO[bytes], name: str, memory_mb: int) -> None:
    """Refuse for want of memory; the process ends after it (its heap may be in a poor state)."""
    write_message(replies, pickle.dumps((False, ExtractionLimit(name, memory_reason(memory_mb)), 0, True)))


def _peak_resident() -> int:
    """The most resident memory this process has had since it started this program, in
    bytes. `VmHWM` belongs to the current memory map, so it starts afresh at exec; the
    rusage peak (the fallback) also counts the parent's memory the child was forked with."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def read_message(stream: IO[bytes]) -> bytes | None:
    """One length-prefixed message; None at the end of the stream."""
    header = stream.read(HEADER)
    if len(header) < HEADER:
        return None
    size = int.from_bytes(header, "big")
    body = stream.read(size)
    return body if len(body) == size else None


def write_message(stream: IO[bytes], body: bytes) -> None:
    stream.write(len(body).to_bytes(HEADER, "big"))
    stream.write(body)
    stream.flush()


def resident_bytes() -> int:
    """This process's resident memory now (0 where /proc is missing)."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _cap_memory(memory_mb: int) -> None:
    """Cap the address space at what the process maps now plus `memory_mb` (no-op where the
    system has no such limit)."""
    try:
        with open("/proc/self/statm") as statm:
            mapped = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        mapped = 0
    limit = mapped + memory_mb * MB
    try:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ValueError, OSError):
        print("lore: could not cap the document reader's memory on this system", file=sys.stderr)


if __name__ == "__main__":
    serve(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
