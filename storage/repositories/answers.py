"""Answers given, the indexes each searched, and what people thought of them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlmodel import Session, col, or_, select

from storage.access import Given, given_now
from storage.db import Database
from storage.models import (
    AnswerCitation,
    AnswerFeedback,
    AnswerIndex,
    AnswerLog,
    Channel,
    Conversation,
    Document,
    utcnow,
)
from storage.records import AnswerRecord, FeedbackRecord, NotFound, ReviewItem
from storage.repositories._rows import aware, insert_ignoring_conflict
from storage.repositories.usage import stale_days
from storage.values import ConversationKind, FeedbackReason


@dataclass(frozen=True)
class AnswerEntry:
    tenant_id: str
    question: str
    mode: str
    fallback: str | None
    abstained: bool
    cited: list[dict[str, Any]]
    """One dict per source; an `index_id` in it marks that index as cited."""
    conversation_id: int | None = None
    user_id: int | None = None
    text: str | None = None
    searched: Sequence[int] = field(default_factory=tuple)
    """The ids of the indexes the question searched."""
    brief: str | None = None
    thread: str | None = None
    restricted: Sequence[int] = field(default_factory=tuple)
    """Documents restricted in their source that the answer drew on."""
    given: Given | None = None
    """Where it was given (None: its conversation says, and without one, a DM)."""
    latency_ms: int | None = None
    """From the question's arrival to the answer."""
    verified: bool = False
    """It was given from a verified answer (a help channel's, shown first)."""


