"""The dense search under document-level access, on a real Chroma collection: the nearest
readable passages, from one unfiltered search when it holds enough of them, else from
Chroma's filter; never fewer because unreadable ones were nearer."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from knowledge.search.readable import OVERFETCH, nearest_readable
from storage.records import IndexRef
from storage.values import Scope
from storage.vectors import ChromaVectorStore, CollectionRef, VectorHit, VectorRecord, chroma_client

INDEX = IndexRef(7, "T1", "notes", Scope.SHARED, None, None, False, "m", 2, 0, datetime.now(UTC))


class Counted(ChromaVectorStore):
    """The real store, remembering the `where` of each query."""

    def __init__(self, path: Path) -> None:
        super().__init__(chroma_client(path=path))
        self.wheres: list[Mapping[str, Any] | None] = []

    def query(
        self, ref: CollectionRef, embedding: Sequence[float], k: int, where: Mapping[str, Any] | None = None
    ) -> list[VectorHit]:
        self.wheres.append(where)
        return super().query(ref, embedding, k, where)


def store_of(tmp_path: Path) -> Counted:
    """Forty passages of forty documents, document n nearer the query the smaller n is."""
    store = Counted(tmp_path / "chroma")
    records = [VectorRecord(n, [1.0, n / 10], f"passage {n}", {"document_id": n}) for n in range(40)]
    store.add(CollectionRef("T1", 7, "m", 2), records)
    return store


async def test_one_unfiltered_search_when_it_holds_enough_readable_passages(tmp_path: Path) -> None:
    store = store_of(tmp_path)
    hits = await nearest_readable(store, INDEX, [1.0, 0.0], 5, frozenset({1, 3}))
    assert [h.metadata["document_id"] for h in hits] == [0, 2, 4, 5, 6]
    assert store.wheres == [None]


async def test_chromas_filter_when_unreadable_passages_fill_the_nearest(tmp_path: Path) -> None:
    store = store_of(tmp_path)
    unreadable = frozenset(range(5 * OVERFETCH + 3))  # every passage the wide search sees, and more
    hits = await nearest_readable(store, INDEX, [1.0, 0.0], 5, unreadable)
    assert [h.metadata["document_id"] for h in hits] == [13, 14, 15, 16, 17]
    assert store.wheres[0] is None and store.wheres[1] == {"document_id": {"$nin": sorted(unreadable)}}
