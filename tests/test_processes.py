"""`tests.support.processes.run_in_group`, which `tests/test_bench.py` runs the bench with: a
command that times out is stopped with every process it started, and the bench's own
SIGTERM handling stops its children first (`bench.stop_children_on_term`). Tiny stand-in
commands, not the bench."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.processes import run_in_group

ROOT = Path(__file__).resolve().parents[1]
PARENT = """
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
open(sys.argv[1], "w").write(str(child.pid))
{body}
"""


def gone(pid: int) -> bool:
    """Ended: no such process, or a zombie waiting for whoever adopted it to reap it."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return True
    return state in ("Z", "X")


def started_child(pid_file: Path) -> int:
    deadline = time.monotonic() + 30
    while not pid_file.exists() or not pid_file.read_text():
        assert time.monotonic() < deadline, "the stand-in never started its child"
        time.sleep(0.05)
    return int(pid_file.read_text())


def test_a_command_that_times_out_leaves_no_child_running(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    script = PARENT.format(body="time.sleep(300)")
    started = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        run_in_group([sys.executable, "-c", script, str(pid_file)], timeout=3, grace=2)
    child = started_child(pid_file)
    assert gone(child), "the command's child outlived its timeout"
    assert time.monotonic() - started < 30


def test_a_command_that_ends_takes_what_it_left_running_with_it(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    done = run_in_group(
        [sys.executable, "-c", PARENT.format(body="print('done')"), str(pid_file)], timeout=60
    )
    assert done.returncode == 0 and done.stdout == "done\n"
    assert gone(started_child(pid_file))


def test_the_bench_stops_its_children_on_sigterm_before_it_ends(tmp_path: Path) -> None:
    """What the bench's sections do (a `finally` that terminates `lore run`) runs when the
    bench is sent SIGTERM: the group's SIGKILL is never needed."""
    pid_file, stopped = tmp_path / "child.pid", tmp_path / "stopped"
    body = f"""
from bench import stop_children_on_term
stop_children_on_term()
try:
    time.sleep(300)
finally:
    child.terminate()
    child.wait()
    open({str(stopped)!r}, "w").write("stopped")
"""
    with pytest.raises(subprocess.TimeoutExpired):
        run_in_group(
            [sys.executable, "-c", PARENT.format(body=body), str(pid_file)], cwd=ROOT, timeout=5, grace=20
        )
    assert stopped.read_text() == "stopped"
    assert gone(started_child(pid_file))
