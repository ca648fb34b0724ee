"""Adding documents to an index: extract, chunk, embed, store; idempotent and crash-safe.

The order keeps SQL rows and vectors consistent: the document and its chunks are written
as `pending` (never searched), then its vectors, then it is marked `ready` while the
version it replaces is marked `deleting`; the old vectors and rows go last. Any failure
removes what was written; `repair()` finishes what a killed process left half done (only
rows whose writer's lease expired: never what another live process is writing).
"""

from __future__ import annotations

import asyncio
import enum
import hashlib
import logging
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass, field

from knowledge.backends.embedding import Embedder, Progress, Vectors, embed_batches
from knowledge.errors import (
    EmbeddingMismatch,
    EmptyContent,
    IngestError,
    IngestFailed,
    KnowledgeError,
    TooLarge,
)
from knowledge.extraction import Extracted
from knowledge.extraction.formats import TABLES
from knowledge.extraction.sandbox import DocumentReader, ExtractionLimits
from knowledge.extraction.types import without_surrogates
from knowledge.indexing.chunking import ChunkSpec, TextChunk, chunk_text
from knowledge.indexing.metadata import SECTION_URLS, DocumentFacts
from knowledge.indexing.tables import chunk_table
from knowledge.indexing.units import encoded, read_units
from knowledge.text.flavours import flavour_of
from storage.document_access import DocumentAccess
from storage.records import ChunkRecord, ClaimLost, DocumentRef, IndexRef, JobClaim, NewChunk, NewDocument
from storage.repositories.documents import DocumentRepository
from storage.values import SourceKind
from storage.vectors import CollectionRef, VectorRecord, VectorStore

log = logging.getLogger(__name__)

UNITS_BATCH_DOCUMENTS = 50
"""Documents whose old chunks' units are read per round trip: bounds memory, not speed."""


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
    claim: JobClaim | None = None
    """Added by that indexing job: its writes are refused (`ClaimLost`) once the job was
    taken over by another worker."""
    access: DocumentAccess = field(default_factory=DocumentAccess.public)
    """Who may read it as its source says (`storage.document_access`): public unless a
    connector that syncs permissions says otherwise."""

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
    notes: tuple[str, ...] = ()
    """What a user should know about how the document was added (a table over its cap)."""


