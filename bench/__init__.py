"""Lore's benchmarks (`make bench`): measured through the real entry points."""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import tempfile
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

Section = Callable[[Path, bool], Coroutine[Any, Any, dict[str, Any]]]


def stop_children_on_term() -> None:
    """SIGTERM and SIGHUP end the bench as Ctrl-C does, by an exception: the `finally` of each
    section that started `lore run`, `lore serve` or `lore worker` stops them, instead of the
    bench dying alone and leaving them running."""

    def stop(signum: int, _frame: object) -> None:
        raise SystemExit(128 + signum)

    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, stop)


def run_alone(name: str, section: Section, quick_help: str) -> None:
    """`python -m bench.<name> [--quick]`: one section in a scratch folder, its JSON printed."""
    stop_children_on_term()
    parser = argparse.ArgumentParser(prog=f"python -m bench.{name}")
    parser.add_argument("--quick", action="store_true", help=quick_help)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix=f"lore-bench-{name}-") as workdir:
        print(json.dumps(asyncio.run(section(Path(workdir), args.quick)), indent=2))
