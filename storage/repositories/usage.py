"""Usage, counted in SQL from the answers Lore logged: questions per day, per place and per
index, how they ended, what people thought of them, how long they took, who asked.

Every figure is an aggregate over one indexed range of `answer_log` (its workspace and
time), so the overview of a hundred thousand questions costs a few scans, not a read of
each row into Python (`bench/console.py` measures it). Names of places and indexes are not
decided here: the caller shows only those its reader may see.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from sqlalchemy import ColumnElement, Connection, Integer, Select, and_, cast, func
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
LATENCY_STEP_MS = 10
"""Latencies are counted in SQL in buckets this wide; a percentile is its bucket's start."""


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
    verified: int = 0
    """Answered questions whose answer quoted a verified answer (a document written from a
    coverage gap), as marked when the answer was logged."""

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
        """The figures of the workspace's questions asked in [since, until). Its five scans
        run side by side, each on a connection of its own (readers do not block each other)."""
        window = _window(tenant_id, since, until)
        day = _date(self._db.dialect)
        bucket = col(AnswerLog.latency_ms) // LATENCY_STEP_MS
        queries = {
            "askers": sa_select(func.count(func.distinct(col(AnswerLog.user_id)))).where(window),
            "cells": sa_select(  # one scan: questions by day and place
                day,
                col(AnswerLog.conversation_id),
                func.count(),
                func.coalesce(func.sum(_int(col(AnswerLog.abstained))), 0),
                func.coalesce(func.sum(_int(col(AnswerLog.verified))), 0),
            )
            .where(window)
            .group_by(day, col(AnswerLog.conversation_id)),
            "verdicts": sa_select(col(AnswerFeedback.helpful), func.count())
            .join(AnswerLog, col(AnswerLog.id) == col(AnswerFeedback.answer_id))
            .where(window)
            .group_by(col(AnswerFeedback.helpful)),
            "latencies": sa_select(bucket, func.count())
            .where(window, col(AnswerLog.latency_ms).is_not(None))
            .group_by(bucket)
            .order_by(bucket),
            "indexes": sa_select(col(AnswerIndex.index_id), func.count())
            .join(AnswerLog, col(AnswerLog.id) == col(AnswerIndex.answer_id))
            .where(window)
            .group_by(col(AnswerIndex.index_id))
            .order_by(func.count().desc()),
        }
        with ThreadPoolExecutor(max_workers=len(queries)) as pool:
            running = {name: pool.submit(self._rows, query) for name, query in queries.items()}
            found = {name: future.result() for name, future in running.items()}
        by_day: dict[date, list[int]] = {}
        by_place: dict[int | None, int] = {}
        verified = 0
        for when, conversation, count, abstained, quoted in found["cells"]:
            verified += int(quoted)
            totals = by_day.setdefault(_day(when), [0, 0])
            totals[0] += int(count)
            totals[1] += int(abstained)
            by_place[conversation] = by_place.get(conversation, 0) + int(count)
        with self._db.engine.connect() as connection:
            places = _places(connection, by_place)
        judged = {bool(helpful): int(n) for helpful, n in found["verdicts"]}
        histogram = [(int(b or 0), int(n)) for b, n in found["latencies"]]
        per_day = tuple(Day(d, n, a) for d, (n, a) in sorted(by_day.items()))
        return Usage(
            questions=sum(d.questions for d in per_day),
            abstained=sum(d.abstained for d in per_day),
            helpful=judged.get(True, 0),
            unhelpful=judged.get(False, 0),
            askers=int(found["askers"][0][0]),
            latency_p50_ms=_percentile(histogram, 0.50),
            latency_p95_ms=_percentile(histogram, 0.95),
            days=per_day,
            places=places,
            indexes=tuple((int(i), int(n)) for i, n in found["indexes"]),
            verified=verified,
        )

    def _rows(self, query: Select[Any]) -> list[Any]:
        with self._db.engine.connect() as connection:
            return list(connection.execute(query).all())

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


def _places(connection: Connection, counts: dict[int | None, int]) -> tuple[PlaceCount, ...]:
    """Questions per place: channels by id, name and privacy; DMs (and questions with no
    conversation) together."""
    ids = [c for c in counts if c is not None]
    rows = connection.execute(
        sa_select(
            col(Conversation.id),
            col(Conversation.kind),
            col(Channel.id),
            col(Channel.name),
            col(Channel.is_private),
        )
        .select_from(Conversation)
        .outerjoin(Channel, col(Channel.id) == col(Conversation.channel_id))
        .where(col(Conversation.id).in_(ids))
    ).all()
    found: list[PlaceCount] = []
    direct = counts.get(None, 0)
    for conversation, kind, channel, name, private in rows:
        if kind == ConversationKind.DM or channel is None:
            direct += counts[conversation]
        else:
            found.append(PlaceCount(channel, name or "", bool(private), counts[conversation]))
    if direct:
        found.append(PlaceCount(None, "", True, direct))
    return tuple(sorted(found, key=lambda p: -p.questions))


def _window(tenant_id: str, since: datetime, until: datetime) -> ColumnElement[bool]:
    return and_(
        col(AnswerLog.tenant_id) == tenant_id,
        col(AnswerLog.created_at) >= since,
        col(AnswerLog.created_at) < until,
    )


def _date(dialect: str) -> ColumnElement[Any]:
    """The day of an answer: SQLite keeps timestamps as UTC text, whose first ten characters
    are the day (cheaper than parsing them with date()); PostgreSQL's date()."""
    if dialect == "sqlite":
        return func.substr(col(AnswerLog.created_at), 1, 10)
    return func.date(col(AnswerLog.created_at))


def _int(column: Any) -> ColumnElement[int]:
    return cast(column, Integer)


def _percentile(histogram: Sequence[tuple[int, int]], q: float) -> int | None:
    """The nearest-rank percentile of latencies counted in `LATENCY_STEP_MS` buckets
    (bucket, count), ascending: the start of the bucket it falls in, so within
    `LATENCY_STEP_MS` below the exact figure (None for none)."""
    total = sum(n for _, n in histogram)
    if not total:
        return None
    rank, seen = max(1, -(-total * q // 1)), 0
    for bucket, count in histogram:
        seen += count
        if seen >= rank:
            return bucket * LATENCY_STEP_MS
    return histogram[-1][0] * LATENCY_STEP_MS


def _day(value: object) -> date:
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    return date.fromisoformat(str(value)[:10])
