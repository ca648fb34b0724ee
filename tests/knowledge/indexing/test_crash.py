"""A process killed mid-ingest leaves no searchable half-document, and the repair at the
next start removes its rows and vectors. The kill is a real SIGKILL of a real subprocess."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from knowledge.indexing.ingest import Outcome, collection_for
from tests.knowledge.conftest import Stack, md

ROOT = Path(__file__).resolve().parents[3]

WORKER = textwrap.dedent(
    """
    import asyncio, sys, time
    from pathlib import Path
    from knowledge.backends.embedding import LocalEmbedder
    from knowledge.indexing.ingest import Ingestor, Source
    from storage.db import open_database
    from storage.leases import Writer
    from storage.repositories.documents import DocumentRepository
    from storage.repositories.indexes import IndexRepository
    from storage.vectors import ChromaVectorStore, chroma_client

    home, index_id, stage = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    LEASE = 1.0  # seconds: the test waits this long for the killed process's lease to run out

    class Documents(DocumentRepository):
        def mark_ready(self, document_id, **_):
            print("VECTORS-WRITTEN", flush=True)  # the parent kills us here
            time.sleep(60)

    def progress(done, total):
        print("EMBEDDING", done, total, flush=True)
        if stage == "embedding":
            time.sleep(60)  # the parent kills us while embedding

    async def main():
        db = open_database(f"sqlite:///{home / 'lore.db'}")
        index = IndexRepository(db).get(index_id)
        vectors = ChromaVectorStore(chroma_client(path=home / "chroma"))
        documents = Documents(db, writer=Writer.of_this_process(lease_seconds=LEASE))
        ingestor = Ingestor(documents, vectors, LocalEmbedder(), max_bytes=50_000_000)
        text = "# Big\\n\\n" + "\\n\\n".join(f"Paragraph {i} about the pager rotation and deploys." for i in range(400))
        await ingestor.add(index, Source(name="big.md", data=text.encode(), mime_type="text/markdown"), progress)

    asyncio.run(main())
    """
)


def run_until(home: Path, index_id: int, stage: str, marker: str) -> None:
    worker = subprocess.Popen(
        [sys.executable, "-c", WORKER, str(home), str(index_id), stage],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert worker.stdout is not None
    try:
        for line in worker.stdout:
            if line.startswith(marker):
                break
        else:
            pytest.fail(f"the worker ended before {marker}: {worker.stderr.read() if worker.stderr else ''}")
        worker.send_signal(signal.SIGKILL)
    finally:
        worker.wait(timeout=30)
        worker.stdout.close()
        if worker.stderr:
            worker.stderr.close()
    assert worker.returncode == -signal.SIGKILL


@pytest.mark.parametrize(("stage", "marker"), [("embedding", "EMBEDDING"), ("vectors", "VECTORS-WRITTEN")])
async def test_killed_ingest_is_repaired(stack: Stack, tmp_path: Path, stage: str, marker: str) -> None:
    index = stack.index()
    run_until(tmp_path, index.id, stage, marker)
    ref = collection_for(index)
    left = stack.documents.unfinished()
    assert len(left) == 1 and left[0].name == "big.md"
    assert stack.documents.list_ready(index.id) == []
    assert stack.keyword.search([index.id], "pager rotation", 10) == []  # never searchable
    assert (await stack.retriever.search([index], "pager rotation")).hits == []
    if stage == "vectors":
        assert stack.vectors.count(ref) > 0  # written, but their document never became ready
    repaired = 0
    for _ in range(100):  # once the killed writer's lease (1 s) has run out
        repaired = await stack.ingestor.repair({index.id: index})
        if repaired:
            break
        await asyncio.sleep(0.1)
    assert repaired == 1
    assert stack.documents.unfinished() == [] and stack.vectors.count(ref) == 0
    again = await stack.ingestor.add(
        index, md("big.md", "# Big\n\nThe pager rotation is weekly and deploys are on Tuesday.")
    )
    assert again.outcome == Outcome.ADDED
