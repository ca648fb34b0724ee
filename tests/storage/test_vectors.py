"""The Chroma vector store, embedded and against a Chroma server (`chroma_client` runs both)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from storage.vectors import (
    EF_SEARCH,
    SYNC_THRESHOLD,
    ChromaVectorStore,
    CollectionRef,
    PrecomputedEmbeddings,
    VectorRecord,
    VectorStoreError,
    chroma_client,
)

REF = CollectionRef("T1", 7, "local:test", 3)


def records(document_id: int, ids: range) -> list[VectorRecord]:
    return [
        VectorRecord(i, [1.0, i / 10, 0.0], f"text {i}", {"document_id": document_id, "kind": "md"})
        for i in ids
    ]


def test_add_query_delete_count_drop(chroma_client: object) -> None:
    store = ChromaVectorStore(chroma_client)  # type: ignore[arg-type]
    assert store.count(REF) == 0 and store.query(REF, [1, 0, 0], 5) == []
    store.add(REF, records(1, range(1, 4)) + records(2, range(4, 7)))
    assert store.count(REF) == 6
    hits = store.query(REF, [1.0, 0.2, 0.0], 3)
    assert hits[0].id == 2 and hits[0].similarity == pytest.approx(1.0, abs=1e-5)
    assert [h.similarity for h in hits] == sorted((h.similarity for h in hits), reverse=True)
    only_two = store.query(REF, [1.0, 0.2, 0.0], 10, where={"document_id": {"$in": [2]}})
    assert {h.id for h in only_two} == {4, 5, 6}
    store.delete_documents(REF, [1])
    store.delete_ids(REF, [6])
    assert store.count(REF) == 2
    store.drop(REF)
    assert store.count(REF) == 0
    store.drop(REF)  # dropping twice is harmless


def test_collections_are_separate_per_index_and_tenant(chroma_client: object) -> None:
    store = ChromaVectorStore(chroma_client)  # type: ignore[arg-type]
    other_tenant = CollectionRef("T2", 7, "local:test", 3)
    store.add(REF, records(1, range(1, 3)))
    assert store.count(other_tenant) == 0 and store.query(other_tenant, [1, 0, 0], 5) == []


def test_a_collection_built_by_another_model_is_refused(chroma_client: object) -> None:
    store = ChromaVectorStore(chroma_client)  # type: ignore[arg-type]
    store.add(REF, records(1, range(1, 3)))
    fresh = ChromaVectorStore(chroma_client)  # type: ignore[arg-type]
    with pytest.raises(VectorStoreError, match="holds vectors of local:test"):
        fresh.query(CollectionRef("T1", 7, "openai:text-embedding-3-small", 3), [1, 0, 0], 3)


def test_a_new_process_reopens_the_collection_with_lores_embedding_function(tmp_path: Path) -> None:
    store = ChromaVectorStore(chroma_client(path=tmp_path))
    store.add(REF, records(1, range(1, 4)))
    script = (
        "import sys, chromadb\n"
        "import storage.vectors  # registers Lore's embedding function\n"
        "from chromadb.config import Settings\n"
        "client = chromadb.PersistentClient(path=sys.argv[1], settings=Settings(anonymized_telemetry=False))\n"
        "collection = client.get_collection(sys.argv[2])\n"
        "ef = collection.configuration['embedding_function']\n"
        "print(ef.name(), ef.get_config()['model_id'], collection.count())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path), REF.name],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.split() == ["lore-precomputed", "local:test", "3"]


def test_searches_explore_wider_than_the_candidates_lore_asks_for(chroma_client: object) -> None:
    """Chroma's default `ef_search` (100) equals the dense side's 100 candidates and misses
    some of the true nearest; Lore's collections, new or made before, search `EF_SEARCH` wide."""
    client = chroma_client
    old = CollectionRef("T1", 8, "local:test", 3)
    made_before = client.create_collection(  # type: ignore[attr-defined]
        old.name,
        embedding_function=PrecomputedEmbeddings("local:test", 3),
        metadata={"hnsw:space": "cosine", "model_id": "local:test", "dimension": 3},
    )
    made_before.add(
        ids=["1"], embeddings=[[1.0, 0.0, 0.0]], documents=["old"], metadatas=[{"document_id": 1}]
    )
    assert made_before.configuration["hnsw"]["ef_search"] == 100, "Chroma's default"
    store = ChromaVectorStore(client)  # type: ignore[arg-type]
    store.add(REF, records(1, range(1, 4)))
    assert [h.id for h in store.query(old, [1.0, 0.0, 0.0], 5)] == [1]
    for ref in (REF, old):
        kept = client.get_collection(ref.name)  # type: ignore[attr-defined]
        assert kept.configuration["hnsw"]["ef_search"] == EF_SEARCH
        assert kept.configuration["hnsw"]["sync_threshold"] == SYNC_THRESHOLD  # its log purged at once


