"""Lore's benchmarks (`make bench`): measured through the real entry points."""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

Section = Callable[[Path, bool], Coroutine[Any, Any, dict[str, Any]]]


def run_alone(name: str, section: Section, quick_help: str) -> None:
    """`python -m bench.<name> [--quick]`: one section in a scratch folder, its JSON printed."""
    parser = argparse.ArgumentParser(prog=f"python -m bench.{name}")
    parser.add_argument("--quick", action="store_true", help=quick_help)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix=f"lore-bench-{name}-") as workdir:
        print(json.dumps(asyncio.run(section(Path(workdir), args.quick)), indent=2))
