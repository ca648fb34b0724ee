"""The audit log: administrative actions, appended and read, never changed.

The repository has no update and no delete: entries go only with their workspace's purge
after an uninstall (`storage.repositories.removals`), which writes its own entry after.
Reading pages backwards by id (newest first), so a page is one index range scan however long
the log; an export streams it in pages of the same kind.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement
from sqlmodel import col, select

from storage.db import Database
from storage.models import AuditEntry
from storage.repositories._rows import aware

PAGE = 500


@dataclass(frozen=True)
class AuditRecord:
    id: int
    tenant_id: str
    at: datetime
    actor: str
    actor_name: str
    surface: str
    origin: str
    action: str
    target: str
    details: dict[str, Any]


@dataclass(frozen=True)
class NewAuditEntry:
    tenant_id: str
    actor: str
    surface: str
    action: str
    actor_name: str = ""
    origin: str = ""
    target: str = ""
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class AuditFilter:
    """What to read: every field given narrows it. `before`: entries with a smaller id
    (the next page)."""

    actor: str | None = None
    action: str | None = None
    """An action, or a family of them (`index` finds `index.create` and `index.delete`)."""
    surface: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    before: int | None = None


class AuditLog:
    def __init__(self, db: Database) -> None:
        self._db = db

    def append(self, entry: NewAuditEntry) -> AuditRecord:
        row = AuditEntry(
            tenant_id=entry.tenant_id,
            actor=entry.actor[:80],
            actor_name=entry.actor_name[:255],
            surface=entry.surface[:16],
            origin=entry.origin[:255],
            action=entry.action[:48],
            target=entry.target[:512],
            details=dict(entry.details),
        )
        with self._db.session() as session:
            session.add(row)
            session.flush()
            return _record(row)

    def page(self, tenant_id: str, wanted: AuditFilter, *, limit: int = 100) -> list[AuditRecord]:
        """Entries of the workspace that match, newest first."""
        query = select(AuditEntry).where(*_conditions(tenant_id, wanted))
        with self._db.session() as session:
            rows = session.exec(query.order_by(col(AuditEntry.id).desc()).limit(limit)).all()
            return [_record(r) for r in rows]

    def stream(self, tenant_id: str, wanted: AuditFilter) -> Iterator[AuditRecord]:
        """Every matching entry, newest first, read a page at a time."""
        before = wanted.before
        while True:
            page = self.page(tenant_id, _with_before(wanted, before), limit=PAGE)
            yield from page
            if len(page) < PAGE:
                return
            before = page[-1].id

    def actions(self, tenant_id: str) -> list[str]:
        """The actions the workspace's log holds (for the console's filter)."""
        with self._db.session() as session:
            found = session.exec(
                select(AuditEntry.action).where(AuditEntry.tenant_id == tenant_id).distinct()
            ).all()
            return sorted(found)


def _with_before(wanted: AuditFilter, before: int | None) -> AuditFilter:
    return AuditFilter(wanted.actor, wanted.action, wanted.surface, wanted.since, wanted.until, before)


def _conditions(tenant_id: str, wanted: AuditFilter) -> list[ColumnElement[bool]]:
    found: list[ColumnElement[bool]] = [col(AuditEntry.tenant_id) == tenant_id]
    if wanted.actor:
        found.append(col(AuditEntry.actor) == wanted.actor)
    if wanted.action:
        family = wanted.action.rstrip(".")
        found.append(
            (col(AuditEntry.action) == family)
            | col(AuditEntry.action).startswith(family + ".", autoescape=True)
        )
    if wanted.surface:
        found.append(col(AuditEntry.surface) == wanted.surface)
    if wanted.since is not None:
        found.append(col(AuditEntry.at) >= wanted.since)
    if wanted.until is not None:
        found.append(col(AuditEntry.at) < wanted.until)
    if wanted.before is not None:
        found.append(col(AuditEntry.id) < wanted.before)
    return found


def _record(row: AuditEntry) -> AuditRecord:
    assert row.id is not None
    return AuditRecord(
        id=row.id,
        tenant_id=row.tenant_id,
        at=aware(row.at),
        actor=row.actor,
        actor_name=row.actor_name,
        surface=row.surface,
        origin=row.origin,
        action=row.action,
        target=row.target,
        details=dict(row.details or {}),
    )
