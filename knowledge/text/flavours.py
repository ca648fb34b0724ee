"""Which reader reads a document's quotable units, by its flavour of markup (issue 37).

`flavour_of(name, mime_type)` decides from what a document's record keeps, so ingest and the
repair that re-reads stored chunks pick the same reader: a `.rst`/`.rest` page is read by
docutils, Markdown (a `text/markdown` file, an HTML page kept as Markdown) by markdown-it-py;
everything else (PDF, Office, plain text, tables, a model's answer) by the line reader
(`knowledge.text.quotes.document_units`). `read_document` reads a whole text with the reader
its flavour names; the parsers are imported at their first use, so a process that never reads
markup never loads them (nor changes docutils' global registry of directives and roles).

MyST is kept as extraction stores it today: its directives rewritten as reST inside Markdown
(`knowledge.extraction.myst.as_rest`). Neither parser reads that mixture as written (docutils
takes Markdown's fences and headings for paragraphs, markdown-it takes the directives' bodies
for paragraphs), so a Markdown text that holds such a directive is read by the line reader,
which knows both, as before.
"""

from __future__ import annotations

import enum
import re
from pathlib import PurePosixPath

from knowledge.text.quotes import Unit, document_units


class Flavour(enum.StrEnum):
    """The markup a page is written in, each read by its parser (`knowledge.text.parsed`)."""

    MARKDOWN = "markdown"
    MYST = "myst"
    RST = "rst"


_RST_SUFFIXES = frozenset((".rst", ".rest"))
_RST_TYPES = frozenset(("text/x-rst", "text/prs.fallenstein.rst"))
_MARKDOWN_TYPES = frozenset(("text/markdown", "text/x-markdown", "text/html", "application/xhtml+xml"))
_REWRITTEN = re.compile(r"^[ \t]*\.\. [\w:.-]+::", re.MULTILINE)
"""A reST directive, as `as_rest` writes MyST's into Markdown."""


def flavour_of(name: str, mime_type: str) -> Flavour | None:
    """The markup a document is written in, from its name and type: "rst", "markdown", or
    None for the line reader."""
    suffix = PurePosixPath(name.replace("\\", "/")).suffix.lower()
    kind = mime_type.split(";", 1)[0].strip().lower()
    if suffix in _RST_SUFFIXES or kind in _RST_TYPES:
        return Flavour.RST
    if kind in _MARKDOWN_TYPES:
        return Flavour.MARKDOWN
    return None


def read_document(text: str, flavour: str | None) -> list[Unit]:
    """The units of a whole document's `text`, read by its flavour's reader (the line reader
    when it has none, or when the parser fails: `parsed_units` falls back and says so)."""
    if flavour is None or (flavour == Flavour.MARKDOWN and _REWRITTEN.search(text)):
        return document_units(text)
    from knowledge.text.parsed import parsed_units  # (docutils, markdown-it: at first use only)

    return parsed_units(text, flavour)
