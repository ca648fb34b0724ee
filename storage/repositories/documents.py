"""Documents and their chunks, written in the order that keeps SQL and vectors consistent:
the document as `pending` with its chunks, then (by the caller) the vectors, then `ready`.

Rows `pending` or `deleting` carry this process's lease (`storage.leases`), renewed while it
holds them; another process takes over only rows whose lease expired. Writes made for an
indexing job take its claim (`JobClaim`) and are refused once the job was taken over.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import and_, bindparam, insert, or_, update
from sqlmodel import Session, col, delete, select

from storage.db import Database
from storage.document_access import (
    PUBLIC,
    PUBLIC_ONLY,
    AccessFilter,
    DocumentAccess,
    access_rows,
    readable_sql,
)
from storage.leases import LeaseKeeper, Writer
from storage.models import Chunk, Document, DocumentAccessEntry, DocumentStatus
from storage.records import (
    ChunkRecord,
    DocumentRef,
    JobClaim,
    LeaseLost,
    NewChunk,
    NewDocument,
    NotFound,
)
from storage.repositories._rows import document_ref
from storage.repositories.answers import forget_quotes
from storage.repositories.indexes import bump_content_version
from storage.repositories.jobs import hold
from storage.values import utcnow

UNFINISHED = (DocumentStatus.PENDING, DocumentStatus.DELETING)


class DocumentRepository:
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
                writer=self.writer.name,
                lease_expires_at=self.writer.expiry(),
                access_clauses=new.access.count,
            )
            session.add(row)
            session.flush()
            assert row.id is not None
            _write_access(session, row.id, new.access)
            rows = [
                Chunk(
                    document_id=row.id,
                    index_id=new.index_id,
                    position=c.position,
                    heading=c.heading,
                    text=c.text,
                    start=c.start,
                    units=c.units,
                )
                for c in chunks
            ]
            session.add_all(rows)
            session.flush()
            document = document_ref(row)
        self._keeper.hold([document.id])
        return document, [r.id for r in rows if r.id is not None]

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
        now = utcnow()
        abandoned = col(Document.status).in_(UNFINISHED) & (
            (col(Document.lease_expires_at) < now)
            | (
                col(Document.lease_expires_at).is_(None)
                & (col(Document.time_added) < self.writer.abandoned_before())
            )
        )
        with self._db.session() as session:
            query = select(Document.id).where(abandoned)
            if source_config_id is not None:
                query = query.where(Document.source_config_id == source_config_id)
            candidates = list(session.exec(query).all())
        taken = []
        for document_id in candidates:
            with self._db.session() as session:
                done = session.exec(
                    update(Document)
                    .where(col(Document.id) == document_id, abandoned)
                    .values(
                        status=DocumentStatus.DELETING,
                        writer=self.writer.name,
                        lease_expires_at=self.writer.expiry(),
                    )
                )
                if done.rowcount == 1:
                    row = session.get(Document, document_id)
                    assert row is not None
                    taken.append(document_ref(row))
        self._keeper.hold(d.id for d in taken)
        return taken

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
        session.exec(
            statement.values(
                status=DocumentStatus.DELETING, writer=self.writer.name, lease_expires_at=self.writer.expiry()
            )
        )
        self._keeper.hold(document_ids)

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
            query = select(Document).where(
                col(Document.index_id).in_(index_ids),
                Document.status == DocumentStatus.READY,
                readable_sql(access),
            )
            return [document_ref(r) for r in session.exec(query).all()]

    def unreadable_in(self, index_ids: Sequence[int], access: AccessFilter) -> list[int]:
        """Ids of the ready documents of those indexes that `access` may not read: what the
        dense search leaves out (none at all where no source restricts anything). One query,
        which reads only the restricted documents (`ix_document_access_clauses`)."""
        if not index_ids:
            return []
        with self._db.session() as session:
            query = select(Document.id).where(
                col(Document.index_id).in_(index_ids),
                Document.access_clauses != PUBLIC,
                Document.status == DocumentStatus.READY,
                readable_sql(access, negate=True),
            )
            return [i for i in session.exec(query.order_by(col(Document.id))).all() if i is not None]

    def set_access(self, changes: dict[int, DocumentAccess]) -> list[int]:
        """Give documents the access their source now gives them; the ids whose access
        changed. An index whose documents' access changed has new content as far as cached
        answers are concerned. In bulk: a permission sync writes thousands at once."""
        if not changes:
            return []
        with self._db.session() as session:
            current: dict[int, tuple[int, int]] = {}
            stored: dict[int, tuple[frozenset[str], ...]] = {}
            for batch in _batches(list(changes)):
                query = select(Document.id, Document.access_clauses, Document.index_id)
                for document_id, count, index_id in session.exec(query.where(col(Document.id).in_(batch))):
                    if document_id is not None:
                        current[document_id] = (count, index_id)
                stored.update(_access_of(session, batch))
            changed = [
                d
                for d, (count, _) in current.items()
                if count != changes[d].count or stored.get(d, ()) != changes[d].clauses
            ]
            for batch in _batches(changed):
                session.exec(
                    delete(DocumentAccessEntry).where(col(DocumentAccessEntry.document_id).in_(batch))
                )
            by_count: dict[int, list[int]] = {}
            for document_id in changed:
                by_count.setdefault(changes[document_id].count, []).append(document_id)
            for count, documents in by_count.items():
                for batch in _batches(documents):
                    session.exec(
                        update(Document).where(col(Document.id).in_(batch)).values(access_clauses=count)
                    )
            rows = [row for d in changed for row in access_rows(d, changes[d])]
            for start in range(0, len(rows), 5000):
                session.exec(insert(DocumentAccessEntry).values(rows[start : start + 5000]))
            for index_id in {current[d][1] for d in changed}:
                bump_content_version(session, index_id)
            return changed

    def access(self, document_id: int) -> DocumentAccess:
        """The access a document has now (`NotFound` if there is no such document)."""
        with self._db.session() as session:
            row = session.get(Document, document_id)
            if row is None:
                raise NotFound(f"document {document_id}")
            if row.access_clauses < PUBLIC:
                return DocumentAccess.nobody()
            clauses = _access_of(session, [document_id]).get(document_id, ())
            return DocumentAccess(clauses)

    def readable(self, document_ids: Sequence[int], access: AccessFilter) -> set[int]:
        """Those of the documents that `access` may read."""
        if not document_ids:
            return set()
        with self._db.session() as session:
            query = select(Document.id).where(col(Document.id).in_(document_ids), readable_sql(access))
            return {i for i in session.exec(query).all() if i is not None}

    def recent(
        self, index_ids: Sequence[int], *, limit: int = 10, access: AccessFilter = PUBLIC_ONLY
    ) -> list[DocumentRef]:
        """The ready documents of those indexes that `access` may read, added last, newest first."""
        if not index_ids:
            return []
        with self._db.session() as session:
            query = select(Document).where(
                col(Document.index_id).in_(index_ids),
                Document.status == DocumentStatus.READY,
                readable_sql(access),
            )
            rows = session.exec(
                query.order_by(col(Document.time_added).desc(), col(Document.id).desc()).limit(limit)
            )
            return [document_ref(r) for r in rows.all()]

    def unfinished(self, *, source_config_id: int | None = None) -> list[DocumentRef]:
        """Documents `pending` or `deleting`, whoever holds them (what is left half done)."""
        with self._db.session() as session:
            query = select(Document).where(col(Document.status).in_(UNFINISHED))
            if source_config_id is not None:
                query = query.where(Document.source_config_id == source_config_id)
            return [document_ref(r) for r in session.exec(query).all()]

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
            return {
                r.id: ChunkRecord(
                    r.id, r.document_id, r.index_id, r.position, r.heading, r.text, r.start, r.units
                )
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
                ChunkRecord(r.id, r.document_id, r.index_id, r.position, r.heading, r.text, r.start, r.units)
                for r in rows
                if r.id is not None
            ]

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
            return [
                ChunkRecord(r.id, r.document_id, r.index_id, r.position, r.heading, r.text, r.start, r.units)
                for r in rows
                if r.id is not None
            ]

    def record_units(self, units: Sequence[tuple[int, str]]) -> None:
        """Store chunks' units (each a chunk id and its encoded units)."""
        if not units:
            return
        with self._db.engine.begin() as connection:
            connection.execute(
                update(Chunk).where(col(Chunk.id) == bindparam("chunk_id")).values(units=bindparam("units")),
                [{"chunk_id": chunk_id, "units": encoded} for chunk_id, encoded in units],
            )

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


