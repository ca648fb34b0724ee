"""Usage, counted in SQL from the answers Lore logged: questions per day, per place and per
index, how they ended, what people thought of them, how long they took, who asked.

Every figure is an aggregate over one indexed range of `answer_log` (its workspace and
time), so the overview of a hundred thousand questions costs a few scans, not a read of
each row into Python (`bench/console.py` measures it). Names of places and indexes are not
decided here: the caller shows only those its reader may see.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from sqlalchemy import ColumnElement, Connection, Integer, and_, cast, func
from sqlalchemy import select as sa_select
from sqlmodel import col

from storage.db import Database
from storage.models import (
    AnswerCitation,
    AnswerFeedback,
    AnswerIndex,
    AnswerLog,
    Channel,
    Conversation,
    Document,
)
from storage.values import ConversationKind, DocumentStatus

TOP = 12


@dataclass(frozen=True)
class Day:
    day: date
    questions: int
    abstained: int


@dataclass(frozen=True)
class PlaceCount:
    """Questions asked in one place: a channel (by id, name and privacy), or DMs (all of them)."""

    channel_id: int | None
    name: str
    is_private: bool
    questions: int


@dataclass(frozen=True)
class Usage:
    questions: int
    abstained: int
    helpful: int
    unhelpful: int
    askers: int
    latency_p50_ms: int | None
    latency_p95_ms: int | None
    days: tuple[Day, ...]
    places: tuple[PlaceCount, ...]
    indexes: tuple[tuple[int, int], ...]
    """(index id, questions that searched it), most first."""

    @property
    def answered(self) -> int:
        return self.questions - self.abstained


@dataclass(frozen=True)
class Cited:
    document_id: int
    index_id: int
    name: str
    url: str | None
    times: int


class UsageRepository:
    def __init__(self, db: Database) -> None:
        self._db = db

    def usage(self, tenant_id: str, since: datetime, until: datetime) -> Usage:
        window = _window(tenant_id, since, until)
        with self._db.engine.connect() as connection:
            totals = connection.execute(
                sa_select(
                    func.count(),
                    func.coalesce(func.sum(_int(col(AnswerLog.abstained))), 0),
                    func.count(func.distinct(col(AnswerLog.user_id))),
                ).where(window)
            ).one()
            days = connection.execute(
                sa_select(
                    func.date(col(AnswerLog.created_at)),
                    func.count(),
                    func.coalesce(func.sum(_int(col(AnswerLog.abstained))), 0),
                )
                .where(window)
                .group_by(func.date(col(AnswerLog.created_at)))
                .order_by(func.date(col(AnswerLog.created_at)))
            ).all()
            verdicts = connection.execute(
                sa_select(col(AnswerFeedback.helpful), func.count())
                .join(AnswerLog, col(AnswerLog.id) == col(AnswerFeedback.answer_id))
                .where(window)
                .group_by(col(AnswerFeedback.helpful))
            ).all()
            latencies = connection.execute(
                sa_select(col(AnswerLog.latency_ms))
                .where(window, col(AnswerLog.latency_ms).is_not(None))
                .order_by(col(AnswerLog.latency_ms))
            ).scalars()
            ordered = [int(v) for v in latencies if v is not None]
            places = _places(connection, window)
            indexes = connection.execute(
                sa_select(col(AnswerIndex.index_id), func.count())
                .join(AnswerLog, col(AnswerLog.id) == col(AnswerIndex.answer_id))
                .where(window)
                .group_by(col(AnswerIndex.index_id))
                .order_by(func.count().desc())
            ).all()
        judged = {bool(helpful): int(n) for helpful, n in verdicts}
        return Usage(
            questions=int(totals[0]),
            abstained=int(totals[1]),
            helpful=judged.get(True, 0),
            unhelpful=judged.get(False, 0),
            askers=int(totals[2]),
            latency_p50_ms=_percentile(ordered, 0.50),
            latency_p95_ms=_percentile(ordered, 0.95),
            days=tuple(Day(_day(d), int(n), int(a)) for d, n, a in days),
            places=places,
            indexes=tuple((int(i), int(n)) for i, n in indexes),
        )

    def cited(self, index_ids: Sequence[int], *, limit: int = TOP) -> list[Cited]:
        """The ready documents of these indexes that answers quoted most, most first."""
        if not index_ids:
            return []
        times = func.count(col(AnswerCitation.answer_id))
        with self._db.engine.connect() as connection:
            rows = connection.execute(
                sa_select(
                    col(Document.id), col(Document.index_id), col(Document.name), col(Document.url), times
                )
                .join(AnswerCitation, col(AnswerCitation.document_id) == col(Document.id))
                .where(col(Document.index_id).in_(index_ids), col(Document.status) == DocumentStatus.READY)
                .group_by(col(Document.id), col(Document.index_id), col(Document.name), col(Document.url))
                .order_by(times.desc(), col(Document.id))
                .limit(limit)
            ).all()
        return [Cited(int(d or 0), int(i), str(n), u, int(t)) for d, i, n, u, t in rows]

    def never_cited(self, index_ids: Sequence[int], *, limit: int = TOP) -> list[Cited]:
        """Ready documents of these indexes no logged answer ever quoted, oldest first."""
        if not index_ids:
            return []
        quoted = sa_select(col(AnswerCitation.document_id))
        with self._db.engine.connect() as connection:
            rows = connection.execute(
                sa_select(col(Document.id), col(Document.index_id), col(Document.name), col(Document.url))
                .where(
                    col(Document.index_id).in_(index_ids),
                    col(Document.status) == DocumentStatus.READY,
                    col(Document.id).not_in(quoted),
                )
                .order_by(col(Document.time_added), col(Document.id))
                .limit(limit)
            ).all()
        return [Cited(int(d or 0), int(i), str(n), u, 0) for d, i, n, u in rows]


def _places(connection: Connection, window: ColumnElement[bool]) -> tuple[PlaceCount, ...]:
    rows = connection.execute(
        sa_select(
            col(Conversation.kind),
            col(Conversation.channel_id),
            col(Channel.name),
            col(Channel.is_private),
            func.count(),
        )
        .select_from(AnswerLog)
        .join(Conversation, col(Conversation.id) == col(AnswerLog.conversation_id))
        .outerjoin(Channel, col(Channel.id) == col(Conversation.channel_id))
        .where(window)
        .group_by(
            col(Conversation.kind), col(Conversation.channel_id), col(Channel.name), col(Channel.is_private)
        )
        .order_by(func.count().desc())
    ).all()
    direct = sum(int(row[4]) for row in rows if row[0] == ConversationKind.DM)
    found = [
        PlaceCount(channel_id, name or "", bool(private) if private is not None else True, int(n))
        for kind, channel_id, name, private, n in rows
        if kind != ConversationKind.DM
    ]
    if direct:
        found.append(PlaceCount(None, "", True, direct))
    return tuple(sorted(found, key=lambda p: -p.questions))


def _window(tenant_id: str, since: datetime, until: datetime) -> ColumnElement[bool]:
    return and_(
        col(AnswerLog.tenant_id) == tenant_id,
        col(AnswerLog.created_at) >= since,
        col(AnswerLog.created_at) < until,
    )


def _int(column: Any) -> ColumnElement[int]:
    return cast(column, Integer)


def _percentile(ordered: Sequence[int], q: float) -> int | None:
    """The nearest-rank percentile of sorted values (None for none)."""
    if not ordered:
        return None
    rank = max(1, -(-len(ordered) * q // 1))
    return ordered[int(rank) - 1]


def _day(value: object) -> date:
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    return date.fromisoformat(str(value)[:10])
