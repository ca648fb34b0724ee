"""Each chunk's quotable units, read once at ingest from the whole document and recorded on
the chunk.

A passage's sentences, list items and code blocks (`knowledge.text.quotes`) are what the
second stage scores and the writers quote. The document is read whole, once, when it is
chunked (`document_units`): each unit knows where its source lies in the document's text,
and a chunk's units are those that begin in its span [start, end), each stored whole, even
one that runs past the chunk's end (a quote may not stop mid-fact). A unit that begins
before a chunk and runs into it is stored on it too, as the piece the chunk holds, marked
`continues` (scored, not quoted on its own: the chunk it begins in holds it whole). They are
stored beside the chunk's text as JSON, so a question reads no markup: it decodes what
ingest recorded.
"""

from __future__ import annotations

import bisect
import json
import logging
import re
import textwrap
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Protocol

from knowledge.text.flavours import read_document
from knowledge.text.quotes import Kind, Unit, units
from knowledge.text.syntax import DOCTEST, FENCE, FIELD, indentation

__all__ = [
    "FORM", "PREFIX", "Passage", "current", "decoded", "encoded", "paragraphs", "read_units", "rebuilt", "recorded"
]  # fmt: skip

log = logging.getLogger(__name__)

FORM = 2
"""The form units are recorded in: 2 with document offsets, read from the whole document,
and their text as a reader sees it. A new form comes with a migration that clears the records
of older ones (0025 for this one), which the repair at start then reads again
(`Ingestor.read_old_units`): no start scans every chunk for its form."""
PREFIX = f'{{"form":{FORM},'
"""How a record of the current form begins."""


