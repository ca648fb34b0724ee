"""Each document's access as stored (`DocumentAccessEntry` rows and the document's clause
count): set in bulk by a permission sync, read back, and checked for a reader. The rule
itself, in SQL, is `storage.document_access`. Part of `DocumentRepository`.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import insert, update
from sqlmodel import Session, col, delete, select

from storage.db import Database
from storage.document_access import PUBLIC, AccessFilter, DocumentAccess, access_rows, readable_sql
from storage.models import Document, DocumentAccessEntry, DocumentStatus
from storage.records import NotFound
from storage.repositories.indexes import bump_content_version

INSERTS = 5000
"""Access rows added by one statement."""


class DocumentAccessReads:
    """The access half of `DocumentRepository` (which sets `_db`)."""

    _db: Database

    def set_access(self, changes: dict[int, DocumentAccess]) -> list[int]:
        """Give documents the access their source now gives them; the ids whose access
        changed. An index whose documents' access changed has new content as far as cached
        answers are concerned. In bulk: a permission sync writes thousands at once."""
        if not changes:
            return []
        with self._db.session() as session:
            current = _clause_counts(session, list(changes))
            stored = _access_of(session, list(changes))
            changed = [
                d
                for d, (count, _) in current.items()
                if count != changes[d].count or stored.get(d, ()) != changes[d].clauses
            ]
            _rewrite_access(session, {d: changes[d] for d in changed})
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


def write_access(session: Session, document_id: int, access: DocumentAccess) -> None:
    """The access rows of a new document."""
    rows = access_rows(document_id, access)
    if rows:
        session.exec(insert(DocumentAccessEntry).values(rows))


def _clause_counts(session: Session, document_ids: Sequence[int]) -> dict[int, tuple[int, int]]:
    """Each document's clause count and index."""
    found: dict[int, tuple[int, int]] = {}
    for batch in _batches(document_ids):
        query = select(Document.id, Document.access_clauses, Document.index_id)
        for document_id, count, index_id in session.exec(query.where(col(Document.id).in_(batch))):
            if document_id is not None:
                found[document_id] = (count, index_id)
    return found


def _rewrite_access(session: Session, changes: dict[int, DocumentAccess]) -> None:
    """Replace these documents' access rows and clause counts."""
    for batch in _batches(list(changes)):
        session.exec(delete(DocumentAccessEntry).where(col(DocumentAccessEntry.document_id).in_(batch)))
    by_count: dict[int, list[int]] = {}
    for document_id, access in changes.items():
        by_count.setdefault(access.count, []).append(document_id)
    for count, documents in by_count.items():
        for batch in _batches(documents):
            session.exec(update(Document).where(col(Document.id).in_(batch)).values(access_clauses=count))
    rows = [row for document_id, access in changes.items() for row in access_rows(document_id, access)]
    for start in range(0, len(rows), INSERTS):
        session.exec(insert(DocumentAccessEntry).values(rows[start : start + INSERTS]))


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


def _batches(ids: Sequence[int], size: int = 500) -> list[Sequence[int]]:
    """Ids a few hundred at a time: SQLite limits the parameters of one statement."""
    return [ids[start : start + size] for start in range(0, len(ids), size)]
