"""Adding documents to an index: extract, chunk, embed, store; idempotent and crash-safe.

The order keeps SQL rows and vectors consistent: the document and its chunks are written
as `pending` (never searched), then its vectors, then it is marked `ready` while the
version it replaces is marked `deleting`; the old vectors and rows go last. Any failure
removes what was written; `repair()` finishes what a killed process left half done.
"""

from __future__ import annotations

import asyncio
import enum
import hashlib
import logging
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass, field

from knowledge.chunking import ChunkSpec, TextChunk, chunk_text
from knowledge.embedding import Embedder, Progress, Vectors, embed_batches
from knowledge.errors import EmbeddingMismatch, EmptyContent, IngestError, TooLarge
from knowledge.extraction import Extracted, extract
from knowledge.metadata import DocumentFacts
from storage.records import DocumentRef, IndexRef, NewChunk, NewDocument
from storage.repositories.documents import DocumentRepository
from storage.values import SourceKind
from storage.vectors import CollectionRef, VectorRecord, VectorStore

log = logging.getLogger(__name__)


class Outcome(enum.StrEnum):
    ADDED = "added"
    UPDATED = "updated"  # same source, new content: the old version was replaced
    UNCHANGED = "unchanged"  # the same content is already in memory


@dataclass(frozen=True)
class Source:
    """Something to add: its bytes, its name, and what the caller knows about it."""

    name: str
    data: bytes
    kind: SourceKind = SourceKind.FILE
    mime_type: str | None = None
    source_key: str | None = None
    """Identity for replacement: defaults to the URL, else the name."""
    facts: DocumentFacts = field(default_factory=DocumentFacts)
    source_config_id: int | None = None
    added_by: int | None = None
    """The user who added it (they may forget it again from a shared index)."""

    @property
    def key(self) -> str:
        return self.source_key or self.facts.url or self.name


@dataclass(frozen=True)
class IngestResult:
    outcome: Outcome
    document: DocumentRef
    chunks: int
    seconds_embedding: float = 0.0
    source: Source | None = None


@dataclass(frozen=True)
class _Prepared:
    """A source extracted and chunked, ready to be written."""

    source: Source
    new: NewDocument
    title: str
    """The title as chunks are prefixed with it: after the document's path, if it has one."""
    chunks: list[TextChunk]
    replaces: list[int]


def collection_for(index: IndexRef) -> CollectionRef:
    return CollectionRef(index.tenant_id, index.id, index.embedding_model, index.embedding_dimension)


def check_model(index: IndexRef, embedder: Embedder) -> None:
    """Refuse to mix vectors of two models in one index."""
    if index.embedding_model != embedder.model_id:
        raise EmbeddingMismatch(
            f"the {index.name} index was built with {index.embedding_model}, but Lore now "
            f"embeds with {embedder.model_id}; set EMBEDDING_MODEL={index.embedding_model} "
            "to use it, or create a new index and add its documents again"
        )


