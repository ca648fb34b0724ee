"""The dense search under document-level access: the nearest passages of the documents a
reader may read, never fewer because unreadable ones were nearer.

Chroma's metadata filters cost in proportion to what they match, not to what they leave
out: on 20,000 vectors an unfiltered search took 55 ms (p50), one filtered by a condition
every vector meets 431 ms, and one leaving out 334 documents with `$nin` 282 ms (a reader of
public documents only, in an index a third restricted, matches most vectors). So a search
for a reader who may not read everything first asks for `OVERFETCH` times its pool without
a filter and keeps the readable hits; only when those are fewer than the pool (and the
collection holds more than was asked for) does it search again with Chroma's `$nin` filter.
Either way the result is the pool's worth of nearest readable passages: the filtered
search is the fallback that guarantees it, the unfiltered one the shortcut that is usually
enough.

Which documents a reader may not read is one SQL query per (index content, reader), cached:
an index's `content_version` moves with every change of content or access.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from knowledge.indexing.ingest import collection_for
from storage.document_access import AccessFilter
from storage.records import IndexRef
from storage.repositories.documents import DocumentRepository
from storage.vectors import VectorHit, VectorStore

OVERFETCH = 2
"""How many times its pool a dense search asks for before leaving unreadable hits out."""
CACHED_READERS = 256  # readers (an access filter each) whose unreadable documents are remembered


class UnreadableDocuments:
    """The documents of an index a reader may not read, cached per index content."""

    def __init__(self, documents: DocumentRepository, size: int = CACHED_READERS) -> None:
        self._documents = documents
        self._size = size
        self._cache: OrderedDict[tuple[int, int, tuple[str, ...]], frozenset[int]] = OrderedDict()

    async def of(self, index: IndexRef, access: AccessFilter) -> frozenset[int]:
        key = (index.id, index.content_version, tuple(sorted(access.principals)))
        if key in self._cache:
            self._cache.move_to_end(key)
            return self._cache[key]
        found = frozenset(await asyncio.to_thread(self._documents.unreadable_in, [index.id], access))
        self._cache[key] = found
        if len(self._cache) > self._size:
            self._cache.popitem(last=False)
        return found


async def nearest_readable(
    vectors: VectorStore,
    index: IndexRef,
    vector: Sequence[float],
    pool: int,
    unreadable: frozenset[int],
    allowed: list[int] | None = None,
) -> list[VectorHit]:
    """The `pool` nearest passages of `index` whose documents are readable (and `allowed`,
    when a metadata filter chose documents: those are readable ones already)."""
    ref = collection_for(index)
    if allowed is not None:
        return await asyncio.to_thread(vectors.query, ref, vector, pool, {"document_id": {"$in": allowed}})
    if not unreadable:
        return await asyncio.to_thread(vectors.query, ref, vector, pool, None)
    wide = await asyncio.to_thread(vectors.query, ref, vector, pool * OVERFETCH, None)
    kept = [hit for hit in wide if hit.metadata.get("document_id") not in unreadable]
    if len(kept) >= pool or len(wide) < pool * OVERFETCH:  # enough, or every vector was seen
        return kept[:pool]
    return await asyncio.to_thread(vectors.query, ref, vector, pool, dense_filter(None, sorted(unreadable)))


def dense_filter(allowed: list[int] | None, unreadable: list[int]) -> dict[str, Any] | None:
    """Chroma's `where` for a dense search: only the `allowed` documents (a metadata filter
    chose them, readable ones only), or all but the `unreadable` ones, or no filter at all."""
    if allowed is not None:
        return {"document_id": {"$in": allowed}}
    if unreadable:
        return {"document_id": {"$nin": unreadable}}
    return None
