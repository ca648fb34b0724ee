"""Documents, written in the order that keeps SQL and vectors consistent: the document as
`pending` with its chunks, then (by the caller) the vectors, then `ready`; and read back.

Rows `pending` or `deleting` carry this process's lease (`storage.leases`), renewed while it
holds them; another process takes over only rows whose lease expired. Writes made for an
indexing job take its claim (`JobClaim`) and are refused once the job was taken over.
`DocumentRepository` also reads chunks (`storage.repositories.chunks`) and each document's
access (`storage.repositories.document_access`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import ColumnElement, update
from sqlmodel import Session, col, delete, select
from sqlmodel.sql.expression import SelectOfScalar

from storage.db import Database
from storage.document_access import PUBLIC, PUBLIC_ONLY, AccessFilter, readable_sql
from storage.leases import LeaseKeeper, Writer
from storage.models import Chunk, Document, DocumentAccessEntry, DocumentStatus
from storage.records import DocumentRef, JobClaim, LeaseLost, NewChunk, NewDocument, NotFound
from storage.repositories._rows import document_ref
from storage.repositories.answers import forget_quotes
from storage.repositories.chunks import ChunkReads
from storage.repositories.document_access import DocumentAccessReads, write_access
from storage.repositories.indexes import bump_content_version
from storage.repositories.jobs import hold
from storage.values import utcnow

UNFINISHED = (DocumentStatus.PENDING, DocumentStatus.DELETING)


class DocumentRepository(ChunkReads, DocumentAccessReads):
    def __init__(
        self, db: Database, *, writer: Writer | None = None, on_delete: Callable[[], None] | None = None
    ) -> None:
        """`writer`: the name and lease length this process writes under (one is drawn for
        the process by default)."""
        self._db = db
        self.writer = writer or Writer.of_this_process()
        self._keeper = LeaseKeeper(self._renew, self.writer.lease_seconds)
        db.close_with(self._keeper)
        self._on_delete = on_delete or (lambda: None)
        """Called once deleted rows are committed (`storage.scrub.Scrubber.request`: the
        keyword index keeps a deleted passage's terms until the scrub after it)."""

    def create_pending(
        self, new: NewDocument, chunks: Sequence[NewChunk], *, claim: JobClaim | None = None
    ) -> tuple[DocumentRef, list[int]]:
        """Write the document as pending with its chunks, under this process's lease; return
        it and the chunk ids (in `chunks` order), which are also the ids of their vectors.
        `claim`: written for that indexing job, refused once the job was taken over."""
        with self._db.session() as session:
            hold(session, claim)
            row = self._pending_row(new, len(chunks))
            session.add(row)
            session.flush()
            assert row.id is not None
            write_access(session, row.id, new.access)
            rows = _chunk_rows(row.id, new.index_id, chunks)
            session.add_all(rows)
            session.flush()
            document = document_ref(row)
        self._keeper.hold([document.id])
        return document, [r.id for r in rows if r.id is not None]

    def _pending_row(self, new: NewDocument, chunk_count: int) -> Document:
        return Document(
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
            chunk_count=chunk_count,
            status=DocumentStatus.PENDING,
            meta=dict(new.meta),
            added_by=new.added_by,
            writer=self.writer.name,
            lease_expires_at=self.writer.expiry(),
            access_clauses=new.access.count,
        )

    def mark_ready(
        self, document_id: int, *, replaces: Sequence[int] = (), claim: JobClaim | None = None
    ) -> DocumentRef:
        """Make the document searchable and, in the same transaction, take the documents it
        replaces out of search (`deleting`, under this process's lease; the caller deletes
        their vectors, then `delete`). Raises `LeaseLost` if the document is no longer this
        process's pending row (its lease expired and another process is removing it)."""
        with self._db.session() as session:
            hold(session, claim)
            done = session.exec(
                update(Document)
                .where(
                    col(Document.id) == document_id,
                    col(Document.status) == DocumentStatus.PENDING,
                    col(Document.writer) == self.writer.name,
                )
                .values(status=DocumentStatus.READY, writer=None, lease_expires_at=None)
            )
            if done.rowcount != 1:
                self._keeper.release([document_id])
                raise LeaseLost(f"document {document_id} was taken over: its writer's lease expired")
            row = session.get(Document, document_id)
            assert row is not None
            self._lease(session, replaces, only=(DocumentStatus.READY,))
            bump_content_version(session, row.index_id)
            ready = document_ref(row)
        self._keeper.release([document_id])
        return ready

    def mark_deleting(self, document_ids: Sequence[int], *, claim: JobClaim | None = None) -> None:
        """Take documents out of search, under this process's lease, before their vectors
        are deleted."""
        if not document_ids:
            return
        with self._db.session() as session:
            hold(session, claim)
            self._lease(session, document_ids)
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
        self._keeper.release(document_ids)
        self._on_delete()

    def let_go(self, document_ids: Sequence[int]) -> None:
        """Stop renewing these rows' leases (their removal failed half-way): they expire, and
        whichever process repairs next finishes them, instead of this one vouching for them
        for as long as it lives."""
        self._keeper.release(document_ids)

    def take_over_abandoned(self, *, source_config_id: int | None = None) -> list[DocumentRef]:
        """Documents left `pending` or `deleting` by a writer that stopped renewing their
        lease (killed, or paused for longer than a lease), now `deleting` under this
        process's lease, for it to remove (only those of one attached source, with
        `source_config_id`). Each is taken by a conditional update, so a row whose writer
        finished it meanwhile, or that another process took first, is left alone; rows
        another live process is writing are never touched."""
        abandoned = self._abandoned()
        with self._db.session() as session:
            query = select(Document.id).where(abandoned)
            if source_config_id is not None:
                query = query.where(Document.source_config_id == source_config_id)
            candidates = [i for i in session.exec(query).all() if i is not None]
        taken = [found for d in candidates if (found := self._take(d, abandoned)) is not None]
        self._keeper.hold(d.id for d in taken)
        return taken

    def _abandoned(self) -> ColumnElement[bool]:
        """Unfinished rows whose lease expired (or that never had one, and are old)."""
        now = utcnow()
        return col(Document.status).in_(UNFINISHED) & (
            (col(Document.lease_expires_at) < now)
            | (
                col(Document.lease_expires_at).is_(None)
                & (col(Document.time_added) < self.writer.abandoned_before())
            )
        )

    def _take(self, document_id: int, abandoned: ColumnElement[bool]) -> DocumentRef | None:
        """The document, now `deleting` under this process's lease, if it is still abandoned."""
        with self._db.session() as session:
            done = session.exec(
                update(Document).where(col(Document.id) == document_id, abandoned).values(self._deleting())
            )
            if done.rowcount != 1:
                return None
            row = session.get(Document, document_id)
            assert row is not None
            return document_ref(row)

    def held(self) -> frozenset[int]:
        """Ids of the documents this process holds a lease on now."""
        return self._keeper.held

    def close(self) -> None:
        """Stop renewing leases (the keeper's thread ended when this returns): rows still held
        are left to expire, for another process to finish (as if this one had been killed).
        Disposing the database closes it too."""
        self._keeper.close()

    def _lease(
        self, session: Session, document_ids: Sequence[int], only: Sequence[DocumentStatus] | None = None
    ) -> None:
        """Mark documents `deleting` under this process's lease (those in `only` states)."""
        if not document_ids:
            return
        statement = update(Document).where(col(Document.id).in_(document_ids))
        if only is not None:
            statement = statement.where(col(Document.status).in_(only))
        session.exec(statement.values(self._deleting()))
        self._keeper.hold(document_ids)

    def _deleting(self) -> dict[str, Any]:
        """The values that make a row `deleting` under this process's lease."""
        return {
            "status": DocumentStatus.DELETING,
            "writer": self.writer.name,
            "lease_expires_at": self.writer.expiry(),
        }

    def _renew(self, document_ids: list[int]) -> None:
        with self._db.session() as session:
            session.exec(
                update(Document)
                .where(
                    col(Document.id).in_(document_ids),
                    col(Document.writer) == self.writer.name,
                    col(Document.status).in_(UNFINISHED),
                )
                .values(lease_expires_at=self.writer.expiry())
            )

    def update_meta(
        self, document_id: int, updates: dict[str, Any], *, claim: JobClaim | None = None
    ) -> None:
        """Merge `updates` into a document's metadata (keys set to None are removed)."""
        with self._db.session() as session:
            hold(session, claim)
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

    def find_ready_by_hash(
        self, index_id: int, content_hash: str, *, source_key: str | None = None
    ) -> DocumentRef | None:
        """A ready public document of the index with this content (only the one from
        `source_key`, when given: a restricted document is the same as no other, and a public
        one never stands in for, or names, a restricted one)."""
        with self._db.session() as session:
            query = select(Document).where(
                Document.index_id == index_id,
                Document.content_hash == content_hash,
                Document.status == DocumentStatus.READY,
            )
            if source_key is None:
                query = query.where(Document.access_clauses == PUBLIC)
            else:
                query = query.where(Document.source_key == source_key)
            row = session.exec(query).first()
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

    def list_ready(
        self,
        index_id: int,
        *,
        after_id: int | None = None,
        limit: int = 50,
        access: AccessFilter | None = PUBLIC_ONLY,
    ) -> list[DocumentRef]:
        """Ready documents of the index that `access` may read (every one with None, for
        Lore's own housekeeping), oldest first, `limit` at a time after `after_id`."""
        with self._db.session() as session:
            query = select(Document).where(
                Document.index_id == index_id, Document.status == DocumentStatus.READY
            )
            if access is not None:
                query = query.where(readable_sql(access))
            if after_id is not None:
                query = query.where(col(Document.id) > after_id)
            rows = session.exec(query.order_by(col(Document.id)).limit(limit)).all()
            return [document_ref(r) for r in rows]

    def ready_in(self, index_ids: Sequence[int], access: AccessFilter = PUBLIC_ONLY) -> list[DocumentRef]:
        """Every ready document of the given indexes that `access` may read (for metadata
        filtering)."""
        if not index_ids:
            return []
        with self._db.session() as session:
            return [document_ref(r) for r in session.exec(_readable_in(index_ids, access)).all()]

    def recent(
        self, index_ids: Sequence[int], *, limit: int = 10, access: AccessFilter = PUBLIC_ONLY
    ) -> list[DocumentRef]:
        """The ready documents of those indexes that `access` may read, added last, newest first."""
        if not index_ids:
            return []
        newest = (col(Document.time_added).desc(), col(Document.id).desc())
        with self._db.session() as session:
            rows = session.exec(_readable_in(index_ids, access).order_by(*newest).limit(limit))
            return [document_ref(r) for r in rows.all()]

    def unfinished(self, *, source_config_id: int | None = None) -> list[DocumentRef]:
        """Documents `pending` or `deleting`, whoever holds them (what is left half done)."""
        with self._db.session() as session:
            query = select(Document).where(col(Document.status).in_(UNFINISHED))
            if source_config_id is not None:
                query = query.where(Document.source_config_id == source_config_id)
            return [document_ref(r) for r in session.exec(query).all()]

    def documents(self, document_ids: Sequence[int]) -> dict[int, DocumentRef]:
        if not document_ids:
            return {}
        with self._db.session() as session:
            rows = session.exec(select(Document).where(col(Document.id).in_(document_ids))).all()
            return {r.id: document_ref(r) for r in rows if r.id is not None}


def _readable_in(index_ids: Sequence[int], access: AccessFilter) -> SelectOfScalar[Document]:
    """The ready documents of those indexes that `access` may read."""
    return select(Document).where(
        col(Document.index_id).in_(index_ids),
        Document.status == DocumentStatus.READY,
        readable_sql(access),
    )


def _index_ids(session: Session, document_ids: Sequence[int]) -> set[int]:
    query = select(Document.index_id).where(col(Document.id).in_(document_ids))
    return set(session.exec(query).all())


def _delete_rows(session: Session, document_ids: Sequence[int]) -> None:
    if not document_ids:
        return
    session.exec(delete(DocumentAccessEntry).where(col(DocumentAccessEntry.document_id).in_(document_ids)))
    session.exec(delete(Chunk).where(col(Chunk.document_id).in_(document_ids)))
    session.exec(delete(Document).where(col(Document.id).in_(document_ids)))


def _chunk_rows(document_id: int, index_id: int, chunks: Sequence[NewChunk]) -> list[Chunk]:
    return [
        Chunk(
            document_id=document_id,
            index_id=index_id,
            position=c.position,
            heading=c.heading,
            text=c.text,
            start=c.start,
            units=c.units,
        )
        for c in chunks
    ]