class AnswerRepository:
    def __init__(self, db: Database) -> None:
        self._db = db

    def record(self, entry: AnswerEntry) -> int:
        cited = {int(c["index_id"]) for c in entry.cited if c.get("index_id") is not None}
        documents = _documents(entry.cited)
        with self._db.session() as session:
            row = AnswerLog(
                tenant_id=entry.tenant_id,
                conversation_id=entry.conversation_id,
                user_id=entry.user_id,
                question=entry.question,
                text=entry.text,
                mode=entry.mode,
                fallback=entry.fallback,
                abstained=entry.abstained,
                cited=entry.cited,
                brief=entry.brief,
                thread=entry.thread,
                restricted=sorted(set(entry.restricted)),
                given_in=entry.given.name if entry.given else None,
                latency_ms=entry.latency_ms,
                verified=entry.verified or _quotes_verified(session, documents),
            )
            session.add(row)
            session.flush()
            assert row.id is not None
            for index_id in sorted({*entry.searched, *cited}):
                session.add(AnswerIndex(answer_id=row.id, index_id=index_id, cited=index_id in cited))
            for document_id, index_id in documents.items():
                session.add(AnswerCitation(answer_id=row.id, document_id=document_id, index_id=index_id))
            return row.id

    def get(self, answer_id: int, tenant_id: str) -> AnswerRecord:
        """The answer, if it is of that workspace (NotFound otherwise)."""
        with self._db.session() as session:
            row = session.get(AnswerLog, answer_id)
            if row is None or row.tenant_id != tenant_id:
                raise NotFound(f"answer {answer_id}")
            return _record(row, _index_ids(session, [answer_id]).get(answer_id, ()), _given(session, row))

    def escalate(self, answer_id: int, tenant_id: str) -> AnswerRecord:
        """Mark the answer as escalated to the experts (the first time counts)."""
        with self._db.session() as session:
            row = session.get(AnswerLog, answer_id)
            if row is None or row.tenant_id != tenant_id:
                raise NotFound(f"answer {answer_id}")
            if row.escalated_at is None:
                row.escalated_at = utcnow()
                session.add(row)
                session.exec(stale_days(tenant_id, on=row.created_at))
                session.flush()
            return _record(row, _index_ids(session, [answer_id]).get(answer_id, ()), _given(session, row))

    def escalated_in(self, conversation_id: int, thread: str) -> AnswerRecord | None:
        """The latest answer of that thread that was escalated to the experts, if any."""
        with self._db.session() as session:
            row = session.exec(
                select(AnswerLog)
                .where(
                    AnswerLog.conversation_id == conversation_id,
                    AnswerLog.thread == thread,
                    col(AnswerLog.escalated_at).is_not(None),
                )
                .order_by(col(AnswerLog.id).desc())
            ).first()
            if row is None or row.id is None:
                return None
            return _record(row, _index_ids(session, [row.id]).get(row.id, ()), _given(session, row))

    def escalated(self, tenant_id: str, index_ids: Sequence[int], *, limit: int = 50) -> list[AnswerRecord]:
        """Answers that searched one of `index_ids` and were escalated to experts, newest first."""
        if not index_ids:
            return []
        with self._db.session() as session:
            used = select(AnswerIndex.answer_id).where(col(AnswerIndex.index_id).in_(index_ids))
            rows = session.exec(
                select(AnswerLog)
                .where(
                    AnswerLog.tenant_id == tenant_id,
                    col(AnswerLog.id).in_(used),
                    col(AnswerLog.escalated_at).is_not(None),
                )
                .order_by(col(AnswerLog.escalated_at).desc(), col(AnswerLog.id).desc())
                .limit(limit)
            ).all()
            indexes = _index_ids(session, [r.id for r in rows if r.id is not None])
            return [_record(r, indexes.get(r.id or 0, ()), _given(session, r)) for r in rows]

    def set_feedback(
        self,
        answer_id: int,
        tenant_id: str,
        user_id: int,
        helpful: bool,
        *,
        reason: FeedbackReason | None = None,
        comment: str | None = None,
    ) -> FeedbackRecord:
        """Record (or change) `user_id`'s verdict on the answer; a helpful one carries no
        reason or comment."""
        with self._db.session() as session:
            answer = session.get(AnswerLog, answer_id)
            if answer is None or answer.tenant_id != tenant_id:
                raise NotFound(f"answer {answer_id}")
            query = select(AnswerFeedback).where(
                AnswerFeedback.answer_id == answer_id, AnswerFeedback.user_id == user_id
            )
            now = utcnow()
            first = {"answer_id": answer_id, "tenant_id": tenant_id, "user_id": user_id, "helpful": helpful}
            # Two presses at once (two replicas): one row, whichever verdict is written last.
            insert_ignoring_conflict(session, AnswerFeedback, {**first, "created_at": now, "updated_at": now})
            row = session.exec(query).one()
            row.helpful = helpful
            row.reason = None if helpful else (reason.value if reason else row.reason)
            row.comment = None if helpful else (comment if comment is not None else row.comment)
            row.updated_at = utcnow()
            session.add(row)
            session.exec(stale_days(tenant_id, on=answer.created_at))
            session.flush()
            return _feedback(row)

    def verdicts(self, answer_id: int) -> list[FeedbackRecord]:
        with self._db.session() as session:
            rows = session.exec(
                select(AnswerFeedback)
                .where(AnswerFeedback.answer_id == answer_id)
                .order_by(col(AnswerFeedback.id))
            ).all()
            return [_feedback(r) for r in rows]

    def review(self, tenant_id: str, index_ids: Sequence[int], *, limit: int = 50) -> list[ReviewItem]:
        """Answers that searched one of `index_ids` and were judged unhelpful by someone or
        could not be given (abstained), newest first."""
        if not index_ids:
            return []
        with self._db.session() as session:
            used = select(AnswerIndex.answer_id).where(col(AnswerIndex.index_id).in_(index_ids))
            unhelpful = select(AnswerFeedback.answer_id).where(AnswerFeedback.helpful == False)  # noqa: E712
            rows = session.exec(
                select(AnswerLog)
                .where(
                    AnswerLog.tenant_id == tenant_id,
                    col(AnswerLog.id).in_(used),
                    or_(AnswerLog.abstained == True, col(AnswerLog.id).in_(unhelpful)),  # noqa: E712
                )
                .order_by(col(AnswerLog.created_at).desc(), col(AnswerLog.id).desc())
                .limit(limit)
            ).all()
            ids = [r.id for r in rows if r.id is not None]
            indexes = _index_ids(session, ids)
            verdicts: dict[int, list[FeedbackRecord]] = {}
            for verdict in session.exec(
                select(AnswerFeedback)
                .where(col(AnswerFeedback.answer_id).in_(ids))
                .order_by(col(AnswerFeedback.id))
            ).all():
                verdicts.setdefault(verdict.answer_id, []).append(_feedback(verdict))
            return [
                ReviewItem(
                    _record(r, indexes.get(r.id or 0, ()), _given(session, r)),
                    tuple(verdicts.get(r.id or 0, [])),
                )
                for r in rows
            ]


