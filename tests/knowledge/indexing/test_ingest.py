"""Ingest: idempotent, replacing, removing, consistent between SQL and vectors."""

from __future__ import annotations

import asyncio

import pytest

from knowledge.errors import EmbeddingMismatch, TooLarge, UnsupportedContent
from knowledge.indexing.ingest import Outcome, Source, collection_for
from knowledge.indexing.metadata import DocumentContext
from storage.values import Scope
from storage.vectors import CollectionRef, VectorRecord
from tests.knowledge.conftest import HANDBOOK, MB, RECIPES, Stack, md


async def test_add_then_again_is_already_in_memory(stack: Stack) -> None:
    index = stack.index()
    first = await stack.ingestor.add(index, md("handbook.md", HANDBOOK, author="ada"))
    assert first.outcome == Outcome.ADDED and first.chunks >= 1
    document = first.document
    assert document.name == "handbook.md" and document.author == "ada"
    assert document.mime_type == "text/markdown" and document.size == len(HANDBOOK.encode())
    assert document.characters > 0 and document.meta["title"] == "Team handbook"
    again = await stack.ingestor.add(index, md("copy-of-handbook.md", HANDBOOK + "\n\n"))
    assert again.outcome == Outcome.UNCHANGED and again.document.id == document.id
    assert stack.vectors.count(collection_for(index)) == first.chunks


async def test_same_source_new_content_replaces_the_old_chunks(stack: Stack) -> None:
    index = stack.index()
    old = await stack.ingestor.add(index, md("handbook.md", HANDBOOK))
    new = await stack.ingestor.add(index, md("handbook.md", HANDBOOK.replace("Tuesday", "Thursday")))
    assert new.outcome == Outcome.UPDATED and new.document.id != old.document.id
    assert stack.vectors.count(collection_for(index)) == new.chunks
    assert [d.id for d in stack.documents.list_ready(index.id)] == [new.document.id]
    assert stack.keyword.search([index.id], "Tuesday", 10) == []
    assert stack.keyword.search([index.id], "Thursday", 10)
    assert stack.documents.unfinished() == []


async def test_remove_deletes_rows_and_vectors(stack: Stack) -> None:
    index = stack.index()
    added = await stack.ingestor.add(index, md("handbook.md", HANDBOOK))
    await stack.ingestor.remove(index, [added.document.id])
    assert stack.vectors.count(collection_for(index)) == 0
    assert stack.documents.list_ready(index.id) == []
    assert stack.keyword.search([index.id], "pager", 10) == []

    assert stack.documents.held() == frozenset()  # nothing left to vouch for


async def test_replacing_and_repairing_let_go_of_every_lease(stack: Stack) -> None:
    """A process vouches only for rows it is writing now: a replaced document's and a
    repaired one's leases are not renewed for as long as the process lives."""
    from storage.leases import Writer
    from storage.records import NewChunk, NewDocument
    from storage.repositories.documents import DocumentRepository
    from storage.values import SourceKind

    index = stack.index()
    await stack.ingestor.add(index, md("handbook.md", HANDBOOK))
    await stack.ingestor.add(index, md("handbook.md", HANDBOOK + "\n\nOne more line."))
    killed = DocumentRepository(stack.db, writer=Writer("killed", lease_seconds=-1.0))
    new = NewDocument(index.id, SourceKind.FILE, "x.md", "x.md", "text/markdown", "h", 1, 1)
    killed.create_pending(new, [NewChunk(0, "x", "half written")])
    killed.close()
    assert await stack.ingestor.repair({index.id: index}) == 1
    assert stack.documents.held() == frozenset()


async def test_a_removal_the_vector_store_refused_is_left_for_a_repair(stack: Stack) -> None:
    """The Chroma server goes away during a removal: the document stays out of search and
    this process stops renewing its lease, so a repair (here or elsewhere) finishes it
    instead of the row staying half-removed for as long as this process lives."""
    from knowledge.indexing.ingest import Ingestor
    from storage.vectors import ChromaVectorStore, chroma_client
    from tests.support.chroma_server import serve_chroma

    index = stack.index()
    with serve_chroma() as (host, port):
        vectors = ChromaVectorStore(chroma_client(host=host, port=port))
        ingestor = Ingestor(stack.documents, vectors, stack.embedder, max_bytes=5 * MB)
        added = await ingestor.add(index, md("handbook.md", HANDBOOK))
    with pytest.raises(Exception):  # noqa: B017 - whatever the client raises when refused
        await ingestor.remove(index, [added.document.id])
    assert stack.documents.held() == frozenset()
    assert stack.documents.list_ready(index.id) == []
    assert [d.id for d in stack.documents.unfinished()] == [added.document.id]


async def test_context_fields_are_normalised(stack: Stack) -> None:
    index = stack.index()
    context = DocumentContext.from_mapping(
        {
            "context_type": ["Policy", " ", "policy"],
            "content_domain": "Engineering, Ops",
            "description": " d ",
        }
    )
    result = await stack.ingestor.add(index, md("h.md", HANDBOOK, context=context))
    meta = result.document.meta
    assert meta["context_type"] == ["policy"] and meta["content_domain"] == ["engineering", "ops"]
    assert meta["document_category"] == [] and meta["description"] == "d"


