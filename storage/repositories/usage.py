"""Usage, counted in SQL from the answers Lore logged: questions per day, per place and per
index, how they ended, what people thought of them, how long they took, who asked.

Every figure is an aggregate over one indexed range of `answer_log` (its workspace and
time), grouped by day; a whole past day's figures are kept (`usage_day`) the first time a
window needs them, so an overview of a hundred thousand questions reads thirty small rows
and counts only today's questions and the rest of its first day (`bench/console.py`
measures it). The writers that change a past day's figures drop its row (`stale_days`). Names of places and indexes are not
decided here: the caller shows only those its reader may see.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, Connection, Delete, Integer, Select, and_, cast, delete, func
from sqlalchemy import select as sa_select
from sqlmodel import col, select

from storage.db import Database
from storage.models import (
    AnswerFeedback,
    AnswerIndex,
    AnswerLog,
    Channel,
    Conversation,
    UsageDay,
)
from storage.repositories._rows import aware, insert_ignoring_conflict
from storage.repositories.citations import CitationReads
from storage.values import ConversationKind, utcnow

LATENCY_STEP_MS = 10
"""Latencies are counted in SQL in buckets this wide; a percentile is its bucket's start."""


@dataclass(frozen=True)
class Day:
    """One day's questions: answered from the documents, from a verified answer, or not at
    all (`abstained`: Lore had nothing to say, not even a verified answer); any of them may
    have been escalated to experts too."""

    day: date
    questions: int
    abstained: int
    verified: int = 0
    """Answered from a verified answer."""
    escalated: int = 0
    """Taken to the experts ("Ask an expert"), answered or not."""

    @property
    def answered(self) -> int:
        """Answered from the documents (not from a verified answer)."""
        return self.questions - self.abstained - self.verified


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
    coverage gap, or a verified answer of a help channel), as marked when it was logged."""
    escalated: int = 0
    """Questions someone took to the experts ("Ask an expert")."""

    @property
    def answered(self) -> int:
        """Answered, from the documents or from a verified answer."""
        return self.questions - self.abstained


@dataclass
class Figures:
    """The countable part of some questions' usage: what adds up across days (a day's
    figures are kept in `usage_day` in this shape, `as_json`)."""

    cells: dict[int | None, list[int]] = field(default_factory=dict)
    """conversation (None: none) -> [questions, abstained, verified, escalated]"""
    latencies: dict[int, int] = field(default_factory=dict)
    indexes: dict[int, int] = field(default_factory=dict)
    verdicts: dict[bool, int] = field(default_factory=dict)
    askers: set[int] = field(default_factory=set)

    def add(self, other: Figures) -> None:
        for conversation, counts in other.cells.items():
            mine = self.cells.setdefault(conversation, [0, 0, 0, 0])
            for n, count in enumerate(counts):
                mine[n] += count
        for bucket, count in other.latencies.items():
            self.latencies[bucket] = self.latencies.get(bucket, 0) + count
        for index, count in other.indexes.items():
            self.indexes[index] = self.indexes.get(index, 0) + count
        for helpful, count in other.verdicts.items():
            self.verdicts[helpful] = self.verdicts.get(helpful, 0) + count
        self.askers |= other.askers

    def totals(self) -> list[int]:
        """[questions, abstained, verified, escalated]"""
        return [sum(c[n] for c in self.cells.values()) for n in range(4)]

    def as_json(self) -> dict[str, Any]:
        return {
            "cells": [[c, *counts] for c, counts in self.cells.items()],
            "latencies": [[b, n] for b, n in self.latencies.items()],
            "indexes": [[i, n] for i, n in self.indexes.items()],
            "verdicts": [[h, n] for h, n in self.verdicts.items()],
            "askers": sorted(self.askers),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Figures:
        return cls(
            cells={c: [int(n) for n in counts] for c, *counts in data.get("cells", [])},
            latencies={int(b): int(n) for b, n in data.get("latencies", [])},
            indexes={int(i): int(n) for i, n in data.get("indexes", [])},
            verdicts={bool(h): int(n) for h, n in data.get("verdicts", [])},
            askers={int(u) for u in data.get("askers", [])},
        )


class UsageRepository(CitationReads):
    """Usage figures of a workspace's questions; the documents its answers cited (`CitationReads`)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def usage(self, tenant_id: str, since: datetime, until: datetime) -> Usage:
        """The figures of the workspace's questions asked in [since, until). Whole past days
        are read from `usage_day` (computed, all missing days in one pass, the first time a
        window needs them); only the window's ragged ends (the rest of its first day, today
        so far) are counted from the questions themselves."""
        first_whole = since.date() if since == _midnight(since.date()) else since.date() + timedelta(days=1)
        today = min(until, utcnow()).date()  # today's figures are still growing: never kept
        whole = [first_whole + timedelta(days=n) for n in range(max(0, (today - first_whole).days))]
        by_day = self._whole_days(tenant_id, whole)
        edges = [(since, _midnight(first_whole)), (_midnight(today), until)] if whole else [(since, until)]
        for start, end in edges:
            if start < end:
                for d, found in self._count(tenant_id, start, end).items():
                    by_day.setdefault(d, Figures()).add(found)
        return self._summary(by_day)

    def _whole_days(self, tenant_id: str, whole: Sequence[date]) -> dict[date, Figures]:
        """The figures of whole past days: those kept, and the missing ones counted (in one
        pass) and kept."""
        by_day = self._kept(tenant_id, whole)
        missing = [d for d in whole if d not in by_day]
        if missing:
            computed = self._count(
                tenant_id, _midnight(missing[0]), _midnight(missing[-1] + timedelta(days=1))
            )
            fresh = {d: computed.get(d, Figures()) for d in missing}
            self._keep(tenant_id, fresh)
            by_day.update(fresh)
        return by_day

    def _summary(self, by_day: dict[date, Figures]) -> Usage:
        """The window's figures from its days'."""
        total = Figures()
        days = []
        for d in sorted(by_day):
            figures = by_day[d]
            total.add(figures)
            questions, abstained, verified, escalated = figures.totals()
            if questions:
                days.append(Day(d, questions, abstained, verified, escalated))
        with self._db.engine.connect() as connection:
            places = _places(connection, {c: counts[0] for c, counts in total.cells.items()})
        histogram = sorted(total.latencies.items())
        questions, abstained, verified, escalated = total.totals()
        return Usage(
            questions=questions,
            abstained=abstained,
            helpful=total.verdicts.get(True, 0),
            unhelpful=total.verdicts.get(False, 0),
            askers=len(total.askers),
            latency_p50_ms=_percentile(histogram, 0.50),
            latency_p95_ms=_percentile(histogram, 0.95),
            days=tuple(days),
            places=places,
            indexes=tuple(sorted(total.indexes.items(), key=lambda item: (-item[1], item[0]))),
            verified=verified,
            escalated=escalated,
        )

    def _count(self, tenant_id: str, since: datetime, until: datetime) -> dict[date, Figures]:
        """Count the questions asked in [since, until), per day: five grouped scans of the
        usage index (and the verdicts and indexes joined to it), side by side, each on a
        connection of its own (readers do not block each other)."""
        queries = _scans(_window(tenant_id, since, until), _date(self._db.dialect))
        with ThreadPoolExecutor(max_workers=len(queries)) as pool:
            running = {name: pool.submit(self._rows, query) for name, query in queries.items()}
            found = {name: future.result() for name, future in running.items()}
        return _tally(found)

    def _kept(self, tenant_id: str, days: Sequence[date]) -> dict[date, Figures]:
        if not days:
            return {}
        with self._db.session() as session:
            rows = session.exec(
                select(UsageDay).where(
                    col(UsageDay.tenant_id) == tenant_id,
                    col(UsageDay.day) >= days[0].isoformat(),
                    col(UsageDay.day) <= days[-1].isoformat(),
                )
            ).all()
            return {date.fromisoformat(row.day): Figures.from_json(row.figures) for row in rows}

    def _keep(self, tenant_id: str, days: dict[date, Figures]) -> None:
        """Keep whole past days' figures (another process keeping the same day first wins:
        both counted the same questions)."""
        now = utcnow()
        with self._db.session() as session:
            for d, figures in days.items():
                insert_ignoring_conflict(
                    session,
                    UsageDay,
                    {
                        "tenant_id": tenant_id,
                        "day": d.isoformat(),
                        "figures": figures.as_json(),
                        "computed_at": now,
                    },
                )

    def _rows(self, query: Select[Any]) -> list[Any]:
        with self._db.engine.connect() as connection:
            return list(connection.execute(query).all())