def test_a_collection_whose_search_chroma_will_not_widen_is_used_as_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A Chroma server's own database can be busy ("database is locked") when several
    workers write at once: widening is an optimisation, never a reason to fail an ingest."""
    from chromadb.api.models.Collection import Collection
    from chromadb.errors import InternalError

    client = chroma_client(path=tmp_path)
    old = CollectionRef("T1", 9, "local:test", 3)
    client.create_collection(
        old.name,
        embedding_function=PrecomputedEmbeddings("local:test", 3),  # type: ignore[arg-type]
        metadata={"hnsw:space": "cosine", "model_id": "local:test", "dimension": 3},
    )

    def busy(self: Collection, **_: object) -> None:
        raise InternalError("Database error: error returned from database: (code: 5) database is locked")

    monkeypatch.setattr(Collection, "modify", busy)
    store = ChromaVectorStore(client)
    store.add(old, records(1, range(1, 3)))
    assert [h.id for h in store.query(old, [1.0, 0.1, 0.0], 1)] == [1]
    assert "could not configure collection lore-T1-9" in caplog.text


def test_a_tenants_collections_are_dropped_by_name_and_no_other(chroma_client: object) -> None:
    store = ChromaVectorStore(chroma_client)  # type: ignore[arg-type]
    refs = [CollectionRef("T1", 7, "local:test", 3), CollectionRef("T1", 8, "local:test", 3)]
    others = [CollectionRef("T12", 7, "local:test", 3), CollectionRef("T2", 1, "local:test", 3)]
    for ref in refs + others:
        store.add(ref, records(1, range(1, 3)))
    assert sorted(store.drop_tenant("T1")) == sorted(ref.name for ref in refs)
    assert [store.count(ref) for ref in refs + others] == [0, 0, 2, 2]


def test_compacting_an_embedded_store_leaves_no_text_of_dropped_collections(tmp_path: Path) -> None:
    folder = tmp_path / "chroma"
    store = ChromaVectorStore(chroma_client(path=folder), folder=folder)
    gone, kept = CollectionRef("T2", 1, "local:test", 3), CollectionRef("T1", 1, "local:test", 3)
    store.add(
        gone, [VectorRecord(i, [1.0, i, 0.0], f"zebrafinch {i}", {"document_id": 1}) for i in range(60)]
    )
    store.add(
        kept, [VectorRecord(i, [1.0, i, 0.0], f"kingfisher {i}", {"document_id": 1}) for i in range(60)]
    )
    store.drop_tenant("T2")
    folders = {p.name for p in folder.iterdir() if p.is_dir()}

    store.compact()

    holding = [p for p in folder.rglob("*") if p.is_file() and b"zebrafinch" in p.read_bytes()]
    assert holding == [] and store.count(kept) == 60
    assert any(b"kingfisher" in p.read_bytes() for p in folder.rglob("*") if p.is_file())
    assert len({p.name for p in folder.iterdir() if p.is_dir()}) < len(folders)  # the dropped one's segment
