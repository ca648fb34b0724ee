"""How long Lore keeps people's questions (forgetting a person is `bot.app.forgetting`).

Retention: a workspace's questions, with the answers to them, the verdicts and comments on
them, the documents they cited and their embeddings, are removed once older than its
retention (`LORE_RETENTION_DAYS`, or what its admins set in the console; 0 keeps them).
Each pass reports what it removed, per table, in one log line and one audit entry; the
retention job runs hourly in whichever process runs the scheduler.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from bot.app.audit import AuditAction
from storage.repositories.retention import Removed, Retention
from storage.repositories.workspace import WorkspaceStore
from storage.values import utcnow

if TYPE_CHECKING:
    from bot.app.services import Services

log = logging.getLogger(__name__)
RETENTION = "retention"
"""The workspace setting that holds a workspace's own retention (`{"days": n}`)."""


@dataclass(frozen=True)
class Purged:
    """What one retention pass removed from one workspace."""

    tenant_id: str
    days: int
    cutoff: datetime
    removed: Removed

    @property
    def questions(self) -> int:
        return self.removed.get("answer_log", 0)


class RetentionService:
    def __init__(self, services: Services) -> None:
        self._services = services
        self._rows = Retention(services.db)
        self._workspaces = WorkspaceStore(services.db)

    def days(self, tenant_id: str) -> int:
        """How many days the workspace keeps questions (0: for good)."""
        own = self._workspaces.setting(tenant_id, RETENTION)
        if own is not None and isinstance(own.get("days"), int):
            return int(own["days"])
        return self._services.settings.lore_retention_days

    def set_days(self, tenant_id: str, days: int) -> None:
        self._workspaces.put(tenant_id, RETENTION, {"days": days})

    async def purge_due(self) -> list[Purged]:
        """Remove, in every workspace, the questions older than it keeps them."""
        done = []
        for tenant in await asyncio.to_thread(self._workspaces.tenants):
            purged = await self.purge(tenant)
            if purged is not None:
                done.append(purged)
        await asyncio.to_thread(self._rows.end_stale_sessions)
        return done

    async def purge(self, tenant_id: str) -> Purged | None:
        """One workspace's pass; None when it keeps questions for good."""
        days = await asyncio.to_thread(self.days, tenant_id)
        if days <= 0:
            return None
        cutoff = utcnow() - timedelta(days=days)
        removed = await asyncio.to_thread(self._rows.purge_before, tenant_id, cutoff)
        purged = Purged(tenant_id, days, cutoff, removed)
        if removed:
            log.warning(
                "retention: removed from workspace %s what was asked before %s (%d days): %s",
                tenant_id,
                cutoff.isoformat(timespec="seconds"),
                days,
                _listed(removed),
            )
            await self._services.audit.record_for(
                tenant_id,
                AuditAction.RETENTION_PURGE,
                f"before {cutoff.date().isoformat()}",
                days=days,
                removed=removed,
            )
        return purged


def _listed(removed: Removed) -> str:
    return ", ".join(f"{name} {count}" for name, count in sorted(removed.items())) or "nothing"