@dataclass(frozen=True)
class _Prepared:
    """A source extracted and chunked, ready to be written."""

    source: Source
    new: NewDocument
    title: str
    """The title as chunks are prefixed with it: after the document's path, if it has one."""
    chunks: list[TextChunk]
    units: list[str]
    """Each chunk's quotable units, read once here (`knowledge.indexing.units`), encoded."""
    replaces: list[int]
    notes: tuple[str, ...] = ()


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
        reader: DocumentReader | None = None,
        max_table_chunks: int = 1000,
    ) -> None:
        """`reader` reads documents (default: in this process, within `max_bytes` and the
        default character cap); `max_table_chunks` caps the chunks of one table."""
        self._documents = documents
        self._vectors = vectors
        self._embedder = embedder
        self._max_bytes = max_bytes
        self._spec = spec or ChunkSpec()
        self._reader = reader or DocumentReader(ExtractionLimits(max_bytes=max_bytes))
        self._max_table_chunks = max_table_chunks

    def close(self) -> None:
        """Stop the document reader's worker processes."""
        self._reader.close()

    async def add(self, index: IndexRef, source: Source, progress: Progress | None = None) -> IngestResult:
        """Add `source` to `index`; raises an `IngestError` saying why when it cannot."""
        check_model(index, self._embedder)
        prepared = await self._prepare(index, source)
        if isinstance(prepared, IngestResult):
            return prepared
        return (await self._store(index, [prepared], progress))[0]

    async def attempt(
        self, index: IndexRef, source: Source, progress: Progress | None = None
    ) -> IngestResult | IngestError:
        """`add`, with the outcome returned rather than raised: the result, the `IngestError`
        refusing the document, or `IngestFailed` for an unexpected error (logged with its
        traceback). Raises only the engine's own `KnowledgeError`s (the embedder is down, the
        index was built with another model) and `ClaimLost` (the source's job was taken over),
        which no other document would escape either."""
        try:
            return await self.add(index, source, progress)
        except IngestError as exc:
            return exc
        except (KnowledgeError, ClaimLost):
            raise
        except Exception as exc:  # a bug or a library crash on this one document
            return _failed(source, exc)

    async def add_many(
        self,
        index: IndexRef,
        sources: AsyncIterator[Source] | Iterable[Source],
        on_result: Callable[[Source, IngestResult | IngestError], None] | None = None,
        *,
        batch_chunks: int = 256,
    ) -> list[IngestResult | IngestError]:
        """Add many sources, embedding chunks of several documents per batch while the next
        documents are extracted and chunked.

        Every source gets exactly one outcome, given to `on_result` as soon as it is known and
        returned in that order: its `IngestResult`, the `IngestError` refusing it, or
        `IngestFailed` when something unexpected broke on it (logged with its traceback); the
        other sources go on either way. Raises only what ends the whole batch: an exception
        from `sources` itself (after storing what was already prepared), the engine's own
        `KnowledgeError`s (see `attempt`), cancellation.
        """
        check_model(index, self._embedder)
        queue: asyncio.Queue[_Item | _End] = asyncio.Queue(maxsize=64)
        producer = asyncio.create_task(self._produce(index, sources, queue))
        results: list[IngestResult | IngestError] = []

        def report(source: Source, outcome: IngestResult | IngestError) -> None:
            results.append(outcome)
            if on_result is not None:
                on_result(source, outcome)

        batch: list[_Prepared] = []
        try:
            while not isinstance(item := await _next(queue, producer), _End):
                source, prepared = item
                if not isinstance(prepared, _Prepared):
                    report(source, prepared)
                    continue
                batch.append(prepared)
                if sum(len(p.chunks) for p in batch) >= batch_chunks:
                    await self._store_each(index, batch, report)
                    batch = []
            await self._store_each(index, batch, report)
            if item.error is not None:
                raise item.error
        finally:
            producer.cancel()
            await asyncio.gather(producer, return_exceptions=True)
        return results

    async def remove(
        self, index: IndexRef, document_ids: Sequence[int], *, claim: JobClaim | None = None
    ) -> None:
        """Remove documents: out of search first, then their vectors, then their rows
        (`claim`: for that indexing job, refused once it was taken over)."""
        await asyncio.to_thread(self._documents.mark_deleting, document_ids, claim=claim)
        await self._purge(index, document_ids)

    async def repair(self, indexes_by_id: dict[int, IndexRef], *, source_config_id: int | None = None) -> int:
        """Finish ingests and removals a crash left half done: documents whose writer's lease
        expired (only those of one attached source, with `source_config_id`: what a killed
        worker left of the job it ran); returns documents cleaned. At a process's start (no
        `source_config_id`), also read the units of chunks stored before they were recorded."""
        leftovers = await asyncio.to_thread(
            self._documents.take_over_abandoned, source_config_id=source_config_id
        )
        for document in leftovers:
            index = indexes_by_id.get(document.index_id)
            if index is not None:
                await self._purge(index, [document.id])
            else:  # not ours to finish here: left for a repair that knows its index
                self._documents.let_go([document.id])
        if leftovers:
            log.warning("repaired %d half-written or half-removed documents", len(leftovers))
        if source_config_id is None:  # a process's start, not a job's
            await asyncio.to_thread(self.read_old_units)
        return len(leftovers)

    def read_old_units(self) -> int:
        """Read and record the units of chunks written before ingest recorded them (revision
        0022), or recorded in an older form (`knowledge.indexing.units.FORM`: its migration
        cleared them), a few documents at a time, from the text their chunks rebuild; returns
        how many chunks got them. Once done, one query on an empty partial index finds nothing."""
        done = 0
        while chunks := self._documents.without_units(UNITS_BATCH_DOCUMENTS):
            by_document: dict[int, list[ChunkRecord]] = {}
            for chunk in chunks:
                by_document.setdefault(chunk.document_id, []).append(chunk)
            refs = self._documents.documents(list(by_document))
            flavours = {i: flavour_of(d.name, d.mime_type) for i, d in refs.items()}
            self._documents.record_units(
                [
                    (chunk.id, encoded(found))
                    for document_id, document in by_document.items()
                    for chunk, found in zip(
                        document, read_units(document, flavour=flavours.get(document_id)), strict=True
                    )
                ]
            )
            done += len(chunks)
        if done:
            log.info("read the quotable units of %d chunks stored before they were recorded", done)
        return done

    async def _produce(
        self,
        index: IndexRef,
        sources: AsyncIterator[Source] | Iterable[Source],
        queue: asyncio.Queue[_Item | _End],
    ) -> None:
        """Prepare each source in turn; always ends with `_End`, which carries the exception
        that stopped `sources`, if one did (a document's own failure is its outcome)."""
        error: Exception | None = None
        try:
            async for source in _each(sources):
                await queue.put((source, await self._prepare_safely(index, source)))
        except Exception as exc:
            error = exc
        await queue.put(_End(error))

    async def _prepare_safely(
        self, index: IndexRef, source: Source
    ) -> _Prepared | IngestResult | IngestError:
        try:
            return await self._prepare(index, source)
        except IngestError as exc:
            return exc
        except Exception as exc:  # a bug or a library crash on this one document
            return _failed(source, exc)

    async def _prepare(self, index: IndexRef, source: Source) -> _Prepared | IngestResult:
        if len(source.data) > self._max_bytes:
            raise TooLarge(source.name, f"it is {_mb(len(source.data))}; the limit is {_mb(self._max_bytes)}")
        extracted = await asyncio.to_thread(self._reader.extract, source.data, source.name, source.mime_type)
        digest = content_hash(extracted.text)
        # A restricted document is the same as no other: only its own earlier version counts.
        same_source = None if source.access.is_public else without_surrogates(source.key)
        existing = await asyncio.to_thread(
            self._documents.find_ready_by_hash, index.id, digest, source_key=same_source
        )
        if existing is not None:
            return IngestResult(Outcome.UNCHANGED, existing, existing.chunk_count, source=source)
        title = without_surrogates(source.facts.title or extracted.title or source.name)
        heading = " > ".join((*source.facts.path, title))
        chunks, notes = await asyncio.to_thread(self._chunks, extracted, heading)
        if not chunks:
            raise EmptyContent(source.name, "it has no text in it")
        previous = await asyncio.to_thread(
            self._documents.find_by_source, index.id, without_surrogates(source.key)
        )
        new = _new_document(index, source, extracted, digest, title)
        flavour = flavour_of(new.name, new.mime_type)
        read = await asyncio.to_thread(
            lambda: [encoded(u) for u in read_units(chunks, extracted.text, flavour)]
        )
        return _Prepared(source, new, heading, chunks, read, [d.id for d in previous], notes)

    def _chunks(self, extracted: Extracted, heading: str) -> tuple[list[TextChunk], tuple[str, ...]]:
        """Tables by groups of rows (with a note when their cap was hit), the rest as text."""
        if extracted.mime_type not in TABLES:
            return chunk_text(extracted.text, title=heading, spec=self._spec), ()
        table = chunk_table(extracted.text, title=heading, spec=self._spec, max_chunks=self._max_table_chunks)
        return table.chunks, (table.note,) if table.note else ()

    async def _store_each(
        self,
        index: IndexRef,
        batch: list[_Prepared],
        report: Callable[[Source, IngestResult | IngestError], None],
    ) -> None:
        """Store `batch` and report each document's result. When the batch fails for a reason
        that is not the engine's, its documents are stored one by one, so that only the one
        that breaks it fails (reported as `IngestFailed`)."""
        if not batch:
            return
        try:
            results = await self._store(index, batch, None)
        except (KnowledgeError, ClaimLost):
            raise
        except Exception as exc:
            if len(batch) == 1:
                report(batch[0].source, _failed(batch[0].source, exc))
                return
            log.warning(
                "storing %d documents together failed; storing them one by one", len(batch), exc_info=exc
            )
            for prepared in batch:
                await self._store_each(index, [prepared], report)
            return
        for prepared, result in zip(batch, results, strict=True):
            report(prepared.source, result)

    async def _store(
        self, index: IndexRef, batch: list[_Prepared], progress: Progress | None
    ) -> list[IngestResult]:
        """Write a batch of documents: pending rows, then vectors, then ready."""
        written: list[tuple[_Prepared, DocumentRef, list[int]]] = []
        try:
            for prepared in batch:
                rows = [
                    NewChunk(c.position, c.prefix(prepared.title), c.text, c.start, units)
                    for c, units in zip(prepared.chunks, prepared.units, strict=True)
                ]
                document, ids = await asyncio.to_thread(
                    self._documents.create_pending, prepared.new, rows, claim=prepared.source.claim
                )
                written.append((prepared, document, ids))
            texts = [c.embedding_text(p.title) for p in batch for c in p.chunks]
            loop = asyncio.get_running_loop()
            started = loop.time()
            vectors = await embed_batches(self._embedder, texts, progress)
            elapsed = loop.time() - started
            records = _with_vectors(written, vectors)
            await asyncio.to_thread(self._vectors.add, collection_for(index), records)
            ready = [
                await asyncio.to_thread(
                    self._documents.mark_ready,
                    document.id,
                    replaces=prepared.replaces,
                    claim=prepared.source.claim,
                )
                for prepared, document, _ in written
            ]
        except BaseException:
            await asyncio.shield(self._purge(index, [document.id for _, document, _ in written]))
            raise
        results = []
        for (prepared, _, _), document in zip(written, ready, strict=True):
            await self._purge(index, prepared.replaces)
            outcome = Outcome.UPDATED if prepared.replaces else Outcome.ADDED
            results.append(
                IngestResult(
                    outcome, document, len(prepared.chunks), elapsed, prepared.source, prepared.notes
                )
            )
        return results

    async def _purge(self, index: IndexRef, document_ids: Sequence[int]) -> None:
        """Delete documents' vectors, then their rows. If either fails (the vector store is
        away), the rows stay out of search and their leases are left to expire, for a repair."""
        if not document_ids:
            return
        try:
            await asyncio.to_thread(self._vectors.delete_documents, collection_for(index), document_ids)
            await asyncio.to_thread(self._documents.delete, document_ids)
        except BaseException:
            self._documents.let_go(document_ids)
            raise


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
    """Identity of a document's content: whitespace differences do not count. Total: a lone
    surrogate (which `extract` never lets through) is hashed as it is rather than failing."""
    return hashlib.sha256(" ".join(text.split()).encode("utf-8", "surrogatepass")).hexdigest()