async def test_refusals_leave_nothing_behind(stack: Stack) -> None:
    index = stack.index()
    with pytest.raises(TooLarge, match="the limit is 5 MB"):
        await stack.ingestor.add(index, md("big.md", "x" * (6 * MB)))
    with pytest.raises(UnsupportedContent):
        await stack.ingestor.add(index, Source(name="tool.exe", data=b"MZ\x90\x00\x03\x00\x00\x00" * 64))
    assert stack.documents.unfinished() == [] and stack.vectors.count(collection_for(index)) == 0


async def test_a_failure_while_storing_vectors_leaves_no_half_document(stack: Stack) -> None:
    index = stack.index()
    # Chroma refuses vectors of another dimension than the collection already holds.
    stack.vectors.add(
        collection_for(index), [VectorRecord(999_999, [1.0, 0.0, 0.0], "x", {"document_id": 0})]
    )
    with pytest.raises(Exception, match=r"(?i)dimension"):
        await stack.ingestor.add(index, md("handbook.md", HANDBOOK))
    assert stack.documents.unfinished() == [] and stack.documents.list_ready(index.id) == []
    assert stack.keyword.search([index.id], "pager", 10) == []
    assert stack.vectors.count(collection_for(index)) == 1


async def test_an_index_of_another_model_is_refused_with_directions(stack: Stack) -> None:
    stack.index("x")  # makes the tenant
    index = stack.indexes.create(
        "T1", "old", Scope.SHARED, embedding_model="openai:text-embedding-3-small", embedding_dimension=1536
    )
    with pytest.raises(EmbeddingMismatch, match=r"set EMBEDDING_MODEL=.* to use it"):
        await stack.ingestor.add(index, md("handbook.md", HANDBOOK))


async def test_add_many_reports_each_source_and_goes_on_after_failures(stack: Stack) -> None:
    index = stack.index()
    sources = [md(f"doc{i}.md", f"# Doc {i}\n\n{RECIPES} Variation number {i}.") for i in range(12)]
    sources.insert(3, md("empty.md", "   \n\n "))
    seen: list[str] = []
    results = await stack.ingestor.add_many(index, sources, lambda s, r: seen.append(s.name), batch_chunks=8)
    assert len(results) == 13 and sorted(seen) == sorted(s.name for s in sources)
    errors = [r for r in results if isinstance(r, Exception)]
    assert len(errors) == 1 and "no text" in str(errors[0])
    assert len(stack.documents.list_ready(index.id)) == 12
    ready_chunks = sum(d.chunk_count for d in stack.documents.list_ready(index.id))
    assert stack.vectors.count(collection_for(index)) == ready_chunks


async def test_repair_finishes_what_a_crash_left(stack: Stack) -> None:
    from storage.leases import Writer
    from storage.records import NewChunk, NewDocument
    from storage.repositories.documents import DocumentRepository
    from storage.values import SourceKind

    index = stack.index()
    kept = await stack.ingestor.add(index, md("handbook.md", HANDBOOK))
    new = NewDocument(index.id, SourceKind.FILE, "x.md", "x.md", "text/markdown", "h", 1, 1)
    crashed = DocumentRepository(stack.db, writer=Writer("crashed", lease_seconds=0.2))
    pending, ids = crashed.create_pending(new, [NewChunk(0, "x", "half written")])
    crashed.close()  # it stops renewing its lease, as a killed process does
    ref = collection_for(index)
    stack.vectors.add(ref, [VectorRecord(ids[0], [1.0] + [0.0] * 383, "half", {"document_id": pending.id})])
    await asyncio.sleep(0.3)
    assert await stack.ingestor.repair({index.id: index}) == 1
    assert stack.documents.unfinished() == []
    assert stack.vectors.count(ref) == kept.chunks
    assert isinstance(ref, CollectionRef)


async def test_repair_leaves_what_a_live_process_is_writing(stack: Stack) -> None:
    """Another process starting (and repairing) while this one writes: its pending document
    is left alone while its lease is renewed, and becomes ready as if nothing happened."""
    from storage.leases import Writer
    from storage.records import NewChunk, NewDocument
    from storage.repositories.documents import DocumentRepository
    from storage.values import SourceKind

    index = stack.index()
    writer = DocumentRepository(stack.db, writer=Writer("busy", lease_seconds=0.4))
    new = NewDocument(index.id, SourceKind.FILE, "x.md", "x.md", "text/markdown", "h", 1, 1)
    pending, _ = writer.create_pending(new, [NewChunk(0, "x", "being written")])
    await asyncio.sleep(1.0)  # two and a half leases: only renewals keep it
    assert await stack.ingestor.repair({index.id: index}) == 0
    assert writer.mark_ready(pending.id).status == "ready"
    assert writer.held() == frozenset()


async def test_a_writer_back_after_its_lease_expired_finds_its_document_gone(stack: Stack) -> None:
    from storage.leases import Writer
    from storage.records import LeaseLost, NewChunk, NewDocument
    from storage.repositories.documents import DocumentRepository
    from storage.values import SourceKind

    index = stack.index()
    paused = DocumentRepository(stack.db, writer=Writer("paused", lease_seconds=0.2))
    new = NewDocument(index.id, SourceKind.FILE, "x.md", "x.md", "text/markdown", "h", 1, 1)
    pending, _ = paused.create_pending(new, [NewChunk(0, "x", "half written")])
    paused.close()  # paused: no renewals
    await asyncio.sleep(0.3)
    assert await stack.ingestor.repair({index.id: index}) == 1
    with pytest.raises(LeaseLost):  # it must not report the document stored
        paused.mark_ready(pending.id)
    assert stack.documents.list_ready(index.id) == []
