"""Tables (CSV, TSV) as chunks: groups of whole rows, each with the table's header line.

A table's text is its header line and then one row a line, cells separated by
`CELL_SEPARATOR` (as the CSV extractor writes it). Its chunks are not cut from that text like
prose: each holds the header once and whole rows, so the header's words are paid for once a
chunk rather than once a cell, and a cap bounds what one table may cost to embed.
"""

from __future__ import annotations

from dataclasses import dataclass

from knowledge.backends.wordpieces import SPECIAL_TOKENS, count_by_words, truncate_word_pieces
from knowledge.extraction.formats import CELL_SEPARATOR
from knowledge.indexing.chunking import ChunkSpec, TextChunk, chunk_text, prefix

LABELED_COLUMNS = 12
"""Tables this narrow are embedded as 'column: value' rows, which embed better than bare
cells; wider ones would pay for their column names once a cell."""


@dataclass(frozen=True)
class TableChunks:
    """A table's chunks; `note` says how the cap on its chunks was kept, when it was hit."""

    chunks: list[TextChunk]
    note: str | None = None


def chunk_table(
    text: str, *, title: str = "", spec: ChunkSpec = ChunkSpec(), max_chunks: int = 1000
) -> TableChunks:
    """A table's chunks: groups of whole rows, each chunk's text the header line and then its
    rows. `text` is the header line followed by one row a line, cells separated by
    `CELL_SEPARATOR` (as the CSV extractor writes).

    What is embedded (`TextChunk.embedded`) is the rows with their column names ('name: Ada;
    desk: 4.12') when the table has at most `LABELED_COLUMNS` columns, else the header line
    (cut to half the window) and the rows; rows are grouped so that this fills the window.
    When that would make more than `max_chunks` chunks, rows are spread evenly over
    `max_chunks` chunks instead, each embedded by the first rows that fit, and `note` says
    so; every row is still in its chunk's text, so keyword search finds every cell.
    Raises ValueError for `max_chunks` < 1.
    """
    if max_chunks < 1:
        raise ValueError(f"max_chunks={max_chunks}: use 1 or more")
    header, _, body = text.partition("\n")
    rows = _rows(body, len(header) + 1)
    if not rows:
        return TableChunks(chunk_text(text, title=title, spec=spec))
    room = spec.max_tokens - SPECIAL_TOKENS - count_by_words(prefix(title))
    columns = header.split(CELL_SEPARATOR)
    if len(columns) <= LABELED_COLUMNS:
        shown_header, shown = "", [_labeled(columns, row) for _, row in rows]
    else:
        shown_header = (
            truncate_word_pieces(header, room // 2) if count_by_words(header) > room // 2 else header
        )
        shown = [row for _, row in rows]
        room -= count_by_words(shown_header)
    pieces = [count_by_words(row) for row in shown]
    groups = _row_groups(pieces, room)
    note = None
    if len(groups) > max_chunks:
        per = -(-len(rows) // max_chunks)
        groups = [range(start, min(start + per, len(rows))) for start in range(0, len(rows), per)]
        note = (
            f"the table has {len(rows):,} rows, more than {max_chunks:,} passages hold at full "
            f"detail (LORE_MAX_TABLE_CHUNKS), so each passage holds about {per:,} rows: searches by "
            "meaning see the first rows of each, searches by keyword see every row"
        )
    chunks = []
    for position, group in enumerate(groups):
        lines = [rows[index][1] for index in group]
        fits = shown_header == header and sum(pieces[index] for index in group) <= room
        embedded = None if fits else _fitting(shown_header, [shown[index] for index in group], room)
        chunk = "\n".join([header, *lines])
        chunks.append(TextChunk(position, "", chunk, None, embedded))  # the header, then its rows
    return TableChunks(chunks, note)


def _labeled(columns: list[str], row: str) -> str:
    """'column: value; …' for the row's non-empty cells."""
    cells = row.split(CELL_SEPARATOR)
    names = columns + [f"column {index}" for index in range(len(columns) + 1, len(cells) + 1)]
    return "; ".join(f"{name}: {cell}" for name, cell in zip(names, cells, strict=False) if cell)


def _rows(body: str, offset: int) -> list[tuple[int, str]]:
    """(offset in the document, line) for each non-blank line of `body`."""
    rows = []
    for line in body.split("\n"):
        if line.strip():
            rows.append((offset, line))
        offset += len(line) + 1
    return rows


def _row_groups(pieces: list[int], room: int) -> list[range]:
    """Consecutive rows whose word pieces (and a newline each) fit `room`; a row over it alone."""
    groups: list[range] = []
    start, used = 0, 0
    for index, count in enumerate(pieces):
        if index > start and used + count > room:
            groups.append(range(start, index))
            start, used = index, 0
        used += count
    groups.append(range(start, len(pieces)))
    return groups


def _fitting(header: str, lines: list[str], room: int) -> str:
    """The header (if any) and as many of `lines` as fit `room` word pieces (the first one cut
    if it alone is over)."""
    kept: list[str] = []
    used = 0
    for line in lines:
        count = count_by_words(line)
        if used + count > room:
            if not kept:
                kept.append(truncate_word_pieces(line, room))
            break
        kept.append(line)
        used += count
    return "\n".join([header, *kept] if header else kept)
