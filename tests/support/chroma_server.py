"""A throw-away Chroma server on loopback (`chroma run` from the chromadb package)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support.ports import free_port

START_TIMEOUT = 60.0


@contextmanager
def chroma_server() -> Iterator[tuple[str, int]]:
    """Yields (host, port) of a running Chroma server; stops it and removes its data after."""
    chroma = Path(sys.executable).with_name("chroma")
    workdir = Path(tempfile.mkdtemp(prefix="lore-chroma-"))
    port = free_port()
    log = (workdir / "server.log").open("wb")
    process = subprocess.Popen(
        [str(chroma), "run", "--path", str(workdir / "data"), "--host", "127.0.0.1", "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
    )
    try:
        _wait_for_heartbeat(port, process, workdir / "server.log")
        yield "127.0.0.1", port
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()
        shutil.rmtree(workdir, ignore_errors=True)


def _wait_for_heartbeat(port: int, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    url = f"http://127.0.0.1:{port}/api/v2/heartbeat"
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(
                f"the Chroma server exited at start:\n{log.read_text(errors='replace')[-2000:]}"
            )
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(
        f"the Chroma server did not answer within 60 s:\n{log.read_text(errors='replace')[-2000:]}"
    )