def _delete_rows(session: Session, document_ids: Sequence[int]) -> None:
    if not document_ids:
        return
    session.exec(delete(DocumentAccessEntry).where(col(DocumentAccessEntry.document_id).in_(document_ids)))
    session.exec(delete(Chunk).where(col(Chunk.document_id).in_(document_ids)))
    session.exec(delete(Document).where(col(Document.id).in_(document_ids)))


def _batches(ids: Sequence[int], size: int = 500) -> list[Sequence[int]]:
    """Ids a few hundred at a time: SQLite limits the parameters of one statement."""
    return [ids[start : start + size] for start in range(0, len(ids), size)]


def _write_access(session: Session, document_id: int, access: DocumentAccess) -> None:
    rows = access_rows(document_id, access)
    if rows:
        session.exec(insert(DocumentAccessEntry).values(rows))


def _access_of(session: Session, document_ids: Sequence[int]) -> dict[int, tuple[frozenset[str], ...]]:
    """The clauses stored for each document, in clause order."""
    if not document_ids:
        return {}
    found: dict[int, dict[int, set[str]]] = {}
    rows = [
        row
        for batch in _batches(document_ids)
        for row in session.exec(
            select(DocumentAccessEntry).where(col(DocumentAccessEntry.document_id).in_(batch))
        ).all()
    ]
    for row in rows:
        found.setdefault(row.document_id, {}).setdefault(row.clause, set()).add(row.principal)
    return {
        document: tuple(frozenset(clauses[n]) for n in sorted(clauses)) for document, clauses in found.items()
    }
