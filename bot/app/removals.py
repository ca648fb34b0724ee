"""Removing a workspace Lore was uninstalled from. The surface drops its tokens at once
(`bot.slack.installs`); its data goes after a grace period (`LORE_UNINSTALL_GRACE_HOURS`),
unless Lore is installed there again first: every row it owns in SQL (documents and
passages, answers and feedback, jobs and their logs, connectors' sealed credentials, people,
channels, API keys), its vector collections, and what those left in embedded files. What
was removed is recorded per table in `tenant_removal` and said in one log line.

The purge runs in whichever process runs the scheduler (the bot, or `lore worker`); each
removal is claimed by one of them.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta
from typing import TYPE_CHECKING

from bot.app.audit import AuditAction, Origin, Surface, acting_from
from knowledge import collection_for
from storage.repositories.removals import Removal, Removals

if TYPE_CHECKING:
    from bot.app.services import Services

log = logging.getLogger(__name__)
CLAIM_STALE = timedelta(minutes=30)
"""A claimed purge not finished in this long was abandoned (its process died) and is retried."""


class WorkspaceRemovals:
    def __init__(self, services: Services, removals: Removals) -> None:
        self._services = services
        self._removals = removals

    @property
    def grace(self) -> timedelta:
        return timedelta(hours=self._services.settings.lore_uninstall_grace_hours)

    async def uninstalled(
        self, team_id: str | None, enterprise_id: str | None, *, org_wide: bool, reason: str
    ) -> list[Removal]:
        """Lore was removed from a workspace, or from an organisation (`org_wide`: every
        workspace it was reached through there): their data's removal is scheduled."""
        tenants = await self._tenants(team_id, enterprise_id, org_wide=org_wide)
        scheduled = []
        for tenant in tenants:
            removal = await asyncio.to_thread(
                self._removals.schedule, tenant, reason=reason, grace=self.grace, enterprise_id=enterprise_id
            )
            log.warning(
                "Lore was removed from workspace %s (%s): its data will be purged after %s",
                tenant,
                reason,
                removal.purge_after.isoformat(timespec="seconds"),
            )
            await self._services.audit.record_for(
                tenant,
                AuditAction.WORKSPACE_UNINSTALL,
                tenant,
                reason=reason,
                purge_after=removal.purge_after.isoformat(timespec="seconds"),
            )
            scheduled.append(removal)
        return scheduled

    async def installed(self, team_id: str | None, enterprise_id: str | None, *, org_wide: bool) -> None:
        """Lore was installed (again): a pending removal of these workspaces is called off."""
        tenants = await self._tenants(team_id, enterprise_id, org_wide=org_wide)
        if await asyncio.to_thread(self._removals.cancel, tenants):
            log.warning("Lore was installed again in %s: the removal of its data is called off", tenants)
            for tenant in tenants:
                await self._services.audit.record_for(tenant, AuditAction.WORKSPACE_REINSTALL, tenant)

    async def reached_through(self, tenant: str, enterprise_id: str | None) -> None:
        """A workspace is reached through an organisation (Enterprise Grid): on record, so
        that Lore's removal from the organisation finds it."""
        await asyncio.to_thread(self._services.directory.ensure_tenant, tenant)
        await asyncio.to_thread(self._removals.note_enterprise, tenant, enterprise_id)

    async def organisation_of(self, tenant: str) -> str | None:
        """The Enterprise Grid organisation the workspace is reached through, if any."""
        return await asyncio.to_thread(self._removals.enterprise_of, tenant)

    async def pending(self, tenant: str) -> Removal | None:
        return await asyncio.to_thread(self._removals.pending, tenant)

    async def history(self, tenant: str) -> list[Removal]:
        return await asyncio.to_thread(self._removals.history, tenant)

    async def purge_due(self, worker: str) -> list[Removal]:
        """Purge every workspace whose grace period is over; the records of what went."""
        due = await asyncio.to_thread(self._removals.claim_due, worker, stale=CLAIM_STALE)
        return [await asyncio.to_thread(self._purge, removal) for removal in due]

    def _purge(self, removal: Removal) -> Removal:
        tenant, vectors = removal.tenant_id, self._services.vectors
        collections = set()
        for index in self._services.indexes.list_for_tenant(tenant):
            ref = collection_for(index)
            vectors.drop(ref)
            collections.add(vectors.collection_name(ref))
        collections.update(vectors.drop_tenant(tenant))
        removed = self._removals.purge_rows(tenant)
        vectors.compact()
        if collections:
            removed["vector collections"] = len(collections)
        done = self._removals.record_purge(removal.id, removed)
        with acting_from(Origin(Surface.LORE)):
            self._services.audit.record_sync(
                tenant,
                None,
                AuditAction.WORKSPACE_PURGE,
                tenant,
                {"reason": removal.reason, "removal": removal.id, "removed": removed},
            )
        listed = ", ".join(f"{name} {count}" for name, count in sorted(removed.items())) or "nothing"
        log.warning(
            "purged workspace %s (%s on %s): removed %s",
            tenant,
            removal.reason,
            removal.requested_at.date(),
            listed,
        )
        return done

    async def _tenants(self, team_id: str | None, enterprise_id: str | None, *, org_wide: bool) -> list[str]:
        if org_wide and enterprise_id:
            found = await asyncio.to_thread(self._removals.tenants_of, enterprise_id)
            return sorted(set(found) | ({team_id} if team_id else set()))
        return [team_id] if team_id else []
