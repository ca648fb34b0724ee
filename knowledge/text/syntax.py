"""What a line of a Markdown or reStructuredText page is: a fence, a directive, a list item,
a field, a doctest, a table row, a title and its underline. The patterns and the few helpers
that read lines with them, used by the reader of documents (`knowledge.text.quotes`), the
directives it reads (`knowledge.text.directives`) and the chunker.
"""

from __future__ import annotations

import re

FENCE = re.compile(r"^\s*(`{3,}|~{3,})")


CODE_DIRECTIVE = re.compile(
    r"^\s*\.\.\s+(?:code-block|code|sourcecode|literalinclude|code-cell|testcode|testoutput|doctest"
    r"|ipython|jupyter-execute|prompt|code-tab|(?:[\w-]+:)?example)::",
    re.I,
)
"""A directive whose body is code: Sphinx's own, those of its doctest, IPython, Jupyter,
prompt and tabs extensions, and an example's (Click's docs show theirs with `click:example`)."""


DIRECTIVE = re.compile(r"^\s*\.\.\s+[\w:-]+::")


OPTION_LINE = re.compile(r"^\s*:[\w -]+:(?:\s|$)")


UNDERLINE = re.compile(r"^\s*([=\-~^\"'#*+:._])\1{2,}\s*$")


BACKTICKS = re.compile(r"^`{3,}$")


ATX = re.compile(r"^\s{0,3}#{1,6}\s+\S")


ITEM = re.compile(r"^(\s*)(?:[-*+•]|\d{1,3}[.)]|#\.|\(\w\))\s+\S")


FIELD = re.compile(r"^(\s*):[^:\n]+:(?:\s|$)")


DOCTEST = re.compile(r"^\s*>>>(?:\s|$)")
"""A reST doctest block's first line: the block is code up to the next blank line."""


TABLE = re.compile(r"^\s*(?:\+[-=+]+\+|\|.*\||={2,}(?:\s+={2,})+)\s*$")


def split_lines(text: str) -> list[str]:
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def indentation(line: str) -> int:
    return len(line) - len(line.lstrip())


def is_heading(lines: list[str], i: int) -> bool:
    """An ATX heading, or a reST title: a short line underlined with one repeated symbol."""
    if ATX.match(lines[i]):
        return True
    if i + 1 >= len(lines) or not lines[i].strip() or UNDERLINE.match(lines[i]):
        return False
    under = lines[i + 1].strip()
    if BACKTICKS.match(under):  # reST allows backticks; three are a Markdown code fence
        return len(under) > 3 and len(under) >= len(lines[i].strip()) - 1
    return bool(UNDERLINE.match(lines[i + 1])) and len(under) >= len(lines[i].strip()) - 1


ATTRIBUTES = re.compile(r"\s*\{\s*[#.][^{}\n]*\}\s*$")
"""A Markdown heading's attribute list (`## Query params { #query-params }`): not its words."""


def heading_text(line: str) -> str:
    """A heading line's words, without its `#` marks and its attribute list (`{ #anchor }`)."""
    return ATTRIBUTES.sub("", line.strip().lstrip("#")).strip()


def fence_lines(lines: list[str], start: int) -> list[int]:
    """The code fence lines from line `start` on (not a reST title's underline of backticks)."""
    return [
        j for j in range(start, len(lines)) if FENCE.match(lines[j]) and not (j and is_heading(lines, j - 1))
    ]
