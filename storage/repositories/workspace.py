"""What Lore keeps per workspace besides its content: the settings its admins change at run
time (retention), and the coverage gaps the last grouping job found."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlmodel import col, delete, select

from storage.db import Database
from storage.models import CoverageGap, Tenant, WorkspaceSetting, utcnow
from storage.repositories._rows import aware


@dataclass(frozen=True)
class GapRecord:
    rank: int
    answer_ids: tuple[int, ...]
    computed_at: datetime


class WorkspaceStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    def tenants(self) -> list[str]:
        with self._db.session() as session:
            return sorted(session.exec(select(Tenant.id)).all())

    def setting(self, tenant_id: str, name: str) -> dict[str, Any] | None:
        with self._db.session() as session:
            row = session.get(WorkspaceSetting, (tenant_id, name))
            return dict(row.value) if row is not None else None

    def settings(self, name: str) -> dict[str, dict[str, Any]]:
        """Every workspace's value of one setting, by workspace."""
        with self._db.session() as session:
            rows = session.exec(select(WorkspaceSetting).where(WorkspaceSetting.name == name)).all()
            return {r.tenant_id: dict(r.value) for r in rows}

    def put(self, tenant_id: str, name: str, value: dict[str, Any]) -> None:
        with self._db.session() as session:
            row = session.get(WorkspaceSetting, (tenant_id, name)) or WorkspaceSetting(
                tenant_id=tenant_id, name=name
            )
            row.value = dict(value)
            row.updated_at = utcnow()
            session.add(row)

    def replace_gaps(self, tenant_id: str, groups: Sequence[Sequence[int]]) -> None:
        """The groups the job found, biggest first, in place of the last run's."""
        now = utcnow()
        with self._db.session() as session:
            session.exec(delete(CoverageGap).where(col(CoverageGap.tenant_id) == tenant_id))
            for rank, ids in enumerate(groups):
                session.add(
                    CoverageGap(tenant_id=tenant_id, rank=rank, answer_ids=list(ids), computed_at=now)
                )

    def gaps(self, tenant_id: str) -> list[GapRecord]:
        with self._db.session() as session:
            rows = session.exec(
                select(CoverageGap).where(CoverageGap.tenant_id == tenant_id).order_by(col(CoverageGap.rank))
            ).all()
            return [
                GapRecord(r.rank, tuple(int(i) for i in r.answer_ids), aware(r.computed_at)) for r in rows
            ]
