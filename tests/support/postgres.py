"""A throw-away PostgreSQL server on loopback: initdb in a temp dir, a free port, no fsync.

Debian's binaries refuse to run as root, so as root the server runs as the `postgres`
user. Without PostgreSQL installed, tests that need it are skipped with the reason —
except under CI (`CI` set), where that is a failure: CI must run them.
"""

from __future__ import annotations

import glob
import os
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest

from tests.support.ports import free_port

START_TIMEOUT = 60.0


def postgres_bindir() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(Path(p).parent.name))
    if found:
        return Path(found[-1])
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"CI must run the PostgreSQL tests: {reason}")
    pytest.skip(reason)


def _as_postgres() -> dict[str, object]:
    """Popen arguments that drop root to the `postgres` user (the server refuses root).
    The server itself is then our child, so our signals reach it."""
    if os.geteuid() != 0:
        return {}
    return {"user": "postgres", "group": "postgres", "extra_groups": [], "cwd": "/"}


@contextmanager
def postgres_server() -> Iterator[str]:
    """Yields an admin URL (`postgresql+psycopg://lore@127.0.0.1:PORT/postgres`)."""
    bindir = postgres_bindir()
    if bindir is None:
        unavailable("PostgreSQL is not installed (apt-get install -y postgresql)")
        return
    workdir = Path(tempfile.mkdtemp(prefix="lore-pg-"))
    data = workdir / "data"
    if os.geteuid() == 0:
        shutil.chown(workdir, "postgres", "postgres")
    process: subprocess.Popen[bytes] | None = None
    try:
        init = subprocess.run(
            [str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", "lore", "--no-sync", "-E", "UTF8"],
            capture_output=True,
            timeout=120,
            **_as_postgres(),  # type: ignore[call-overload]
        )
        if init.returncode != 0:
            unavailable(f"initdb failed: {init.stderr.decode(errors='replace')[-500:]}")
        port = free_port()
        process = subprocess.Popen(  # type: ignore[call-overload]
            [
                str(bindir / "postgres"),
                "-D",
                str(data),
                "-k",
                str(workdir),
                "-h",
                "127.0.0.1",
                "-p",
                str(port),
                "-c",
                "fsync=off",
                "-c",
                "full_page_writes=off",
                "-c",
                "synchronous_commit=off",
                "-c",
                "max_connections=200",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            **_as_postgres(),
        )
        url = f"postgresql+psycopg://lore@127.0.0.1:{port}/postgres"
        _wait_until_ready(port, process)
        yield url
    finally:
        if process is not None:
            process.send_signal(signal.SIGINT)  # fast shutdown
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            if process.stderr:
                process.stderr.close()
        shutil.rmtree(workdir, ignore_errors=True)


def _wait_until_ready(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            output = process.stderr.read().decode(errors="replace") if process.stderr else ""
            unavailable(f"PostgreSQL exited at start: {output[-500:]}")
        try:
            with psycopg.connect(
                host="127.0.0.1", port=port, user="lore", dbname="postgres", connect_timeout=2
            ):
                return
        except psycopg.OperationalError:
            time.sleep(0.1)
    unavailable("PostgreSQL did not accept connections within 60 s")


def create_database(admin_url: str) -> str:
    """A fresh, empty database on the server; returns its URL."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    plain = admin_url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(plain, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    return admin_url.rsplit("/", 1)[0] + f"/{name}"
