"""Each chunk's quotable units, read once at ingest and recorded on the chunk.

A passage's sentences, list items and code blocks (`knowledge.text.quotes`) are what the
second stage scores and the writers quote. They are read here, when the document is
chunked, with the passages before each chunk in its section (a chunk may begin inside a code
block or a sentence one of them opened), and stored beside the chunk's text as JSON, so a
question reads no markup: it decodes what ingest recorded.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Protocol

from knowledge.text.cuts import Before
from knowledge.text.quotes import Kind, Unit, units

__all__ = ["PRECEDING", "Passage", "decoded", "encoded", "read_units", "recorded", "section_before"]

PRECEDING = 2
"""How many passages before a chunk are read to tell whether it begins inside a code block
(a block may be longer than a passage)."""


class Passage(Protocol):
    """A chunk as cut (`TextChunk`) or as stored (`ChunkRecord`)."""

    @property
    def heading(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def start(self) -> int | None: ...


def section_before(chunks: Sequence[Passage], i: int) -> Before:
    """What comes before `chunks[i]` in its section: the `PRECEDING` chunks before it under
    the same heading, joined without what each repeats, and how much of them it repeats."""
    section: list[Passage] = []
    for back in range(1, PRECEDING + 1):
        if i - back < 0 or chunks[i - back].heading != chunks[i].heading:
            break
        section.insert(0, chunks[i - back])
    return Before.section([(c.text, c.start) for c in section], chunks[i].start)


def read_units(chunks: Sequence[Passage]) -> list[list[Unit]]:
    """The units of each of a document's chunks (all of them, in order), each read with the
    chunks before it in its section."""
    return [units(chunk.text, section_before(chunks, i)) for i, chunk in enumerate(chunks)]


def encoded(found: Sequence[Unit]) -> str:
    """Units as stored on their chunk: a JSON list of [text, kind, block, section, label,
    continues]."""
    return json.dumps(
        [[u.text, u.kind.value, u.block, u.section, u.label, u.continues] for u in found],
        ensure_ascii=False,
        separators=(",", ":"),
    )


def decoded(stored: str) -> list[Unit]:
    """Units as `encoded` stored them."""
    return [
        Unit(text, Kind(kind), block, section, label, continues)
        for text, kind, block, section, label, continues in json.loads(stored)
    ]


def recorded(stored: str | None, text: str) -> list[Unit]:
    """The units ingest recorded for a chunk (`stored`); for a chunk stored before they were
    (the repair at start reads them), those of its `text`, read alone."""
    return decoded(stored) if stored is not None else units(text)