class Passage(Protocol):
    """A chunk as cut (`TextChunk`) or as stored (`ChunkRecord`)."""

    @property
    def heading(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def start(self) -> int | None: ...


def read_units(
    chunks: Sequence[Passage], text: str | None = None, flavour: str | None = None
) -> list[list[Unit]]:
    """The units of each of a document's chunks (all of them, in order), from the units of
    the document's `text` read once by the reader of its `flavour` (`flavours.flavour_of`);
    without `text` (chunks stored before their units were recorded), from the text the chunks'
    offsets rebuild, by the same reader. A chunk without an offset (a table's) is read alone."""
    document = text if text is not None else rebuilt(chunks)
    try:
        whole = read_document(document, flavour)
    except Exception:  # a bug of the reader on one page: its passages as paragraphs, not a failed ingest
        log.exception(
            "could not read the units of a document of %d characters: read as paragraphs", len(document)
        )
        whole = paragraphs(document)
    starts = [u.start or 0 for u in whole]
    return [_of(chunk, document, whole, starts) for chunk in chunks]


def paragraphs(document: str) -> list[Unit]:
    """A document's paragraphs (what blank lines part) as plain units, with their offsets."""
    return [
        Unit(" ".join(found.group().split()), Kind.SENTENCE, block, start=found.start(), end=found.end())
        for block, found in enumerate(_PARAGRAPH.finditer(document), 1)
    ]


_PARAGRAPH = re.compile(r"\S(?:.|\n(?![ \t]*\n))*")
"""Text up to a blank line."""


def _of(chunk: Passage, document: str, whole: list[Unit], starts: list[int]) -> list[Unit]:
    """`chunk`'s units among `whole` (the `document`'s, ordered by start)."""
    if chunk.start is None or document[chunk.start : chunk.start + len(chunk.text)] != chunk.text:
        return units(chunk.text)
    begin, end = chunk.start, chunk.start + len(chunk.text)
    first = bisect.bisect_left(starts, begin)
    own = whole[first : bisect.bisect_left(starts, end)]
    found = [u if u.titled is not None and u.titled >= begin else replace(u, section="") for u in own]
    pieces = [
        piece
        for u in whole[max(0, first - _BACK) : first]
        if u.end is not None and u.end > begin
        for piece in _piece(u, document, begin, end)
    ]
    return [*pieces, *found] or units(chunk.text)


_BACK = 64
"""How many units before a chunk are looked at for one that runs into it (a unit is at most
`MAX_UNIT_CHARS` long as quoted, a chunk's overlap a few dozen words)."""


def _piece(unit: Unit, document: str, begin: int, end: int) -> list[Unit]:
    """What the chunk [begin, end) holds of `unit`, which begins before it, marked `continues`
    (scored, not quoted on its own: the chunk before holds it whole): a code block's lines
    from the one the chunk begins in, made whole, without a closing fence; what the chunk
    holds of prose, read alone (lines of HTML tags alone are nothing: a piece is scored by
    what a reader sees), the first of its units a fragment."""
    assert unit.end is not None
    stop = min(unit.end, end)
    if unit.kind == Kind.CODE:  # from the start of a line: the first, indented as the others
        line = document.rfind("\n", 0, begin) + 1
        first = document.rfind("\n", 0, unit.start or 0) + 1
        lines = document[max(line, first) : stop].split("\n")
        if len(lines) > 1 and FENCE.match(lines[-1]) and not FENCE.sub("", lines[-1]).strip():
            lines.pop()
        code = textwrap.dedent("\n".join(lines)).strip("\n")
        return (
            [Unit(code, Kind.CODE, unit.block, "", unit.label, True, begin, unit.end)] if code.strip() else []
        )
    lines = document[begin:stop].split("\n")
    if document[begin - 1 : begin] not in ("", "\n") and _goes_on(lines):
        lines[0] = (
            " " * indentation(lines[1]) + lines[0].lstrip()
        )  # (a body's line, cut: indented as its body)
    found = units("\n".join(lines), titles=False)  # (as a reader of the chunk alone sees them)
    return [
        Unit(u.text, u.kind, unit.block, "", unit.label, k == 0, begin, unit.end) for k, u in enumerate(found)
    ]


def _goes_on(lines: list[str]) -> bool:
    """Whether a first line, cut from the middle of its line, goes on in the line after it,
    indented deeper (a directive's or an item's body): "…requests do" and "    not time out."
    are one sentence. A field or a doctest there is a block of its own."""
    return (
        len(lines) > 1
        and bool(lines[1].strip())
        and indentation(lines[1]) > indentation(lines[0])
        and not (FIELD.match(lines[1]) or DOCTEST.match(lines[1]))
    )


def rebuilt(chunks: Sequence[Passage]) -> str:
    """A document's text as its chunks hold it, each at its offset (what no chunk holds,
    headings and dropped passages, left blank)."""
    placed = [(c.start, c.text) for c in chunks if c.start is not None]
    size = max((start + len(text) for start, text in placed), default=0)
    text = [" "] * size
    for start, passage in placed:
        text[start : start + len(passage)] = passage
    return "".join(text)


def encoded(found: Sequence[Unit]) -> str:
    """Units as stored on their chunk: a JSON object of the form and a list of [text, kind,
    block, section, label, continues, start, end, rendered] (rendered: as a reader sees it,
    '' when that is its text)."""
    rows = json.dumps(
        [_row(u) for u in found],
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return f'{PREFIX}"units":{rows}}}'


def _row(unit: Unit) -> list[Any]:
    rendered = unit.rendered
    shown = rendered if rendered != unit.text else ""
    return [
        unit.text,
        unit.kind.value,
        unit.block,
        unit.section,
        unit.label,
        unit.continues,
        unit.start,
        unit.end,
        shown,
    ]


def decoded(stored: str) -> list[Unit]:
    """Units as `encoded` stored them (or as the form before it did: a bare list, without
    offsets)."""
    value: Any = json.loads(stored)
    rows = value["units"] if isinstance(value, dict) else value
    return [_unit(row) for row in rows]


def _unit(row: list[Any]) -> Unit:
    text, kind, block, section, label, continues, *rest = row
    start, end, shown = (*rest, None, None, None)[:3]  # (the form before: without them)
    display = None if shown is None else shown or text
    return Unit(text, Kind(kind), block, section, label, continues, start, end, display=display)


def current(stored: str | None) -> bool:
    """Whether units were recorded in the current form (not in an older one, nor not at all)."""
    return stored is not None and stored.startswith(PREFIX)


def recorded(stored: str | None, text: str) -> list[Unit]:
    """The units ingest recorded for a chunk (`stored`); for a chunk stored before they were
    (the repair at start reads them), those of its `text`, read alone."""
    return decoded(stored) if stored is not None else units(text)
