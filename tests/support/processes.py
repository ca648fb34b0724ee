"""A command run in a process group of its own, so that a timeout (or a failing test) ends it
with everything it started: `subprocess.run(timeout=…)` kills only the command, and its
children (the bench's `lore run` processes) would go on running, orphaned."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Sequence
from contextlib import suppress
from pathlib import Path

GRACE_SECONDS = 10.0
"""How long the group has to stop after SIGTERM (the bench stops its children) before SIGKILL."""


def run_in_group(
    args: Sequence[str], *, timeout: float, cwd: Path | None = None, grace: float = GRACE_SECONDS
) -> subprocess.CompletedProcess[str]:
    """Run `args` (text output captured) in a new session; on timeout, or any error while
    waiting, the whole group is stopped (SIGTERM, then SIGKILL after `grace`) and the error
    raised (`subprocess.TimeoutExpired`)."""
    process = subprocess.Popen(
        list(args), cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except BaseException:
        stop_group(process, grace)
        raise
    stop_group(process, grace)  # the command ended: anything it left behind goes too
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def stop_group(process: subprocess.Popen[str], grace: float = GRACE_SECONDS) -> None:
    """SIGTERM to every process of `process`'s group, SIGKILL to those left after `grace`;
    returns once none is left running."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with suppress(ProcessLookupError):  # nobody left in the group
            os.killpg(process.pid, sig)
        with suppress(subprocess.TimeoutExpired):
            process.communicate(timeout=grace)
        deadline = time.monotonic() + grace
        while running(process.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        if not running(process.pid):
            break
    process.wait()


def running(pgid: int) -> list[int]:
    """The processes of group `pgid` still running (a zombie is done: it only waits to be
    reaped by whoever adopted it)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with suppress(OSError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
                found.append(int(stat.parent.name))
    return found
