"""Extraction amplification (issue 12, finding 6): a small file that unpacks to a flood of
text, or takes minutes and gigabytes to parse, is refused with the limit it hit; documents
are read in worker processes that are stopped at a deadline and capped in memory."""

from __future__ import annotations

import contextlib
import io
import random
import time
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from knowledge.errors import ExtractionLimit
from knowledge.extraction.sandbox import DocumentReader, ExtractionLimits
from tests.knowledge.files import make_docx


def amplifying_docx(paragraphs: int, seed: int = 7) -> bytes:
    """A DOCX whose body holds `paragraphs` paragraphs of twelve random words (about 85
    characters each): under the zip-bomb ratios, but many times its size as text."""
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    vocabulary = ["".join(rng.choice(letters) for _ in range(rng.randint(3, 9))) for _ in range(5000)]
    body = "".join(
        f"<w:p><w:r><w:t>{' '.join(rng.choice(vocabulary) for _ in range(12))}</w:t></w:r></w:p>"
        for _ in range(paragraphs)
    )
    out = io.BytesIO()
    seed = io.BytesIO(make_docx([(None, "seed")]))
    with zipfile.ZipFile(seed) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for item in source.infolist():
            data = source.read(item)
            if item.filename == "word/document.xml":
                text = data.decode()
                at = text.index("<w:body>") + len("<w:body>")
                data = (text[:at] + body + text[at:]).encode()
            target.writestr(item, data)
    return out.getvalue()


def slow_html(divs: int = 25_000) -> bytes:
    """A page of many small blocks: the main-content extractor takes seconds over it."""
    block = b"<div><p>word and more words</p><span>x</span></div>"
    return b"<html><body>" + block * divs + b"</body></html>"


def children() -> set[int]:
    """This process's child processes."""
    found: set[int] = set()
    for task in Path("/proc/self/task").iterdir():
        with contextlib.suppress(FileNotFoundError):  # a thread that ended meanwhile
            found |= {int(pid) for pid in (task / "children").read_text().split()}
    return found


Readers = Callable[..., DocumentReader]


@pytest.fixture
def reader_of() -> Iterator[Readers]:
    readers: list[DocumentReader] = []

    def make(**limits: Any) -> DocumentReader:
        reader = DocumentReader(ExtractionLimits(**limits))
        readers.append(reader)
        return reader

    yield make
    for reader in readers:
        reader.close()


def test_a_docx_that_unpacks_to_too_much_text_is_refused_by_its_character_count(reader_of: Readers) -> None:
    docx = amplifying_docx(20_000)  # 0.9 MB that holds 1.7 M characters
    reader = reader_of(max_chars=500_000, seconds=120, memory_mb=2048)
    with pytest.raises(ExtractionLimit) as refused:
        reader.extract(docx, "minutes.docx")
    assert "1,688,388 characters" in refused.value.reason and "500,000" in refused.value.reason
    assert reader_of().extract(docx, "minutes.docx").text.count("\n\n") == 20_000  # uncapped: read


def test_a_document_that_needs_more_memory_than_its_cap_is_refused_as_such(reader_of: Readers) -> None:
    reader = reader_of(max_chars=10**9, seconds=120, memory_mb=64)
    with pytest.raises(ExtractionLimit) as refused:
        reader.extract(amplifying_docx(80_000), "huge.docx")
    assert "more than the 64 MB of memory" in refused.value.reason
    assert reader.extract(b"# Fine\n\nA small note after the big one.", "note.md").title == "Fine"


def test_a_page_that_takes_too_long_is_stopped_at_the_deadline(reader_of: Readers) -> None:
    reader = reader_of(seconds=2.0)
    reader.extract(b"<p>warm the worker up</p>", "warm.html")
    started = time.monotonic()
    with pytest.raises(ExtractionLimit, match="longer than 2 seconds"):
        reader.extract(slow_html(50_000), "slow.html")  # about 10 s on an idle machine
    assert time.monotonic() - started < 15
    assert reader.extract(b"<html><body><p>Next page, read as usual.</p></body></html>", "next.html").text


def test_workers_are_reused_and_stopped_on_close() -> None:
    before = children()
    reader = DocumentReader(ExtractionLimits(seconds=60, memory_mb=512))
    for number in range(5):
        assert reader.extract(f"note {number} with some words".encode(), f"n{number}.txt").text
    assert len(children() - before) == 1
    reader.close()
    assert children() == before


def test_without_limits_documents_are_read_in_this_process() -> None:
    before = children()
    assert DocumentReader().extract(b"plain words here", "a.txt").text == "plain words here"
    assert children() == before


def test_the_parsers_are_loaded_before_the_memory_cap(reader_of: Readers) -> None:
    """The parsers load lazily in Lore's own process, but a worker loads them all before it
    caps its memory: their 40 MB are not counted against the document that needs them."""
    reader = reader_of(seconds=60, memory_mb=24)
    assert reader.extract(b"# Warm\n\nThe worker starts with a note.", "warm.md").title == "Warm"
    page = b"<html><head><title>Deploys</title></head><body><p>Deploys go out on Tuesdays.</p></body></html>"
    assert "Tuesdays" in reader.extract(page, "deploys.html").text
    assert reader.extract(make_docx([(None, "Rollbacks take two minutes.")]), "r.docx").text
