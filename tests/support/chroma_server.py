"""A throw-away Chroma server on loopback: `chroma run` from this environment's chromadb."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.support import die_with_parent, scratch_dir
from tests.support.ports import HOST, free_port

START_TIMEOUT = 60.0
STOP_TIMEOUT = 20.0
# Straight to loopback, whatever proxy the environment names.
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


@contextmanager
def serve_chroma() -> Iterator[tuple[str, int]]:
    """Run a server for the duration; yield its (host, port). Its data goes with it."""
    workdir = scratch_dir("chroma")
    log = workdir / "server.log"
    port = free_port()
    try:
        process = _start(workdir, port, log)
        try:
            _wait_for_heartbeat(port, process, log)
            yield HOST, port
        finally:
            _stop(process)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _start(workdir: Path, port: int, log: Path) -> subprocess.Popen[bytes]:
    chroma = Path(sys.executable).with_name("chroma")
    command = [str(chroma), "run", "--path", str(workdir / "data"), "--host", HOST, "--port", str(port)]
    with log.open("wb") as output:
        return subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            cwd=workdir,
            env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
            start_new_session=True,
            preexec_fn=die_with_parent(signal.SIGTERM),
        )


def _wait_for_heartbeat(port: int, process: subprocess.Popen[bytes], log: Path) -> None:
    url = f"http://{HOST}:{port}/api/v2/heartbeat"
    deadline = time.monotonic() + START_TIMEOUT
    while process.poll() is None and time.monotonic() < deadline:
        try:
            with _DIRECT.open(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.1)
    state = "exited" if process.poll() is not None else f"did not answer within {START_TIMEOUT:.0f} s"
    output = log.read_text(errors="replace")[-3000:]
    pytest.fail(f"The Chroma server on {HOST}:{port} {state}; its output:\n{output}", pytrace=False)


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
    try:
        process.wait(timeout=STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
