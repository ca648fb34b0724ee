"""Hybrid retrieval over several indexes: dense and keyword, fused by reciprocal rank.

Each enabled index is searched densely (its vectors) and all of them by keyword (one SQL
query); the two rankings are fused with reciprocal-rank fusion, so a hit's `score` is
comparable across indexes. Hits are then de-duplicated, capped per document and cut by
the similarity threshold. If the embedder fails, retrieval goes on by keyword alone and
says so in `notices`.
"""

from __future__ import annotations

import asyncio
import enum
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from cachetools import LRUCache

from knowledge.backends.embedding import Embedder, Vectors
from knowledge.errors import EmbedderUnavailable
from knowledge.indexing.ingest import check_model
from knowledge.search.filters import ContextFilter, Filter, document_fields, matches
from knowledge.search.notices import Notice, NoticeKind
from knowledge.search.readable import UnreadableDocuments, nearest_readable
from storage.document_access import PUBLIC_ONLY, AccessFilter
from storage.keyword import KeywordIndex
from storage.records import ChunkRecord, DocumentRef, IndexRef
from storage.repositories.documents import DocumentRepository
from storage.vectors import VectorHit, VectorStore

log = logging.getLogger(__name__)


class QueryType(enum.StrEnum):
    VECTOR = "vector"
    KEYWORD = "keyword"
    HYBRID = "hybrid"


@dataclass(frozen=True)
class RetrievalSpec:
    """How hits are found and cut. Defaults suit the local MiniLM model."""

    top_k: int = 8
    """Hits returned: what a context or the second stage reads."""
    candidates: int = 100
    """Hits each search (dense, keyword) returns for fusion: a deep pool is cheap."""
    rrf_k: int = 60
    """Reciprocal rank fusion's constant, as its authors set it (Cormack et al., 2009)."""
    dense_weight: float = 1.0
    keyword_weight: float = 1.0
    """The two searches count alike in fusion."""
    min_similarity: float = 0.1
    """Dense-only hits below this cosine similarity are noise and dropped."""
    max_per_document: int = 3
    """So that one long page does not take every place."""
    context_boost: float = 0.002
    """Added to the fused score per secondary context label a document matches."""


@dataclass(frozen=True)
class Hit:
    chunk_id: int
    index: IndexRef
    document: DocumentRef
    heading: str
    text: str
    position: int
    score: float
    similarity: float | None
    keyword_score: float | None
    start: int | None = None
    """Where the passage's text starts in its document's text (None: not recorded)."""
    units: str | None = None
    """Its quotable units as ingest recorded them (`knowledge.indexing.units`); None for a
    chunk stored before they were, until the repair at start reads them."""


@dataclass(frozen=True)
class Retrieval:
    hits: list[Hit]
    query: str
    searched: list[IndexRef]
    best_similarity: float | None
    notices: list[Notice] = field(default_factory=list)


class QueryEmbeddingCache:
    """Recent query embeddings by text (queries repeat: follow-ups, retries, benchmarks)."""

    def __init__(self, size: int = 1024) -> None:
        self._items: LRUCache[tuple[str, str], Vectors] = LRUCache(maxsize=size)

    async def embed(self, embedder: Embedder, text: str) -> Vectors:
        key = (embedder.model_id, text)
        if key not in self._items:
            vector: Vectors = (await embedder.embed([text]))[0]
            self._items[key] = vector
        return self._items[key]


