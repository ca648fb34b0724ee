"""Questions asked, read back in bulk: the query history an admin exports, the questions the
coverage-gap job groups, and those a group shows.

Each row says where its answer was given (a DM, a private or a public channel: the stricter
of what was recorded then and what its conversation is now, `storage.access.given_now`),
because who may read its text depends on it; the caller decides that with the feedback
review's rule (`storage.access.sight`), never this module.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar

from sqlmodel import Session, col, or_, select

from storage.access import AnswerFacts, Given, given_now
from storage.db import Database
from storage.models import AnswerFeedback, AnswerIndex, AnswerLog, Channel, Conversation, QuestionVector, User
from storage.repositories._rows import aware
from storage.values import ConversationKind

PAGE = 1000
T = TypeVar("T", Conversation, Channel, User)


@dataclass(frozen=True)
class Asked:
    """One question and how it went, with what deciding who may read it needs."""

    answer_id: int
    tenant_id: str
    at: datetime
    question: str
    answer: str | None
    abstained: bool
    latency_ms: int | None
    asker_id: int | None
    asker: str
    """The asker's Slack user id (or shell name); empty when unknown."""
    conversation_kind: ConversationKind | None
    channel_id: int | None
    channel_name: str
    channel_is_private: bool
    index_ids: tuple[int, ...]
    """The indexes it searched and quoted."""
    helpful: int
    unhelpful: int
    comments: tuple[str, ...]
    given: Given = Given.DM
    """Where it was given (`given_now`)."""

    @property
    def facts(self) -> AnswerFacts:
        """What the feedback review's rule needs to know about it."""
        channel = self.channel_id if self.given != Given.DM else None
        return AnswerFacts(self.tenant_id, self.given, self.asker_id, channel)


class AnswerHistory:
    def __init__(self, db: Database) -> None:
        self._db = db

    def between(self, tenant_id: str, since: datetime, until: datetime) -> Iterator[Asked]:
        """Every question of the workspace in the window, oldest first, a page at a time."""
        after = 0
        while True:
            with self._db.session() as session:
                rows = session.exec(
                    select(AnswerLog)
                    .where(
                        AnswerLog.tenant_id == tenant_id,
                        col(AnswerLog.created_at) >= since,
                        col(AnswerLog.created_at) < until,
                        col(AnswerLog.id) > after,
                    )
                    .order_by(col(AnswerLog.id))
                    .limit(PAGE)
                ).all()
                found = _asked(session, rows)
            yield from found
            if len(rows) < PAGE:
                return
            after = found[-1].answer_id

    def unresolved(self, tenant_id: str, since: datetime, *, limit: int) -> list[tuple[int, str]]:
        """(answer id, question) of the newest `limit` questions since then that Lore could
        not answer or that someone found unhelpful."""
        unhelpful = select(AnswerFeedback.answer_id).where(AnswerFeedback.helpful == False)  # noqa: E712
        with self._db.session() as session:
            rows = session.exec(
                select(AnswerLog.id, AnswerLog.question)
                .where(
                    AnswerLog.tenant_id == tenant_id,
                    col(AnswerLog.created_at) >= since,
                    or_(AnswerLog.abstained == True, col(AnswerLog.id).in_(unhelpful)),  # noqa: E712
                )
                .order_by(col(AnswerLog.id).desc())
                .limit(limit)
            ).all()
            return [(int(i), str(q)) for i, q in rows if i is not None]

    def some(self, tenant_id: str, answer_ids: Sequence[int]) -> list[Asked]:
        """These questions of the workspace (those that still exist), in the order given."""
        if not answer_ids:
            return []
        with self._db.session() as session:
            rows = session.exec(
                select(AnswerLog).where(AnswerLog.tenant_id == tenant_id, col(AnswerLog.id).in_(answer_ids))
            ).all()
            found = {a.answer_id: a for a in _asked(session, rows)}
        return [found[i] for i in answer_ids if i in found]

    def vectors(self, answer_ids: Sequence[int], model: str) -> dict[int, bytes]:
        """The kept embeddings of these questions by that model (float32 bytes)."""
        found: dict[int, bytes] = {}
        with self._db.session() as session:
            for start in range(0, len(answer_ids), PAGE):
                chunk = list(answer_ids[start : start + PAGE])
                rows = session.exec(
                    select(QuestionVector).where(
                        col(QuestionVector.answer_id).in_(chunk), QuestionVector.model == model
                    )
                ).all()
                found.update({r.answer_id: r.vector for r in rows})
        return found

    def keep_vectors(self, model: str, vectors: dict[int, bytes]) -> None:
        """Keep embeddings of questions (replacing another model's)."""
        with self._db.session() as session:
            for answer_id, vector in vectors.items():
                session.merge(QuestionVector(answer_id=answer_id, model=model, vector=vector))