def _scans(window: ColumnElement[bool], day: ColumnElement[Any]) -> dict[str, Select[Any]]:
    """The grouped scans `_count` runs, by the part of `Figures` each fills."""
    bucket = col(AnswerLog.latency_ms) // LATENCY_STEP_MS
    return {
        "askers": sa_select(day, col(AnswerLog.user_id))
        .where(window, col(AnswerLog.user_id).is_not(None))
        .group_by(day, col(AnswerLog.user_id)),
        "cells": sa_select(
            day,
            col(AnswerLog.conversation_id),
            func.count(),
            func.coalesce(func.sum(_int(and_(col(AnswerLog.abstained), ~col(AnswerLog.verified)))), 0),
            func.coalesce(func.sum(_int(col(AnswerLog.verified))), 0),
            func.count(col(AnswerLog.escalated_at)),
        )
        .where(window)
        .group_by(day, col(AnswerLog.conversation_id)),
        "verdicts": sa_select(day, col(AnswerFeedback.helpful), func.count())
        .join(AnswerLog, col(AnswerLog.id) == col(AnswerFeedback.answer_id))
        .where(window)
        .group_by(day, col(AnswerFeedback.helpful)),
        "latencies": sa_select(day, bucket, func.count())
        .where(window, col(AnswerLog.latency_ms).is_not(None))
        .group_by(day, bucket),
        "indexes": sa_select(day, col(AnswerIndex.index_id), func.count())
        .join(AnswerLog, col(AnswerLog.id) == col(AnswerIndex.answer_id))
        .where(window)
        .group_by(day, col(AnswerIndex.index_id)),
    }