def _failed(source: Source, exc: BaseException) -> IngestFailed:
    """The outcome of an unexpected error on one document, logged with its traceback."""
    name = without_surrogates(source.name)
    log.error("unexpected error while adding %s", name, exc_info=exc)
    failure = IngestFailed(name)
    failure.__cause__ = exc
    return failure


@dataclass(frozen=True)
class _End:
    """The producer is done; `error` is what stopped the sources, if anything did."""

    error: Exception | None = None


_Item = tuple[Source, "_Prepared | IngestResult | IngestError"]


async def _each(sources: AsyncIterator[Source] | Iterable[Source]) -> AsyncIterator[Source]:
    if isinstance(sources, AsyncIterator):
        async for source in sources:
            yield source
    else:
        for source in sources:
            yield source


async def _next(queue: asyncio.Queue[_Item | _End], producer: asyncio.Task[None]) -> _Item | _End:
    """The next item from the producer; `_End` with its exception if it died without saying
    so (it never should), so the consumer can never wait for ever."""
    if not queue.empty():
        return queue.get_nowait()
    getter = asyncio.ensure_future(queue.get())
    try:
        await asyncio.wait((getter, producer), return_when=asyncio.FIRST_COMPLETED)
    finally:
        if not getter.done():
            getter.cancel()
            await asyncio.gather(getter, return_exceptions=True)
    if getter.done() and not getter.cancelled():
        return getter.result()
    if not queue.empty():
        return queue.get_nowait()
    died = None if producer.cancelled() else producer.exception()
    return _End(died if isinstance(died, Exception) else RuntimeError("the document reader stopped"))


def _new_document(
    index: IndexRef, source: Source, extracted: Extracted, digest: str, title: str
) -> NewDocument:
    facts = source.facts
    meta: dict[str, object] = {**extracted.metadata, **facts.context.as_metadata(), **facts.extra}
    if facts.path:
        meta["path"] = " > ".join(facts.path)
    if facts.anchors:
        meta[SECTION_URLS] = dict(facts.anchors)
    return NewDocument(
        index_id=index.id,
        source_kind=source.kind,
        source_key=without_surrogates(source.key),
        name=title if source.kind == SourceKind.URL else without_surrogates(source.name),
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
        access=source.access,
    )


def _mb(size: int) -> str:
    return f"{size / (1024 * 1024):.0f} MB" if size >= 1024 * 1024 else f"{size / 1024:.0f} KB"
