"""When each permission sync (of an attachment) and group sync (of a connection) last ran,
failed, or is running: a claim, so that two processes never run the same one, and which are
due. Part of `SourceAccessRepository`.

The two kinds are kept alike on their rows: `access_*` columns on `doc_source_config`,
`groups_*` on `doc_source` (`_synced_at`, `_error`, `_failed_at`, `_claimed_at`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import or_, update
from sqlmodel import col, select

from storage.db import Database
from storage.models import DocSource, DocSourceConfig, utcnow
from storage.repositories._rows import aware

PERMISSIONS = "access"
GROUPS = "groups"
"""The prefixes of the columns of each kind of sync."""
Table = type[DocSource] | type[DocSourceConfig]


@dataclass(frozen=True)
class SyncState:
    """When a permission (or group) sync of one attachment (or connection) last succeeded,
    and why the last one failed, if it did."""

    synced_at: datetime | None
    error: str | None


class SyncRuns:
    """The sync half of `SourceAccessRepository` (which sets `_db`)."""

    _db: Database

    def claim_permissions(self, config_id: int, *, stale_after: timedelta) -> bool:
        """Take the attachment's permission sync for this process; False when another
        process holds it (and has not gone silent for `stale_after`)."""
        return self._claim(DocSourceConfig, config_id, PERMISSIONS, stale_after)

    def claim_groups(self, source_id: int, *, stale_after: timedelta) -> bool:
        return self._claim(DocSource, source_id, GROUPS, stale_after)

    def record_permissions(self, config_id: int, error: str | None) -> None:
        """A permission sync of the attachment ended (failed with `error`), and is released."""
        self._record(DocSourceConfig, config_id, PERMISSIONS, error)

    def record_groups(self, source_id: int, error: str | None) -> None:
        self._record(DocSource, source_id, GROUPS, error)

    def permissions_state(self, config_id: int) -> SyncState:
        return self._state(DocSourceConfig, config_id, PERMISSIONS)

    def groups_state(self, source_id: int) -> SyncState:
        return self._state(DocSource, source_id, GROUPS)

    def permissions_due(self, kinds: Iterable[str], every: timedelta, retry_after: timedelta) -> list[int]:
        """Attachments of those connector kinds whose permissions were not synced within
        `every` (never synced first); one whose last sync failed, once `retry_after` passed."""
        return self._due(DocSourceConfig, PERMISSIONS, kinds, every, retry_after)

    def groups_due(self, kinds: Iterable[str], every: timedelta, retry_after: timedelta) -> list[int]:
        return self._due(DocSource, GROUPS, kinds, every, retry_after)

    def _claim(self, table: Table, row_id: int, kind: str, stale_after: timedelta) -> bool:
        """One UPDATE that sets the claim only where it is free (or stale): of two processes
        racing for it, the database lets one win."""
        now = utcnow()
        column = f"{kind}_claimed_at"
        claimed = col(getattr(table, column))
        with self._db.session() as session:
            result = session.exec(
                update(table)
                .where(col(table.id) == row_id)
                .where(or_(claimed.is_(None), claimed < now - stale_after))
                .values({column: now})
            )
            return bool(result.rowcount)

    def _record(self, table: Table, row_id: int, kind: str, error: str | None) -> None:
        with self._db.session() as session:
            row = session.get(table, row_id)
            if row is None:
                return
            now = utcnow()
            if error is None:
                setattr(row, f"{kind}_synced_at", now)
            setattr(row, f"{kind}_error", error)
            setattr(row, f"{kind}_failed_at", now if error else None)
            setattr(row, f"{kind}_claimed_at", None)
            session.add(row)

    def _state(self, table: Table, row_id: int, kind: str) -> SyncState:
        with self._db.session() as session:
            row = session.get(table, row_id)
            if row is None:
                return SyncState(None, None)
            return SyncState(aware(getattr(row, f"{kind}_synced_at")), getattr(row, f"{kind}_error"))

    def _due(
        self, table: Table, kind: str, kinds: Iterable[str], every: timedelta, retry_after: timedelta
    ) -> list[int]:
        wanted = list(kinds)
        if not wanted:
            return []
        at, failure = col(getattr(table, f"{kind}_synced_at")), col(getattr(table, f"{kind}_failed_at"))
        now = utcnow()
        with self._db.session() as session:
            query = select(col(table.id))
            if table is DocSourceConfig:
                query = query.join(DocSource, col(DocSource.id) == DocSourceConfig.source_id)
            query = query.where(
                col(DocSource.kind).in_(wanted),
                or_(at.is_(None), at < now - every),
                or_(failure.is_(None), failure < now - retry_after),
            )
            return [int(i) for i in session.exec(query.order_by(at.is_not(None), at)).all() if i is not None]
