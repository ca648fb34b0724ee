"""`lore ingest` over a folder holding a file of every kind issue 16 found trouble with:
it finishes, gives each file one outcome, refuses what it cannot read with the reason,
indexes nothing garbled, and exits 1 because some files failed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.knowledge.extraction.test_limits import amplifying_docx
from tests.knowledge.files import make_epub, make_odt, make_pdf, make_zip
from tests.knowledge.indexing.test_tables import wide_csv

LORE = str(Path(sys.executable).with_name("lore"))
REAL = Path(__file__).parent.parent / "data" / "real"
GARBLED_LINE = "".join(chr(ord(c) - 29) for c in "Computer Science Department New York University")

ADDED = {
    "jo.pdf": (REAL / "jo.pdf").read_bytes(),  # pypdf garbles it; pdfminer.six reads it
    "simple1.pdf": (REAL / "simple1.pdf").read_bytes(),  # no startxref: pypdf calls it damaged
    "text-box.docx": (REAL / "text-box.docx").read_bytes(),
    "strict-format.docx": (REAL / "strict-format.docx").read_bytes(),
    "footnotes.docx": (REAL / "footnotes.docx").read_bytes(),
    "cut.json": b'["\\uDFAA"]',  # a lone surrogate: it hung `lore ingest`
    "cafe.txt": b"Meet at the Caf\xe9 on Monday at nine.",
    "book.epub": make_epub(
        [("Chapter one", ["It was a bright cold day in April."])], title="Book", author="A"
    ),
    "notes.odt": make_odt([(1, "Notes"), (None, "The office closes at six on Fridays.")], title="Notes"),
    "metrics.csv": wide_csv(columns=40, size=120_000),
    "page.html": (
        b"<html><head><title>Hermitian matrix - Wikipedia</title></head><body><h1>Hermitian matrix</h1>"
        b"<p>A Hermitian matrix equals its own conjugate transpose: <math><mi>A</mi><mo>=</mo>"
        b"<msup><mi>A</mi><mo>*</mo></msup></math> for every such matrix in this article.</p></body></html>"
    ),
    os.fsdecode(b"r\xe9sum\xe9.txt"): b"A file name in Latin-1, not UTF-8.",
}
REFUSED = {
    "slides.pdf": (make_pdf([[GARBLED_LINE] * 12]), "placeholders or control codes"),
    "scan.xps": (make_zip({"FixedDocSeq.fdseq": b"<x/>"}), "XPS document"),
    "huge.docx": (amplifying_docx(5_000), "characters of text, more than the 200,000"),
    "broken.json": (b'{"a": 1', "not valid JSON (Expecting ',' delimiter"),
}


@pytest.mark.e2e
def test_a_folder_of_real_world_files_gets_one_outcome_each_and_a_failing_exit(tmp_path: Path) -> None:
    folder = tmp_path / "files"
    folder.mkdir()
    for name, data in [*ADDED.items(), *((n, d) for n, (d, _) in REFUSED.items())]:
        (folder / name).write_bytes(data)
    env = {
        "PATH": "/usr/bin:/bin",
        "LORE_HOME": str(tmp_path / "home"),
        "HOME": str(tmp_path / "home"),
        "LORE_MAX_DOCUMENT_CHARS": "200000",
        "LORE_MAX_TABLE_CHUNKS": "10",
        "LORE_EXTRACT_TIMEOUT_SECONDS": "60",
    }
    run = subprocess.run(
        [LORE, "ingest", str(folder), "--index", "team"], env=env, capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 1, run.stdout + run.stderr
    total = len(ADDED) + len(REFUSED)
    outcomes = [line for line in run.stdout.splitlines() if line.startswith(("  ✓", "  ✗", "  ="))]
    assert len(outcomes) == total, run.stdout
    assert f"{len(ADDED)} added or updated, 0 already in memory, {len(REFUSED)} failed" in run.stdout
    assert "Note on metrics.csv" in run.stdout and "LORE_MAX_TABLE_CHUNKS" in run.stdout
    failures = run.stderr.split("Not added:\n", 1)[1].splitlines()
    assert len(failures) == len(REFUSED), run.stderr
    for name, (_, reason) in REFUSED.items():
        assert any(line.startswith(f"  {name}: ") and reason in line for line in failures), (name, failures)

    listing = subprocess.run([LORE, "docs", "team"], env=env, capture_output=True, text=True, timeout=300)
    assert listing.returncode == 0, listing.stderr
    for name in ADDED:
        assert name.replace("\udce9", "\ufffd") in listing.stdout, (name, listing.stdout)
    for name in REFUSED:
        assert name not in listing.stdout