class Retriever:
    def __init__(
        self,
        documents: DocumentRepository,
        vectors: VectorStore,
        keyword: KeywordIndex,
        embedder: Embedder,
        *,
        spec: RetrievalSpec | None = None,
    ) -> None:
        self._documents = documents
        self._vectors = vectors
        self._keyword = keyword
        self._embedder = embedder
        self._spec = spec or RetrievalSpec()
        self._query_cache = QueryEmbeddingCache()
        self._unreadable = UnreadableDocuments(documents)

    @property
    def spec(self) -> RetrievalSpec:
        return self._spec

    @property
    def embedder(self) -> Embedder:
        return self._embedder

    async def query_vector(self, query: str) -> Vectors:
        """The query's embedding, as the dense search uses it: from the cache of recent
        queries when it was searched for lately, so keeping it costs no second embedding."""
        return await self._query_cache.embed(self._embedder, query)

    async def term_frequencies(self, words: Sequence[str]) -> tuple[list[int], int]:
        """How many chunks hold each word, and how many chunks there are (for idf)."""
        return await asyncio.to_thread(self._keyword.frequencies, words)

    async def following(self, hit: Hit) -> ChunkRecord | None:
        """The chunk that follows `hit` in its document, as stored, with the units ingest
        recorded for it (a passage often ends by introducing what the next one lists)."""
        found = await asyncio.to_thread(
            self._documents.chunks_in, [(hit.document.id, hit.position + 1, hit.position + 1)]
        )
        return found[0] if found else None

    async def search(
        self,
        indexes: Sequence[IndexRef],
        query: str,
        *,
        top_k: int | None = None,
        candidates: int | None = None,
        query_type: QueryType = QueryType.HYBRID,
        where: Filter | None = None,
        context: Mapping[str, Any] | None = None,
        access: AccessFilter = PUBLIC_ONLY,
    ) -> Retrieval:
        """The best chunks for `query` across `indexes`, best first, of the documents `access`
        may read: both searches leave the others out themselves (keyword search inside its
        SQL; dense search by `knowledge.search.readable`: the nearest readable passages, never
        fewer), so unreadable hits never take the places of readable ones."""
        spec = self._spec
        top_k = top_k or spec.top_k
        pool = max(candidates or spec.candidates, top_k)
        for index in indexes:
            check_model(index, self._embedder)
        allowed, boosts = await self._allowed_documents(indexes, where, context, access)
        if allowed is not None and not allowed:
            return Retrieval([], query, list(indexes), None)
        notices: list[Notice] = []

        async def dense_hits() -> list[tuple[IndexRef, VectorHit]]:
            if query_type == QueryType.KEYWORD:
                return []
            try:
                return await self._dense(indexes, query, pool, allowed, access)
            except EmbedderUnavailable as exc:
                log.warning("dense retrieval failed, keyword only: %s", exc)
                notices.append(Notice(NoticeKind.KEYWORD_ONLY))
                return []

        async def keyword_hits() -> list[tuple[int, float]]:
            if query_type == QueryType.VECTOR:
                return []
            return await self._keywords(indexes, query, pool, allowed, access)

        # Side by side: the embedder and SQLite both leave the GIL while they work.
        dense, keyword = await asyncio.gather(dense_hits(), keyword_hits())
        hits = await self._fuse(indexes, dense, keyword, boosts, access)
        best = max((h.similarity for _, h in dense), default=None)
        return Retrieval(self._cut(hits, top_k), query, list(indexes), best, notices)

    async def _allowed_documents(
        self,
        indexes: Sequence[IndexRef],
        where: Filter | None,
        context: Mapping[str, Any] | None,
        access: AccessFilter,
    ) -> tuple[list[int] | None, dict[int, int]]:
        context_filter = ContextFilter.from_mapping(context or {})
        if not where and context_filter.empty:
            return None, {}
        documents = await asyncio.to_thread(self._documents.ready_in, [i.id for i in indexes], access)
        if where:
            documents = [d for d in documents if matches(document_fields(d), where)]
        if context_filter.empty:
            return [d.id for d in documents], {}
        boosts = context_filter.select(documents)
        return list(boosts), boosts

    async def _dense(
        self,
        indexes: Sequence[IndexRef],
        query: str,
        pool: int,
        allowed: list[int] | None,
        access: AccessFilter,
    ) -> list[tuple[IndexRef, VectorHit]]:
        vector = (await self._query_cache.embed(self._embedder, query)).tolist()

        async def one(index: IndexRef) -> list[VectorHit]:
            unreadable = frozenset() if allowed is not None else await self._unreadable.of(index, access)
            return await nearest_readable(self._vectors, index, vector, pool, unreadable, allowed)

        results = await asyncio.gather(*(one(i) for i in indexes))
        merged = [(index, hit) for index, hits in zip(indexes, results, strict=True) for hit in hits]
        merged.sort(key=lambda pair: pair[1].similarity, reverse=True)
        return merged[:pool]

    async def _keywords(
        self,
        indexes: Sequence[IndexRef],
        query: str,
        pool: int,
        allowed: list[int] | None,
        access: AccessFilter,
    ) -> list[tuple[int, float]]:
        unreadable: frozenset[int] | None = None
        if allowed is None and not access.public_only:  # the dense search's cached set, reused
            unreadable = frozenset().union(*[await self._unreadable.of(i, access) for i in indexes])
        hits = await asyncio.to_thread(
            self._keyword.search,
            [i.id for i in indexes],
            query,
            pool,
            document_ids=allowed,
            access=access,
            unreadable=unreadable,
        )
        return [(h.chunk_id, h.score) for h in hits]

    async def _fuse(
        self,
        indexes: Sequence[IndexRef],
        dense: list[tuple[IndexRef, VectorHit]],
        keyword: list[tuple[int, float]],
        boosts: dict[int, int],
        access: AccessFilter,
    ) -> list[Hit]:
        spec = self._spec
        scores: dict[int, float] = {}
        similarity = {hit.id: hit.similarity for _, hit in dense}
        keyword_score = dict(keyword)
        for rank, (_, hit) in enumerate(dense):
            scores[hit.id] = scores.get(hit.id, 0.0) + spec.dense_weight / (spec.rrf_k + rank + 1)
        for rank, (chunk_id, _) in enumerate(keyword):
            scores[chunk_id] = scores.get(chunk_id, 0.0) + spec.keyword_weight / (spec.rrf_k + rank + 1)
        # Read under the same access: a permission sync between the filter and here changes nothing.
        chunks = await asyncio.to_thread(self._documents.chunks, list(scores), access)
        documents = await asyncio.to_thread(
            self._documents.documents, list({c.document_id for c in chunks.values()})
        )
        by_id = {i.id: i for i in indexes}
        hits = [
            _hit(
                chunk,
                by_id[chunk.index_id],
                documents[chunk.document_id],
                scores[chunk_id] + spec.context_boost * boosts.get(chunk.document_id, 0),
                similarity.get(chunk_id),
                keyword_score.get(chunk_id),
            )
            for chunk_id, chunk in chunks.items()
            if chunk.document_id in documents and chunk.index_id in by_id
        ]
        hits.sort(key=lambda h: h.score, reverse=True)
        return hits

    def _cut(self, hits: list[Hit], top_k: int) -> list[Hit]:
        spec = self._spec
        kept: list[Hit] = []
        seen_text: set[str] = set()
        per_document: dict[int, int] = {}
        for hit in hits:
            if hit.keyword_score is None and (hit.similarity or 0.0) < spec.min_similarity:
                continue
            fingerprint = " ".join(hit.text.lower().split())
            if fingerprint in seen_text or per_document.get(hit.document.id, 0) >= spec.max_per_document:
                continue
            seen_text.add(fingerprint)
            per_document[hit.document.id] = per_document.get(hit.document.id, 0) + 1
            kept.append(hit)
            if len(kept) == top_k:
                break
        return kept


def _hit(
    chunk: ChunkRecord,
    index: IndexRef,
    document: DocumentRef,
    score: float,
    similarity: float | None,
    keyword_score: float | None,
) -> Hit:
    return Hit(
        chunk_id=chunk.id,
        index=index,
        document=document,
        heading=chunk.heading,
        text=chunk.text,
        position=chunk.position,
        score=score,
        similarity=similarity,
        keyword_score=keyword_score,
        start=chunk.start,
        units=chunk.units,
    )
