"""`python -m bench.units`: CPU time to read the quotable units of the docs corpus at ingest.

Each document of `bench/data/docs-corpus` is chunked (not timed), then its units are read
once from the whole document and given to its chunks (`knowledge.indexing.units.read_units`),
as ingest does; the best of three runs, in CPU seconds (the machine may be shared).
"""

from __future__ import annotations

import time
from pathlib import Path

from knowledge.indexing.chunking import chunk_text
from knowledge.indexing.units import read_units

CORPUS = Path(__file__).parent / "data" / "docs-corpus"
RUNS = 3  # the best of a few runs: the machine may be shared


def main() -> None:
    files = sorted(p for p in CORPUS.rglob("*") if p.suffix in (".rst", ".md"))
    texts = [f.read_text(encoding="utf-8") for f in files]
    documents = [(text, chunk_text(text, title=f.name)) for f, text in zip(files, texts, strict=True)]
    best, found = float("inf"), 0
    for _ in range(RUNS):
        started = time.process_time()
        found = sum(len(units) for text, chunks in documents for units in read_units(chunks, text))
        best = min(best, time.process_time() - started)
    chunks = sum(len(c) for _, c in documents)
    print(f"{len(documents)} documents, {chunks} chunks, {found} units: {best:.2f} s CPU")


if __name__ == "__main__":
    main()
