"""The `lore` command line: the typer app (`bot.cli.main`) and one module per command group.

This package's `main` is the `lore` console script. It imports the command line with the
garbage collector paused: importing builds some 170,000 objects that live as long as the
process, and collecting while they are built walks them again and again for nothing (a
quarter of `lore --help`'s time, a sixth of `lore ask`'s: `docs/answer-quality-details.md`,
"`lore ask` latency").
"""

from __future__ import annotations

import gc


def main() -> None:
    """Import the command line with collection paused, freeze what the import built out of
    the collector's sight (`gc.freeze`, as `bot.chat.runtime.settle` does for servers), then
    run the command with collection back on."""
    gc.disable()
    try:
        from bot.cli.main import main as run
    finally:
        gc.freeze()
        gc.enable()
    run()