class Ingestor:
    def __init__(
        self,
        documents: DocumentRepository,
        vectors: VectorStore,
        embedder: Embedder,
        *,
        max_bytes: int,
        spec: ChunkSpec | None = None,
    ) -> None:
        self._documents = documents
        self._vectors = vectors
        self._embedder = embedder
        self._max_bytes = max_bytes
        self._spec = spec or ChunkSpec()

    async def add(self, index: IndexRef, source: Source, progress: Progress | None = None) -> IngestResult:
        """Add `source` to `index`; raises an `IngestError` saying why when it cannot."""
        check_model(index, self._embedder)
        prepared = await self._prepare(index, source)
        if isinstance(prepared, IngestResult):
            return prepared
        return (await self._store(index, [prepared], progress))[0]

    async def add_many(
        self,
        index: IndexRef,
        sources: AsyncIterator[Source] | Iterable[Source],
        on_result: Callable[[Source, IngestResult | IngestError], None] | None = None,
        *,
        batch_chunks: int = 256,
    ) -> list[IngestResult | IngestError]:
        """Add many sources, embedding chunks of several documents per batch while the next
        documents are extracted and chunked. A source that fails is reported (its error in
        the results) and the others go on."""
        check_model(index, self._embedder)
        queue: asyncio.Queue[tuple[Source, _Prepared | IngestResult | IngestError] | None]
        queue = asyncio.Queue(maxsize=64)
        producer = asyncio.create_task(self._produce(index, sources, queue))
        results: list[IngestResult | IngestError] = []
        batch: list[_Prepared] = []
        try:
            while (item := await queue.get()) is not None:
                source, prepared = item
                if not isinstance(prepared, _Prepared):
                    results.append(prepared)
                    if on_result is not None:
                        on_result(source, prepared)
                    continue
                batch.append(prepared)
                if sum(len(p.chunks) for p in batch) >= batch_chunks:
                    results.extend(await self._store_reporting(index, batch, on_result))
                    batch = []
            results.extend(await self._store_reporting(index, batch, on_result))
        finally:
            producer.cancel()
            await asyncio.gather(producer, return_exceptions=True)
        return results

    async def remove(self, index: IndexRef, document_ids: Sequence[int]) -> None:
        """Remove documents: out of search first, then their vectors, then their rows."""
        await asyncio.to_thread(self._documents.mark_deleting, document_ids)
        await self._purge(index, document_ids)

    async def repair(self, indexes_by_id: dict[int, IndexRef]) -> int:
        """Finish ingests and removals a crash left half done; returns documents cleaned."""
        leftovers = await asyncio.to_thread(self._documents.unfinished)
        for document in leftovers:
            index = indexes_by_id.get(document.index_id)
            if index is not None:
                await self._purge(index, [document.id])
        if leftovers:
            log.warning("repaired %d half-written or half-removed documents", len(leftovers))
        return len(leftovers)

    async def _produce(
        self,
        index: IndexRef,
        sources: AsyncIterator[Source] | Iterable[Source],
        queue: asyncio.Queue[tuple[Source, _Prepared | IngestResult | IngestError] | None],
    ) -> None:
        async def each() -> AsyncIterator[Source]:
            if isinstance(sources, AsyncIterator):
                async for source in sources:
                    yield source
            else:
                for source in sources:
                    yield source

        async for source in each():
            try:
                prepared: _Prepared | IngestResult | IngestError = await self._prepare(index, source)
            except IngestError as exc:
                prepared = exc
            await queue.put((source, prepared))
        await queue.put(None)

    async def _prepare(self, index: IndexRef, source: Source) -> _Prepared | IngestResult:
        if len(source.data) > self._max_bytes:
            raise TooLarge(source.name, f"it is {_mb(len(source.data))}; the limit is {_mb(self._max_bytes)}")
        extracted = await asyncio.to_thread(
            extract, source.data, source.name, mime_type=source.mime_type, max_bytes=self._max_bytes
        )
        digest = content_hash(extracted.text)
        existing = await asyncio.to_thread(self._documents.find_ready_by_hash, index.id, digest)
        if existing is not None:
            return IngestResult(Outcome.UNCHANGED, existing, existing.chunk_count, source=source)
        title = source.facts.title or extracted.title or source.name
        heading = " > ".join((*source.facts.path, title))
        chunks = await asyncio.to_thread(chunk_text, extracted.text, title=heading, spec=self._spec)
        if not chunks:
            raise EmptyContent(source.name, "it has no text in it")
        previous = await asyncio.to_thread(self._documents.find_by_source, index.id, source.key)
        new = _new_document(index, source, extracted, digest, title)
        return _Prepared(source, new, heading, chunks, [d.id for d in previous])

    async def _store_reporting(
        self,
        index: IndexRef,
        batch: list[_Prepared],
        on_result: Callable[[Source, IngestResult | IngestError], None] | None,
    ) -> list[IngestResult | IngestError]:
        if not batch:
            return []
        results: list[IngestResult | IngestError] = list(await self._store(index, batch, None))
        if on_result is not None:
            for prepared, result in zip(batch, results, strict=True):
                on_result(prepared.source, result)
        return results

    async def _store(
        self, index: IndexRef, batch: list[_Prepared], progress: Progress | None
    ) -> list[IngestResult]:
        """Write a batch of documents: pending rows, then vectors, then ready."""
        written: list[tuple[_Prepared, DocumentRef, list[int]]] = []
        try:
            for prepared in batch:
                rows = [NewChunk(c.position, c.prefix(prepared.title), c.text) for c in prepared.chunks]
                document, ids = await asyncio.to_thread(self._documents.create_pending, prepared.new, rows)
                written.append((prepared, document, ids))
            texts = [c.embedding_text(p.title) for p in batch for c in p.chunks]
            loop = asyncio.get_running_loop()
            started = loop.time()
            vectors = await embed_batches(self._embedder, texts, progress)
            elapsed = loop.time() - started
            records = _with_vectors(written, vectors)
            await asyncio.to_thread(self._vectors.add, collection_for(index), records)
            ready = [
                await asyncio.to_thread(self._documents.mark_ready, document.id, replaces=prepared.replaces)
                for prepared, document, _ in written
            ]
        except BaseException:
            await asyncio.shield(self._purge(index, [document.id for _, document, _ in written]))
            raise
        results = []
        for (prepared, _, _), document in zip(written, ready, strict=True):
            await self._purge(index, prepared.replaces)
            outcome = Outcome.UPDATED if prepared.replaces else Outcome.ADDED
            results.append(IngestResult(outcome, document, len(prepared.chunks), elapsed, prepared.source))
        return results

    async def _purge(self, index: IndexRef, document_ids: Sequence[int]) -> None:
        if not document_ids:
            return
        await asyncio.to_thread(self._vectors.delete_documents, collection_for(index), document_ids)
        await asyncio.to_thread(self._documents.delete, document_ids)


