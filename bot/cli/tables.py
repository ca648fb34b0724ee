"""The command line's tables, laid out by Rich: plain columns (no borders, no colour, nothing
cut to the terminal's width), so what a command prints reads the same in a pipe."""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence

from rich.console import Console
from rich.table import Table

RIGHT = ">"
"""Put before a column's name: its values are right-aligned (numbers)."""


def table(
    columns: Sequence[str], rows: Iterable[Sequence[object]], *, header: bool = True, indent: int = 0
) -> str:
    """`rows` under `columns` (a name starting with `RIGHT` is right-aligned), two spaces
    between columns, each line without trailing spaces and indented by `indent`."""
    grid = Table(box=None, show_header=header, show_edge=False, pad_edge=False, padding=(0, 2, 0, 0))
    for name in columns:
        right = name.startswith(RIGHT)
        grid.add_column(name.removeprefix(RIGHT), justify="right" if right else "left", no_wrap=True)
    for row in rows:
        grid.add_row(*(str(cell) for cell in row))
    out = io.StringIO()
    Console(file=out, width=10_000, color_system=None, highlight=False, emoji=False, markup=False).print(grid)
    return "\n".join(" " * indent + line.rstrip() for line in out.getvalue().rstrip("\n").split("\n"))
