"""The `lore` command line: the typer app and one module per command group."""

from bot.cli.main import app, main

__all__ = ["app", "main"]
