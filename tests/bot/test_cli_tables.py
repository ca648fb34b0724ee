"""The command line's tables (Rich): plain columns that read the same in a pipe."""

from __future__ import annotations

from bot.cli.tables import table


def test_columns_line_up_numbers_right_and_nothing_trails_or_is_cut() -> None:
    url = "https://confluence.example.com/wiki/" + "x" * 200  # wider than any terminal
    out = table([">id", "name", "url"], [(7, "ops", url), (1234, "handbook", "-")])
    assert out.split("\n") == [
        "  id  name      url",
        f"   7  ops       {url}",
        "1234  handbook  -",
    ]


def test_a_table_without_header_can_be_indented() -> None:
    assert table(["", ""], [("OK", "slack"), ("FAIL", "chroma")], header=False, indent=2) == (
        "  OK    slack\n  FAIL  chroma"
    )


def test_cell_text_is_shown_as_written_not_as_rich_markup() -> None:
    assert table(["name"], [("[bold]x[/bold] :smile:",)], header=False) == "[bold]x[/bold] :smile:"