def _tally(found: dict[str, list[Any]]) -> dict[date, Figures]:
    """Each day's figures from the rows of the scans."""
    days: dict[date, Figures] = {}

    def of(value: object) -> Figures:
        return days.setdefault(_day(value), Figures())

    for when, user in found["askers"]:
        of(when).askers.add(int(user))
    for when, conversation, count, abstained, quoted, escalated in found["cells"]:
        key = int(conversation) if conversation is not None else None
        of(when).cells[key] = [int(count), int(abstained), int(quoted), int(escalated)]
    for when, helpful, count in found["verdicts"]:
        of(when).verdicts[bool(helpful)] = int(count)
    for when, b, count in found["latencies"]:
        of(when).latencies[int(b or 0)] = int(count)
    for when, index, count in found["indexes"]:
        of(when).indexes[int(index)] = int(count)
    return days


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


def stale_days(tenant_id: str, *, on: datetime | None = None, up_to: date | None = None) -> Delete:
    """The statement dropping the kept figures of past days whose questions changed: the
    day of `on` (a verdict, an escalation), the days up to `up_to` (retention), or every
    day (neither). The writer runs it in the transaction of its change."""
    statement = delete(UsageDay).where(col(UsageDay.tenant_id) == tenant_id)
    if on is not None:
        return statement.where(col(UsageDay.day) == aware(on).date().isoformat())
    if up_to is not None:
        return statement.where(col(UsageDay.day) <= up_to.isoformat())
    return statement


def _midnight(day: date) -> datetime:
    return datetime(day.year, day.month, day.day, tzinfo=UTC)


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