def _asked(session: Session, rows: Sequence[AnswerLog]) -> list[Asked]:
    ids = [r.id for r in rows if r.id is not None]
    if not ids:
        return []
    indexes = _indexes_searched(session, ids)
    verdicts = _verdicts(session, ids)
    conversations = _by_id(session, Conversation, {r.conversation_id for r in rows})
    channels = _by_id(session, Channel, {c.channel_id for c in conversations.values()})
    users = _by_id(session, User, {r.user_id for r in rows})
    found = []
    for row in rows:
        assert row.id is not None
        conversation = conversations.get(row.conversation_id or 0)
        channel = channels.get(conversation.channel_id or 0) if conversation else None
        quoted = {int(c["index_id"]) for c in row.cited if c.get("index_id") is not None}
        judged = verdicts.get(row.id, [])
        user = users.get(row.user_id or 0)
        found.append(
            Asked(
                answer_id=row.id,
                tenant_id=row.tenant_id,
                at=aware(row.created_at),
                question=row.question,
                answer=row.text,
                abstained=row.abstained,
                latency_ms=row.latency_ms,
                asker_id=row.user_id,
                asker=user.external_id if user else "",
                conversation_kind=conversation.kind if conversation else None,
                channel_id=channel.id if channel else None,
                channel_name=channel.name if channel else "",
                channel_is_private=channel.is_private if channel else True,
                index_ids=tuple(sorted(indexes.get(row.id, set()) | quoted)),
                helpful=sum(1 for v in judged if v.helpful),
                unhelpful=sum(1 for v in judged if not v.helpful),
                comments=tuple(v.comment for v in judged if v.comment),
                given=given_now(
                    row.given_in,
                    in_channel=conversation is not None
                    and conversation.kind != ConversationKind.DM
                    and channel is not None,
                    channel_is_private=channel.is_private if channel else None,
                ),
            )
        )
    return found


def _indexes_searched(session: Session, answer_ids: Sequence[int]) -> dict[int, set[int]]:
    """The indexes each answer searched."""
    indexes: dict[int, set[int]] = {}
    for answer_id, index_id in session.exec(
        select(AnswerIndex.answer_id, AnswerIndex.index_id).where(col(AnswerIndex.answer_id).in_(answer_ids))
    ).all():
        indexes.setdefault(answer_id, set()).add(index_id)
    return indexes


def _verdicts(session: Session, answer_ids: Sequence[int]) -> dict[int, list[AnswerFeedback]]:
    """People's verdicts on each answer, in the order they were given."""
    verdicts: dict[int, list[AnswerFeedback]] = {}
    for verdict in session.exec(
        select(AnswerFeedback)
        .where(col(AnswerFeedback.answer_id).in_(answer_ids))
        .order_by(col(AnswerFeedback.id))
    ).all():
        verdicts.setdefault(verdict.answer_id, []).append(verdict)
    return verdicts


def _by_id(session: Session, table: type[T], ids: set[int | None]) -> dict[int, T]:
    wanted = [i for i in ids if i is not None]
    if not wanted:
        return {}
    rows = session.exec(select(table).where(col(table.id).in_(wanted))).all()
    return {r.id: r for r in rows if r.id is not None}
