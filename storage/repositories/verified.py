"""Verified answers: the questions and the answers people marked as right, kept per index."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlmodel import col, select

from storage.db import Database
from storage.document_access import AccessFilter, readable_sql
from storage.models import Document, DocumentStatus, ForgetJob, User, VerifiedAnswer, utcnow
from storage.records import NotFound, VerifiedRef
from storage.repositories._rows import aware


@dataclass(frozen=True)
class VerifiedEntry:
    """A verified answer about to be saved (or saved again: same index and `source_key`)."""

    tenant_id: str
    index_id: int
    source_key: str
    question: str
    answer: str
    question_vector: Sequence[float]
    embedding_model: str
    answered_by: str
    verified_by: int
    link: str | None = None
    answered_by_user: int | None = None
    """Who wrote the answer, when Lore knows them as a user."""
    cited: Sequence[dict[str, Any]] = field(default_factory=tuple)
    answer_id: int | None = None
    review_at: datetime | None = None
    asked_by: int | None = None
    """Who asked `question` in these words (None: the verifier wrote it)."""


FORGOTTEN = "asker forgotten"
"""Why a verified answer whose asker was forgotten awaits review: it has no question."""


class VerifiedRepository:
    def __init__(self, db: Database) -> None:
        self._db = db

    def save(self, entry: VerifiedEntry) -> VerifiedRef:
        """Keep a verified answer; one saved before from the same source in the same index
        is replaced (verified again, by whoever saved it now)."""
        with self._db.session() as session:
            row = session.exec(
                select(VerifiedAnswer).where(
                    VerifiedAnswer.index_id == entry.index_id, VerifiedAnswer.source_key == entry.source_key
                )
            ).first() or VerifiedAnswer(
                tenant_id=entry.tenant_id,
                index_id=entry.index_id,
                source_key=entry.source_key,
                question="",
                answer="",
                embedding_model=entry.embedding_model,
                verified_by=entry.verified_by,
            )
            now = utcnow()
            row.question, row.answer = entry.question, entry.answer
            row.question_vector = [float(x) for x in entry.question_vector]
            row.embedding_model = entry.embedding_model
            row.answered_by, row.verified_by = entry.answered_by, entry.verified_by
            row.answered_by_user = entry.answered_by_user
            row.verified_at = row.updated_at = now
            row.link, row.cited, row.answer_id = entry.link, list(entry.cited), entry.answer_id
            row.asked_by = entry.asked_by
            row.review_at, row.flagged = entry.review_at, None
            session.add(row)
            session.flush()
            return self._ref(session, row)

    def get(self, verified_id: int, tenant_id: str) -> VerifiedRef:
        with self._db.session() as session:
            row = session.get(VerifiedAnswer, verified_id)
            if row is None or row.tenant_id != tenant_id:
                raise NotFound(f"verified answer {verified_id}")
            return self._ref(session, row)

    def of_indexes(self, index_ids: Sequence[int], *, live_only: bool = False) -> list[VerifiedRef]:
        """The verified answers kept in those indexes (only those answered with, when
        `live_only`), newest first."""
        if not index_ids:
            return []
        with self._db.session() as session:
            query = select(VerifiedAnswer).where(col(VerifiedAnswer.index_id).in_(list(index_ids)))
            if live_only:
                query = query.where(col(VerifiedAnswer.flagged).is_(None))
            rows = session.exec(
                query.order_by(col(VerifiedAnswer.verified_at).desc(), col(VerifiedAnswer.id).desc())
            ).all()
            names = _names(session, {r.verified_by for r in rows})
            return [_ref(r, names.get(r.verified_by, "")) for r in rows]

    def edit(
        self,
        verified_id: int,
        answer: str,
        verified_by: int,
        question: tuple[str, Sequence[float], str] | None = None,
    ) -> VerifiedRef:
        """New words for the answer, verified again by the editor (and no longer flagged);
        with `question` (its words, their vector, the embedding model), the question in the
        editor's words too: nobody's wording but theirs any more."""
        with self._db.session() as session:
            row = _row(session, verified_id)
            row.answer, row.verified_by = answer, verified_by
            if question is not None:
                row.question, vector, row.embedding_model = question
                row.question_vector, row.asked_by = [float(x) for x in vector], None
            row.verified_at = row.updated_at = utcnow()
            row.flagged = None if row.question else row.flagged  # no question: still awaits one
            session.add(row)
            session.flush()
            return self._ref(session, row)

    def renew(
        self, verified_id: int, verified_by: int, review_at: datetime | None, cited: Sequence[dict[str, Any]]
    ) -> VerifiedRef:
        """Verified again as it is: flag cleared, next review and the cited documents'
        versions as they are now."""
        with self._db.session() as session:
            row = _row(session, verified_id)
            row.verified_by, row.review_at, row.flagged, row.cited = verified_by, review_at, None, list(cited)
            row.verified_at = row.updated_at = utcnow()
            session.add(row)
            session.flush()
            return self._ref(session, row)

    def flag(self, verified_id: int, reason: str) -> None:
        """Set aside for review (no longer answered with) until someone verifies it again."""
        with self._db.session() as session:
            row = _row(session, verified_id)
            if row.flagged is None:
                row.flagged, row.updated_at = reason, utcnow()
                session.add(row)

    def delete(self, verified_id: int) -> None:
        with self._db.session() as session:
            session.delete(_row(session, verified_id))

    def documents(
        self, document_ids: Sequence[int], access: AccessFilter | None = None
    ) -> dict[int, tuple[int, str]]:
        """The ready documents among `document_ids` (those `access` may read, when given):
        their index and content hash, by id."""
        if not document_ids:
            return {}
        with self._db.session() as session:
            query = select(Document.id, Document.index_id, Document.content_hash).where(
                col(Document.id).in_(list(document_ids)), Document.status == DocumentStatus.READY
            )
            if access is not None:
                query = query.where(readable_sql(access))
            rows = session.exec(query).all()
            return {int(i): (int(index), str(digest)) for i, index, digest in rows if i is not None}

    def _ref(self, session: Any, row: VerifiedAnswer) -> VerifiedRef:
        return _ref(row, _names(session, {row.verified_by}).get(row.verified_by, ""))


def _row(session: Any, verified_id: int) -> VerifiedAnswer:
    row = session.get(VerifiedAnswer, verified_id)
    if row is None:
        raise NotFound(f"verified answer {verified_id}")
    assert isinstance(row, VerifiedAnswer)
    return row


def _names(session: Any, user_ids: set[int]) -> dict[int, str]:
    """Verifiers' names: their Slack id when Lore has no name for them, but "" for one who
    was forgotten (their name blanked), whom chat calls "a teammate"."""
    if not user_ids:
        return {}
    rows = session.exec(select(User.id, User.name, User.external_id).where(col(User.id).in_(user_ids))).all()
    forgotten = set(session.exec(select(ForgetJob.user_id).where(col(ForgetJob.user_id).in_(user_ids))).all())
    return {int(i): str(name or ("" if i in forgotten else external)) for i, name, external in rows}


def _ref(row: VerifiedAnswer, verified_by_name: str) -> VerifiedRef:
    assert row.id is not None
    return VerifiedRef(
        id=row.id,
        tenant_id=row.tenant_id,
        index_id=row.index_id,
        source_key=row.source_key,
        question=row.question,
        answer=row.answer,
        question_vector=tuple(row.question_vector),
        embedding_model=row.embedding_model,
        answered_by=row.answered_by,
        verified_by=row.verified_by,
        verified_by_name=verified_by_name,
        verified_at=aware(row.verified_at),
        link=row.link,
        cited=tuple(row.cited),
        answer_id=row.answer_id,
        asked_by=row.asked_by,
        review_at=aware(row.review_at),
        flagged=row.flagged,
        updated_at=aware(row.updated_at),
    )
