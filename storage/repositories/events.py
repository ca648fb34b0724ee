"""Deliveries already handled, so each Slack event is acted on once (also across restarts)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from sqlalchemy.exc import IntegrityError
from sqlmodel import col, delete

from storage.db import Database
from storage.models import ProcessedEvent, utcnow

KEEP_FOR = timedelta(hours=6)


class EventLog:
    def __init__(self, db: Database, keep_for: timedelta = KEEP_FOR) -> None:
        self._db = db
        self._keep_for = keep_for

    def first_sighting(self, keys: Sequence[str]) -> bool:
        """Record `keys`; True only if none of them was seen before (atomic per key, so two
        concurrent deliveries of one event cannot both win)."""
        keys = [k for k in dict.fromkeys(keys) if k]
        try:
            with self._db.session() as session:
                session.add_all(ProcessedEvent(key=key[:255]) for key in keys)
                session.flush()
        except IntegrityError:
            return False
        return True

    def forget_old(self) -> int:
        """Drop records older than the retention window; returns how many."""
        with self._db.session() as session:
            result = session.exec(
                delete(ProcessedEvent).where(col(ProcessedEvent.seen_at) < utcnow() - self._keep_for)
            )
            return int(result.rowcount or 0)
