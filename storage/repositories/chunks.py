"""Chunks of documents as the engine reads them: by id, in spans of positions, the openings
of documents, and the quotable units recorded for each (`knowledge.indexing.units`).

Only chunks of `ready` documents are handed out (those `access` may read, where it says):
a pending document's chunks are not searched yet, a deleting one's no longer. Part of
`DocumentRepository`, which writes the chunks with their document.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import and_, bindparam, or_, update
from sqlmodel import col, select

from storage.db import Database
from storage.document_access import PUBLIC_ONLY, AccessFilter, readable_sql
from storage.models import Chunk, Document, DocumentStatus
from storage.records import ChunkRecord


class ChunkReads:
    """The chunk half of `DocumentRepository` (which sets `_db`)."""

    _db: Database

    def chunks(self, chunk_ids: Sequence[int], access: AccessFilter = PUBLIC_ONLY) -> dict[int, ChunkRecord]:
        """Chunks by id (those of ready documents that `access` may read only)."""
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
                        readable_sql(access),
                    )
                ).all()
            )
            return {record.id: record for record in _records(rows) if record.document_id in ready}

    def chunks_in(self, spans: Sequence[tuple[int, int, int]]) -> list[ChunkRecord]:
        """The chunks of ready documents in `spans`, each (document id, first position, last
        position), ordered by document and position (none of a document not ready): how a
        passage is read on into the one that follows it, and read with those before it."""
        if not spans:
            return []
        in_spans = or_(
            *(
                and_(col(Chunk.document_id) == document, col(Chunk.position).between(first, last))
                for document, first, last in spans
            )
        )
        with self._db.session() as session:
            rows = session.exec(
                select(Chunk)
                .join(Document, col(Document.id) == Chunk.document_id)
                .where(in_spans, Document.status == DocumentStatus.READY)
                .order_by(col(Chunk.document_id), col(Chunk.position))
            ).all()
            return _records(rows)

    def without_units(self, limit: int) -> list[ChunkRecord]:
        """Every chunk of up to `limit` ready documents that have chunks without recorded units
        (written before revision 0022), ordered by document and position."""
        with self._db.session() as session:
            documents = session.exec(
                select(Chunk.document_id)
                .join(Document, col(Document.id) == Chunk.document_id)
                .where(col(Chunk.units).is_(None), Document.status == DocumentStatus.READY)
                .distinct()
                .order_by(col(Chunk.document_id))
                .limit(limit)
            ).all()
            if not documents:
                return []
            rows = session.exec(
                select(Chunk)
                .where(col(Chunk.document_id).in_(documents))
                .order_by(col(Chunk.document_id), col(Chunk.position))
            ).all()
            return _records(rows)

    def record_units(self, units: Sequence[tuple[int, str]]) -> None:
        """Store chunks' units (each a chunk id and its encoded units)."""
        if not units:
            return
        with self._db.engine.begin() as connection:
            connection.execute(
                update(Chunk).where(col(Chunk.id) == bindparam("chunk_id")).values(units=bindparam("units")),
                [{"chunk_id": chunk_id, "units": encoded} for chunk_id, encoded in units],
            )

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


def _records(rows: Sequence[Chunk]) -> list[ChunkRecord]:
    return [
        ChunkRecord(r.id, r.document_id, r.index_id, r.position, r.heading, r.text, r.start, r.units)
        for r in rows
        if r.id is not None
    ]
