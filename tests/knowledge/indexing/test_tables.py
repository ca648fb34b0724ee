"""Tables (CSV, TSV) as groups of rows with the header once a chunk, at a bounded cost
(issue 16, item 5)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from knowledge.extraction import extract
from knowledge.indexing.chunking import ChunkSpec, count_word_pieces
from knowledge.indexing.ingest import Ingestor, IngestResult, Source
from knowledge.indexing.tables import chunk_table
from tests.knowledge.conftest import MB, Stack

SPECTRUM = Path(__file__).parents[2] / "data" / "real" / "csv-spectrum"


def wide_csv(columns: int = 80, size: int = 1_000_000, seed: int = 1) -> bytes:
    """About `size` bytes of a CSV with `columns` columns of numbers and words."""
    rng = random.Random(seed)
    rows = [",".join(f"metric_{i}_name" for i in range(columns))]
    total = len(rows[0])
    while total < size:
        row = ",".join(
            str(rng.randint(0, 99_999)) if j % 3 else rng.choice(("north", "south", "east", "west"))
            for j in range(columns)
        )
        rows.append(row)
        total += len(row) + 1
    return "\n".join(rows).encode()


@pytest.mark.parametrize("path", sorted(SPECTRUM.glob("*.csv")), ids=lambda p: p.stem)
def test_csv_spectrum_every_cell_is_in_the_text(path: Path) -> None:
    expected = json.loads(path.with_suffix(".json").read_text())
    text = extract(path.read_bytes(), path.name).text
    header, *rows = text.split("\n")
    assert header.split(" | ") == list(expected[0])
    assert len(rows) == len(expected)
    for line, record in zip(rows, expected, strict=True):
        cells = [" ".join(value.split()) for value in record.values()]
        while cells and not cells[-1]:  # trailing empty cells are left out
            cells.pop()
        assert line.split(" | ") == cells


def test_each_chunk_starts_with_the_header_and_every_row_is_in_one_chunk() -> None:
    header = "name | team | desk"
    rows = [f"Person {i} | team {i % 7} | desk {i}.{i % 13}" for i in range(400)]
    result = chunk_table("\n".join([header, *rows]), title="people.csv")
    assert result.note is None and 1 < len(result.chunks) < 40
    found: list[str] = []
    for chunk in result.chunks:
        first, *lines = chunk.text.split("\n")
        assert first == header
        found += lines
        assert count_word_pieces(chunk.embedding_text("people.csv")) + 2 <= ChunkSpec().max_tokens
    assert found == rows


def test_a_one_megabyte_80_column_csv_stays_within_the_cap_and_says_so() -> None:
    text = extract(wide_csv(), "wide.csv").text
    result = chunk_table(text, title="wide.csv", max_chunks=1000)
    assert len(result.chunks) <= 1000  # it was 16,104 chunks as 'header: value' lines
    assert result.note is not None and "LORE_MAX_TABLE_CHUNKS" in result.note
    for chunk in result.chunks:
        assert chunk.embedded is not None and chunk.embedded.startswith("metric_0_name")
        assert count_word_pieces(chunk.embedding_text("wide.csv")) + 2 <= ChunkSpec().max_tokens
    rows = [line for chunk in result.chunks for line in chunk.text.split("\n")[1:]]
    assert rows == text.split("\n")[1:]


async def test_a_capped_table_is_added_with_a_note_and_every_cell_found_by_keyword(stack: Stack) -> None:
    ingestor = Ingestor(stack.documents, stack.vectors, stack.embedder, max_bytes=5 * MB, max_table_chunks=20)
    index = stack.index()
    data = wide_csv(columns=12, size=60_000).replace(b"\nnorth,", b"\nzanzibar,", 1)
    last_row = data.rsplit(b"\n", 1)[1].decode().split(",")
    result = await ingestor.add(index, Source(name="metrics.csv", data=data))
    assert isinstance(result, IngestResult) and result.chunks <= 20
    assert result.notes and "LORE_MAX_TABLE_CHUNKS" in result.notes[0]
    assert stack.keyword.search([index.id], "zanzibar", 5), "a cell of an early row"
    assert stack.keyword.search([index.id], f"{last_row[1]} {last_row[2]}", 5), "cells of the last row"