FORGOTTEN = "a removed document"


def forget_quotes(session: Session, *, index_id: int, document_ids: Sequence[int] | None = None) -> int:
    """Answers that quoted documents being removed (`document_ids` of `index_id`, or all of
    the index when None) lose their text and those sources' names and links, which
    may quote what is being forgotten; their questions and verdicts stay. How many."""
    gone = None if document_ids is None else {int(d) for d in document_ids}
    quoting = select(AnswerIndex.answer_id).where(AnswerIndex.index_id == index_id, AnswerIndex.cited == True)  # noqa: E712
    changed = 0
    for row in session.exec(select(AnswerLog).where(col(AnswerLog.id).in_(quoting))).all():
        hit = [
            c
            for c in row.cited
            if c.get("index_id") == index_id and (gone is None or c.get("document_id") in gone)
        ]
        if not hit:
            continue
        row.text = None
        row.brief = None  # the glance quotes the same documents
        row.cited = [
            {**c, "name": FORGOTTEN, "url": None, "document_id": None} if c in hit else c for c in row.cited
        ]
        session.add(row)
        changed += 1
    return changed


def _documents(cited: Sequence[dict[str, Any]]) -> dict[int, int]:
    """The documents an answer quoted, each once, with their index."""
    return {
        int(c["document_id"]): int(c["index_id"])
        for c in cited
        if c.get("document_id") is not None and c.get("index_id") is not None
    }


def _quotes_verified(session: Session, documents: dict[int, int]) -> bool:
    """Whether one of these documents is a verified answer (written from a coverage gap):
    decided once, when the answer is logged, so the overview counts it from its index."""
    if not documents:
        return False
    metas = session.exec(select(Document.meta).where(col(Document.id).in_(list(documents)))).all()
    return any(str((meta or {}).get("verified", "")).lower() == "true" for meta in metas)


def _index_ids(session: Session, answer_ids: Sequence[int]) -> dict[int, tuple[int, ...]]:
    found: dict[int, list[int]] = {}
    if answer_ids:
        rows = session.exec(select(AnswerIndex).where(col(AnswerIndex.answer_id).in_(answer_ids))).all()
        for row in rows:
            found.setdefault(row.answer_id, []).append(row.index_id)
    return {answer: tuple(sorted(ids)) for answer, ids in found.items()}


def _given(session: Session, row: AnswerLog) -> tuple[Given, int | None]:
    """Where an answer was given (`given_now`), and its channel."""
    conversation = session.get(Conversation, row.conversation_id) if row.conversation_id else None
    if conversation is None or conversation.kind == ConversationKind.DM or conversation.channel_id is None:
        return Given.DM, None
    channel = session.get(Channel, conversation.channel_id)
    private = None if channel is None else channel.is_private
    return given_now(row.given_in, in_channel=True, channel_is_private=private), conversation.channel_id


def _record(row: AnswerLog, index_ids: tuple[int, ...], given: tuple[Given, int | None]) -> AnswerRecord:
    assert row.id is not None
    return AnswerRecord(
        id=row.id,
        tenant_id=row.tenant_id,
        conversation_id=row.conversation_id,
        user_id=row.user_id,
        question=row.question,
        text=row.text,
        mode=row.mode,
        abstained=row.abstained,
        cited=list(row.cited),
        created_at=aware(row.created_at),
        index_ids=index_ids,
        brief=row.brief,
        thread=row.thread,
        escalated_at=aware(row.escalated_at),
        restricted=tuple(int(i) for i in row.restricted or ()),
        given=given[0],
        channel_id=given[1] if given[0] != Given.DM else None,
    )


def _feedback(row: AnswerFeedback) -> FeedbackRecord:
    return FeedbackRecord(
        answer_id=row.answer_id,
        user_id=row.user_id,
        helpful=row.helpful,
        reason=row.reason,
        comment=row.comment,
        updated_at=aware(row.updated_at),
    )
