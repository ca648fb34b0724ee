"""`python -m bench.units_compare` matches the two readers' units by offset and text and names
each kind of disagreement."""

from __future__ import annotations

from pathlib import Path

from bench.units_compare import compare, flavour_of
from knowledge.text.flavours import Flavour
from knowledge.text.parsed import parsed_units
from knowledge.text.quotes import document_units

PAGE = """\
Title
=====

A first sentence. A second one.

.. comment that the line reader reads as text
   when it runs on

Example::

    $ flask run
"""


def test_units_are_matched_by_offset_and_text_and_disagreements_named() -> None:
    line, parsed = document_units(PAGE), parsed_units(PAGE, "rst")
    counts, examples = compare(line, parsed)
    matched = {u.text for u in line} & {u.text for u in parsed}
    assert counts["same"] == len(matched) == 4  # both sentences, "Example:" and the code block
    # a comment's second line, which the line reader takes for text and docutils does not
    assert examples["only line reader (sentence)"] == [("when it runs on", "-")]
    assert sum(counts.values()) >= len(line)
    for verdict, pairs in examples.items():
        assert verdict != "same" and len(pairs) == counts[verdict]
    assert compare(line, line)[0] == {"same": len(line)}


def test_flavour_is_told_by_name_and_by_myst_markup(tmp_path: Path) -> None:
    assert flavour_of(tmp_path / "a.rst", "Title\n=====\n") == Flavour.RST
    assert flavour_of(tmp_path / "a.md", "# Title\n\nText.\n") == Flavour.MARKDOWN
    assert flavour_of(tmp_path / "a.md", "```{note}\nText.\n```\n") == Flavour.MYST
