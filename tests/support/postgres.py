"""A throw-away PostgreSQL server on loopback: initdb into a temp folder, a free port, no fsync.

The binaries refuse to run as root, so as root the server runs as the `postgres` user.
Without PostgreSQL installed, the tests that need it are skipped with the reason, except
under CI (`CI` set), where that is a failure: CI must run them. A server that is installed
but does not start is always a failure, with its log.
"""

from __future__ import annotations

import glob
import os
import shutil
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest
from psycopg import sql
from sqlalchemy.engine import URL, make_url

from tests.support import die_with_parent, scratch_dir
from tests.support.ports import HOST, free_port

SUPERUSER = "lore"
START_TIMEOUT = 60.0
STOP_TIMEOUT = 30.0
SETTINGS = ("fsync=off", "full_page_writes=off", "synchronous_commit=off", "max_connections=200")
INSTALL_HINT = "PostgreSQL not installed: apt-get install -y postgresql"


def postgres_bindir() -> Path | None:
    """The newest /usr/lib/postgresql/*/bin (Debian), else `pg_config --bindir`, else None."""
    debian = [Path(found) for found in glob.glob("/usr/lib/postgresql/*/bin")]
    debian = [path for path in debian if (path / "postgres").exists() and (path / "initdb").exists()]
    if debian:
        return max(debian, key=lambda path: _version(path.parent.name))
    pg_config = shutil.which("pg_config")
    if pg_config:
        found = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True, check=False)
        bindir = Path(found.stdout.strip())
        if found.returncode == 0 and (bindir / "postgres").exists():
            return bindir
    return None


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


@contextmanager
def serve_postgres() -> Iterator[str]:
    """Run a server for the duration; yield its admin URL (`postgresql+psycopg://lore@…/postgres`)."""
    bindir = postgres_bindir()
    if bindir is None:
        if in_ci():
            pytest.fail(f"CI must run the PostgreSQL tests. {INSTALL_HINT}", pytrace=False)
        pytest.skip(INSTALL_HINT)
    workdir = scratch_dir("pg")
    process: subprocess.Popen[bytes] | None = None
    try:
        user = _server_user(workdir)
        _initdb(bindir, workdir, user)
        port = free_port()
        process = _start(bindir, workdir, port, user)
        _wait_until_ready(port, process, workdir / "postgres.log")
        yield URL.create("postgresql+psycopg", SUPERUSER, None, HOST, port, "postgres").render_as_string()
    finally:
        if process is not None:
            _stop(process)
        shutil.rmtree(workdir, ignore_errors=True)


def create_database(admin_url: str) -> str:
    """Create a fresh, empty, uniquely named database on the server; return its URL."""
    url = make_url(admin_url).set(database=f"test_{uuid.uuid4().hex[:16]}")
    _admin(admin_url, sql.SQL("CREATE DATABASE {}").format(sql.Identifier(str(url.database))))
    return url.render_as_string(hide_password=False)


def drop_database(admin_url: str, url: str) -> None:
    """Drop a database made by `create_database`, closing any connection left to it."""
    name = sql.Identifier(str(make_url(url).database))
    _admin(admin_url, sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(name))


def _admin(admin_url: str, statement: sql.Composed) -> None:
    url = make_url(admin_url)
    with psycopg.connect(
        host=url.host, port=url.port, user=url.username, dbname=url.database, autocommit=True
    ) as connection:
        connection.execute(statement)


def _server_user(workdir: Path) -> str | None:
    """`postgres` when we are root (handing it the folder), else None: run as ourselves."""
    if os.geteuid() != 0:
        return None
    try:
        shutil.chown(workdir, "postgres", "postgres")
    except LookupError:
        pytest.fail("running as root, but there is no `postgres` user to run the server as", pytrace=False)
    return "postgres"


def _initdb(bindir: Path, workdir: Path, user: str | None) -> None:
    command = [str(bindir / "initdb"), "-D", str(workdir / "data"), "-U", SUPERUSER, "-A", "trust"]
    command += ["-E", "UTF8", "--locale=C", "--no-sync"]
    done = subprocess.run(command, capture_output=True, text=True, cwd=workdir, user=user, check=False)
    if done.returncode != 0:
        pytest.fail(f"initdb failed:\n{done.stdout}{done.stderr}", pytrace=False)


def _start(bindir: Path, workdir: Path, port: int, user: str | None) -> subprocess.Popen[bytes]:
    command = [str(bindir / "postgres"), "-D", str(workdir / "data"), "-h", HOST, "-p", str(port)]
    command += ["-k", str(workdir)]  # the Unix socket stays inside the temp folder
    for setting in SETTINGS:
        command += ["-c", setting]
    with (workdir / "postgres.log").open("wb") as log:
        return subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=workdir,
            user=user,
            start_new_session=True,
            preexec_fn=die_with_parent(signal.SIGINT),
        )


def _wait_until_ready(port: int, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while process.poll() is None and time.monotonic() < deadline:
        try:
            with psycopg.connect(host=HOST, port=port, user=SUPERUSER, dbname="postgres", connect_timeout=2):
                return
        except psycopg.OperationalError:
            time.sleep(0.05)
    state = (
        "exited" if process.poll() is not None else f"did not accept connections within {START_TIMEOUT:.0f} s"
    )
    pytest.fail(f"PostgreSQL {state}; its log:\n{_tail(log)}", pytrace=False)


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Fast shutdown (SIGINT): roll back open transactions, close clients, exit."""
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
    try:
        process.wait(timeout=STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _tail(log: Path) -> str:
    return log.read_text(errors="replace")[-3000:] if log.exists() else "(no log)"


def _version(name: str) -> tuple[int, ...]:
    return tuple(int(part) for part in name.split(".") if part.isdigit())
