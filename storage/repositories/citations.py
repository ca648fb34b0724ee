"""Which documents answers quoted: the ready documents of some indexes cited most, and those
never cited (`answer_citation`), for the people who look after those indexes. Part of
`UsageRepository`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import func
from sqlalchemy import select as sa_select
from sqlmodel import col

from storage.db import Database
from storage.models import AnswerCitation, Document
from storage.values import DocumentStatus

TOP = 12


@dataclass(frozen=True)
class Cited:
    document_id: int
    index_id: int
    name: str
    url: str | None
    times: int


class CitationReads:
    """The citation half of `UsageRepository` (which sets `_db`)."""

    _db: Database

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