def _with_vectors(
    written: list[tuple[_Prepared, DocumentRef, list[int]]], vectors: Vectors
) -> list[VectorRecord]:
    records = []
    row = 0
    for prepared, document, ids in written:
        for chunk_id, chunk in zip(ids, prepared.chunks, strict=True):
            meta = {"document_id": document.id, "position": chunk.position}
            records.append(VectorRecord(chunk_id, vectors[row].tolist(), chunk.text, meta))
            row += 1
    return records


def content_hash(text: str) -> str:
    """Identity of a document's content: whitespace differences do not count."""
    return hashlib.sha256(" ".join(text.split()).encode("utf-8")).hexdigest()


def _new_document(
    index: IndexRef, source: Source, extracted: Extracted, digest: str, title: str
) -> NewDocument:
    facts = source.facts
    meta: dict[str, object] = {**extracted.metadata, **facts.context.as_metadata(), **facts.extra}
    if facts.path:
        meta["path"] = " > ".join(facts.path)
    return NewDocument(
        index_id=index.id,
        source_kind=source.kind,
        source_key=source.key,
        name=title if source.kind == SourceKind.URL else source.name,
        mime_type=extracted.mime_type,
        content_hash=digest,
        size=len(source.data),
        characters=len(extracted.text),
        url=facts.url,
        external_id=facts.external_id,
        author=facts.author or extracted.author,
        doc_timestamp=facts.timestamp or extracted.doc_timestamp,
        source_config_id=source.source_config_id,
        meta={"title": title, **meta},
        added_by=source.added_by,
    )


def _mb(size: int) -> str:
    return f"{size / (1024 * 1024):.0f} MB" if size >= 1024 * 1024 else f"{size / 1024:.0f} KB"
