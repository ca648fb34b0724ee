"""Throw-away servers the tests start on loopback (`postgres`, `chroma_server`), and what
they share: scratch folders swept up after a killed run, and children that die with pytest.

Teardown stops the servers on success, failure and Ctrl-C (they run in their own session,
so the terminal's SIGINT reaches pytest alone and teardown runs in order). If pytest itself
is killed, the kernel signals the servers (`die_with_parent`) and the next run removes
their folders (`scratch_dir`).
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

_PR_SET_PDEATHSIG = 1


def scratch_dir(kind: str) -> Path:
    """A new temp folder `lore-<kind>-<pid>-…`, after removing those whose run is gone."""
    root = Path(tempfile.gettempdir())
    for stale in root.glob(f"lore-{kind}-*-*"):
        owner = stale.name.split("-")[2]
        if owner.isdigit() and not _alive(int(owner)):
            shutil.rmtree(stale, ignore_errors=True)
    return Path(tempfile.mkdtemp(prefix=f"lore-{kind}-{os.getpid()}-"))


def die_with_parent(sig: signal.Signals) -> Callable[[], None] | None:
    """A `preexec_fn` asking Linux to send the child `sig` when pytest dies; None elsewhere.

    It runs after Popen's user switch, which would otherwise clear the setting.
    """
    if not sys.platform.startswith("linux"):
        return None
    prctl = ctypes.CDLL(None, use_errno=True).prctl  # looked up before fork, only called after

    def arrange() -> None:
        prctl(_PR_SET_PDEATHSIG, int(sig))

    return arrange


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's live process
    return True
