"""The numbers fitted on the docs-QA set, as data: the second stage's weights and
abstention's calibration, read from `knowledge/data/parameters.toml` (`Weights.fitted`,
`Calibration.fitted`).

The bench's fitting scripts write that file (`python -m bench.fit_ranking --write`,
`python -m bench.calibrate --write`); the engine reads it once, when it starts.
"""

from __future__ import annotations

import functools
import tomllib
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

PARAMETERS = Path(str(resources.files("knowledge") / "data" / "parameters.toml"))

Value = float | Sequence[float]


@functools.cache
def fitted(table: str) -> Mapping[str, Any]:
    """One table of the shipped file (`ranking`, `abstention`), read once per process."""
    return read(PARAMETERS)[table]


def read(path: Path) -> dict[str, dict[str, Any]]:
    data: dict[str, dict[str, Any]] = tomllib.loads(path.read_text(encoding="utf-8"))
    return data


def write(path: Path, table: str, values: Mapping[str, Value]) -> None:
    """`path` with the numbers of `table` replaced by `values`, everything else (the other
    table, the comments) kept. Each number is on a line of its own, as the file ships."""
    wanted, lines, current = dict(values), path.read_text(encoding="utf-8").split("\n"), ""
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith("[") and stripped.endswith("]"):
            current = stripped[1:-1]
        name = line.split("=", 1)[0].strip()
        if current == table and "=" in line and not stripped.startswith("#") and name in wanted:
            lines[i] = f"{name} = {_toml(wanted.pop(name))}"
    if wanted:
        raise ValueError(f"{path} has no line for {', '.join(sorted(wanted))} in [{table}]")
    path.write_text("\n".join(lines), encoding="utf-8")
    read(path)  # what was written reads back


def _toml(value: Value) -> str:
    if isinstance(value, Sequence):
        return "[" + ", ".join(repr(round(float(v), 3)) for v in value) + "]"
    return repr(round(float(value), 3))
