"""The README's reference tables are generated from the code; they must not drift from it."""

from __future__ import annotations

from bot.app.settings import Settings
from bot.chat.commands import DECLARATIONS
from bot.cli import docs


def test_the_readme_tables_are_fresh() -> None:
    current = docs.README.read_text()
    assert docs.render(current) == current, "README.md is stale: run `python -m bot.cli.docs --write`"


def test_every_setting_command_and_cli_command_is_in_the_readme() -> None:
    readme = docs.README.read_text()
    for name, field in Settings.model_fields.items():
        assert f"`{name.upper()}`" in readme
        assert field.description, f"{name} needs a description for the README"
    for declaration in DECLARATIONS:
        assert f"`{declaration.examples[0]}`" in readme
    for command in ("lore ingest", "lore ask", "lore source attach", "lore jobs cancel", "lore doctor"):
        assert command in readme


def test_a_stale_table_is_noticed() -> None:
    current = docs.README.read_text()
    stale = current.replace("`LORE_HOME`", "`LORE_HOMEDIR`", 1)
    assert docs.render(stale) != stale
    assert docs.render(stale) == current
