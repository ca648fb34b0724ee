"""Documents and their chunks, written in the order that keeps SQL and vectors consistent:
the document as `pending` with its chunks, then (by the caller) the vectors, then `ready`."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import and_, or_, update
from sqlmodel import Session, col, delete, select

from storage.db import Database
from storage.models import Chunk, Document, DocumentStatus
from storage.records import ChunkRecord, DocumentRef, NewChunk, NewDocument, NotFound
from storage.repositories._rows import document_ref
from storage.repositories.answers import forget_quotes
from storage.repositories.indexes import bump_content_version


class DocumentRepository:
    def __init__(self, db: Database) -> None:
        self._db = db

    def create_pending(self, new: NewDocument, chunks: Sequence[NewChunk]) -> tuple[DocumentRef, list[int]]:
        """Write the document as pending with its chunks; return it and the chunk ids
        (in `chunks` order), which are also the ids of their vectors."""
        with self._db.session() as session:
            row = Document(
                index_id=new.index_id,
                source_kind=new.source_kind,
                source_key=new.source_key,
                source_config_id=new.source_config_id,
                name=new.name,
                url=new.url,
                external_id=new.external_id,
                doc_timestamp=new.doc_timestamp,
                author=new.author,
                mime_type=new.mime_type,
                size=new.size,
                characters=new.characters,
                content_hash=new.content_hash,
                chunk_count=len(chunks),
                status=DocumentStatus.PENDING,
                meta=dict(new.meta),
                added_by=new.added_by,
            )
            session.add(row)
            session.flush()
            assert row.id is not None
            rows = [
                Chunk(
                    document_id=row.id,
                    index_id=new.index_id,
                    position=c.position,
                    heading=c.heading,
                    text=c.text,
                    start=c.start,
                )
                for c in chunks
            ]
            session.add_all(rows)
            session.flush()
            return document_ref(row), [r.id for r in rows if r.id is not None]

    def mark_ready(self, document_id: int, *, replaces: Sequence[int] = ()) -> DocumentRef:
        """Make the document searchable and, in the same transaction, take the documents it
        replaces out of search (`deleting`; the caller deletes their vectors, then `delete`)."""
        with self._db.session() as session:
            row = session.get(Document, document_id)
            if row is None:
                raise NotFound(f"document {document_id}")
            row.status = DocumentStatus.READY
            session.add(row)
            _set_status(session, replaces, DocumentStatus.DELETING)
            bump_content_version(session, row.index_id)
            return document_ref(row)

    def mark_deleting(self, document_ids: Sequence[int]) -> None:
        """Take documents out of search before their vectors are deleted."""
        if not document_ids:
            return
        with self._db.session() as session:
            _set_status(session, document_ids, DocumentStatus.DELETING)
            for index_id in _index_ids(session, document_ids):
                bump_content_version(session, index_id)

    def delete(self, document_ids: Sequence[int]) -> None:
        """Delete documents (removed, or replaced by a new version) and their chunks (the
        caller deletes their vectors first); the answers that quoted them forget those
        quotes (`forget_quotes`), so no text of theirs stays behind."""
        if not document_ids:
            return
        with self._db.session() as session:
            index_ids = _index_ids(session, document_ids)
            _delete_rows(session, document_ids)
            for index_id in index_ids:
                bump_content_version(session, index_id)
                forget_quotes(session, index_id=index_id, document_ids=document_ids)

    def update_meta(self, document_id: int, updates: dict[str, Any]) -> None:
        """Merge `updates` into a document's metadata (keys set to None are removed)."""
        with self._db.session() as session:
            row = session.get(Document, document_id)
            if row is None:
                return
            meta = {**row.meta, **updates}
            row.meta = {k: v for k, v in meta.items() if v is not None}
            session.add(row)

    def get(self, document_id: int) -> DocumentRef:
        with self._db.session() as session:
            row = session.get(Document, document_id)
            if row is None:
                raise NotFound(f"document {document_id}")
            return document_ref(row)

    def find_ready_by_hash(self, index_id: int, content_hash: str) -> DocumentRef | None:
        with self._db.session() as session:
            row = session.exec(
                select(Document).where(
                    Document.index_id == index_id,
                    Document.content_hash == content_hash,
                    Document.status == DocumentStatus.READY,
                )
            ).first()
            return document_ref(row) if row else None

    def find_by_source(self, index_id: int, source_key: str) -> list[DocumentRef]:
        """Ready documents of the index that came from `source_key` (a URL or file name)."""
        with self._db.session() as session:
            rows = session.exec(
                select(Document).where(
                    Document.index_id == index_id,
                    Document.source_key == source_key,
                    Document.status == DocumentStatus.READY,
                )
            ).all()
            return [document_ref(r) for r in rows]

    def list_ready(self, index_id: int, *, after_id: int | None = None, limit: int = 50) -> list[DocumentRef]:
        """Ready documents of the index, oldest first, `limit` at a time after `after_id`."""
        with self._db.session() as session:
            query = select(Document).where(
                Document.index_id == index_id, Document.status == DocumentStatus.READY
            )
            if after_id is not None:
                query = query.where(col(Document.id) > after_id)
            rows = session.exec(query.order_by(col(Document.id)).limit(limit)).all()
            return [document_ref(r) for r in rows]

    def ready_in(self, index_ids: Sequence[int]) -> list[DocumentRef]:
        """Every ready document of the given indexes (for metadata filtering)."""
        if not index_ids:
            return []
        with self._db.session() as session:
            query = select(Document).where(
                col(Document.index_id).in_(index_ids), Document.status == DocumentStatus.READY
            )
            return [document_ref(r) for r in session.exec(query).all()]

    def recent(self, index_ids: Sequence[int], *, limit: int = 10) -> list[DocumentRef]:
        """The ready documents of those indexes added last, newest first."""
        if not index_ids:
            return []
        with self._db.session() as session:
            query = select(Document).where(
                col(Document.index_id).in_(index_ids), Document.status == DocumentStatus.READY
            )
            rows = session.exec(
                query.order_by(col(Document.time_added).desc(), col(Document.id).desc()).limit(limit)
            )
            return [document_ref(r) for r in rows.all()]

    def unfinished(
        self, *, older_than: datetime | None = None, source_config_id: int | None = None
    ) -> list[DocumentRef]:
        """Documents left `pending` or `deleting` by an ingest or removal that failed or
        was killed mid-way (only those of one attached source, with `source_config_id`)."""
        with self._db.session() as session:
            query = select(Document).where(
                col(Document.status).in_([DocumentStatus.PENDING, DocumentStatus.DELETING])
            )
            if older_than is not None:
                query = query.where(col(Document.time_added) < older_than)
            if source_config_id is not None:
                query = query.where(Document.source_config_id == source_config_id)
            return [document_ref(r) for r in session.exec(query).all()]

    def chunks(self, chunk_ids: Sequence[int]) -> dict[int, ChunkRecord]:
        """Chunks by id (those of ready documents only)."""
        if not chunk_ids:
            return {}
        with self._db.session() as session:
            # Two lookups by primary key: as one join, SQLite may start from every ready
            # document instead of from the few chunks asked for.
            rows = session.exec(select(Chunk).where(col(Chunk.id).in_(chunk_ids))).all()
            ready = set(
                session.exec(
                    select(Document.id).where(
                        col(Document.id).in_({r.document_id for r in rows}),
                        Document.status == DocumentStatus.READY,
                    )
                ).all()
            )
            return {
                r.id: ChunkRecord(r.id, r.document_id, r.index_id, r.position, r.heading, r.text, r.start)
                for r in rows
                if r.id is not None and r.document_id in ready
            }

    def chunks_in(self, spans: Sequence[tuple[int, int, int]]) -> list[ChunkRecord]:
        """The chunks of ready documents in `spans`, each (document id, first position, last
        position), ordered by document and position (none of a document not ready): how a
        passage is read on into the one that follows it, and read with those before it."""
        if not spans:
            return []
        with self._db.session() as session:
            rows = session.exec(
                select(Chunk)
                .join(Document, col(Document.id) == Chunk.document_id)
                .where(
                    or_(
                        *(
                            and_(col(Chunk.document_id) == document, col(Chunk.position).between(first, last))
                            for document, first, last in spans
                        )
                    ),
                    Document.status == DocumentStatus.READY,
                )
                .order_by(col(Chunk.document_id), col(Chunk.position))
            ).all()
            return [
                ChunkRecord(r.id, r.document_id, r.index_id, r.position, r.heading, r.text, r.start)
                for r in rows
                if r.id is not None
            ]

    def documents(self, document_ids: Sequence[int]) -> dict[int, DocumentRef]:
        if not document_ids:
            return {}
        with self._db.session() as session:
            rows = session.exec(select(Document).where(col(Document.id).in_(document_ids))).all()
            return {r.id: document_ref(r) for r in rows if r.id is not None}

    def opening_text(self, document_ids: Sequence[int]) -> dict[int, str]:
        """Each document's first passage (its first chunk), for previews."""
        if not document_ids:
            return {}
        with self._db.session() as session:
            rows = session.exec(
                select(Chunk.document_id, Chunk.text).where(
                    col(Chunk.document_id).in_(document_ids), Chunk.position == 0
                )
            ).all()
            return {document_id: text for document_id, text in rows}


def _index_ids(session: Session, document_ids: Sequence[int]) -> set[int]:
    query = select(Document.index_id).where(col(Document.id).in_(document_ids))
    return set(session.exec(query).all())


def _set_status(session: Session, document_ids: Sequence[int], status: DocumentStatus) -> None:
    if document_ids:
        session.exec(update(Document).where(col(Document.id).in_(document_ids)).values(status=status))


def _delete_rows(session: Session, document_ids: Sequence[int]) -> None:
    if not document_ids:
        return
    session.exec(delete(Chunk).where(col(Chunk.document_id).in_(document_ids)))
    session.exec(delete(Document).where(col(Document.id).in_(document_ids)))
