"""Permission sync and group sync: keeping who may read what, and who is in which group, in
step with the source, on schedules of their own, apart from content.

A **permission sync** of one attachment lists its items' access (no bodies: nothing is
fetched again or embedded) and gives each of its documents the access of its item (an
attachment, its page's). A document whose item is no longer listed, and every document of
an attachment whose sync fails, become unreadable (fail closed): a failure can hide pages
for a while, never show one to the wrong person. A **group sync** of one connection reads
the members of every group the documents' access names, and the people it names, with their
emails: how a Slack user's confirmed email becomes their accounts and groups in the source.
A failed group sync forgets the groups' members (fail closed too).

Each sync is claimed in SQL first (`SourceAccessRepository.claim_*`), so two processes
never run the same one; a claim older than `stale_after` is taken over.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from knowledge.sources.connectors.base import ConnectorError
from knowledge.sources.connectors.permissions import (
    GROUP,
    USER,
    AccessReader,
    SourceAccess,
    SourceUser,
    grantee_of,
)
from knowledge.sources.connectors.registry import CONNECTORS, connector_kind
from knowledge.sources.connectors.service import Connections
from storage.document_access import DocumentAccess, restriction
from storage.records import ConnectionRef, DocumentRef, SourceConfigRef, StorageError
from storage.repositories.documents import DocumentRepository
from storage.repositories.source_access import Person, SourceAccessRepository
from storage.repositories.sources import SourceRepository

log = logging.getLogger(__name__)
PEOPLE_PER_SYNC = 500
"""People looked up one by one (their email) per group sync at most; the rest, next time."""


@dataclass(frozen=True)
class AccessPolicy:
    permissions_every: timedelta = timedelta(minutes=30)
    groups_every: timedelta = timedelta(minutes=30)
    stale_after: timedelta = timedelta(minutes=15)
    """A claim older than this is taken over (its process stopped)."""
    retry_after: timedelta = timedelta(minutes=5)
    """A failed sync is tried again on schedule after this (its documents stay unreadable
    meanwhile, unless an admin refreshes them sooner)."""


@dataclass(frozen=True)
class PermissionReport:
    source: SourceConfigRef
    documents: int
    restricted: int
    changed: int
    error: str | None = None
    skipped: bool = False
    """Another process was already syncing it."""


@dataclass(frozen=True)
class GroupReport:
    connection: ConnectionRef
    groups: int
    members: int
    error: str | None = None
    skipped: bool = False


def kinds_with_permissions() -> list[str]:
    return [kind for kind, connector in CONNECTORS.items() if connector.syncs_permissions]


class AccessSync:
    def __init__(
        self,
        connections: Connections,
        access: SourceAccessRepository,
        sources: SourceRepository,
        documents: DocumentRepository,
        policy: AccessPolicy | None = None,
    ) -> None:
        self._connections = connections
        self._access = access
        self._sources = sources
        self._documents = documents
        self.policy = policy or AccessPolicy()

    async def run_due(self) -> list[PermissionReport | GroupReport]:
        """Every permission sync, then every group sync, that is due."""
        kinds, policy = kinds_with_permissions(), self.policy
        reports: list[PermissionReport | GroupReport] = []
        for config_id in await asyncio.to_thread(
            self._access.permissions_due, kinds, policy.permissions_every, policy.retry_after
        ):
            source = await asyncio.to_thread(self._sources.get, config_id)
            reports.append(await self.permissions(source))
        due = set(
            await asyncio.to_thread(self._access.groups_due, kinds, policy.groups_every, policy.retry_after)
        )
        for connection in await self._connections.every(kinds):
            if connection.id in due or await self._names_new_groups(connection.id):
                reports.append(await self.groups(connection))
        return reports

    async def _names_new_groups(self, connection_id: int) -> bool:
        """Documents name a group its last group sync did not read (a first content sync
        just brought them): its members are read now, not at the next scheduled sync."""
        named = await asyncio.to_thread(self._access.referenced, connection_id)
        groups = {g[2] for g in map(grantee_of, named) if g is not None and g[1] == GROUP}
        return bool(groups - await asyncio.to_thread(self._access.groups_read, connection_id))

    async def refresh(self, tenant_id: str) -> list[PermissionReport | GroupReport]:
        """Sync now every attachment's permissions and every connection's groups of a workspace."""
        reports: list[PermissionReport | GroupReport] = []
        connections = [
            c for c in await self._connections.for_tenant(tenant_id) if c.kind in kinds_with_permissions()
        ]
        for connection in connections:
            for source in await asyncio.to_thread(self._connections.repository.attachments, connection.id):
                reports.append(await self.permissions(source))
        for connection in connections:
            reports.append(await self.groups(connection))
        return reports

    # -- permission sync ------------------------------------------------------------------

    async def permissions(self, source: SourceConfigRef) -> PermissionReport:
        """Give the attachment's documents the access their items have now."""
        claimed = await asyncio.to_thread(
            self._access.claim_permissions, source.id, stale_after=self.policy.stale_after
        )
        if not claimed:
            return PermissionReport(source, 0, 0, 0, skipped=True)
        documents = await asyncio.to_thread(self._sources.documents, source.id)
        try:
            key, listed = await self._item_access(source)
        except (ConnectorError, StorageError) as exc:
            return await self._failed(source, documents, str(exc))
        except Exception as exc:  # a bug must not leave pages readable: fail closed, then tell
            log.exception("permission sync of attachment %s failed", source.id)
            return await self._failed(source, documents, f"an unexpected error ({type(exc).__name__})")
        narrowed = restriction(source.options)
        changes = {
            d.id: _document_access(key(d.external_id or "", d.meta), listed, source.source_id).also(narrowed)
            for d in documents
        }
        changed = await asyncio.to_thread(self._documents.set_access, changes)
        await asyncio.to_thread(self._access.record_permissions, source.id, None)
        restricted = sum(1 for a in changes.values() if not a.is_public)
        return PermissionReport(source, len(documents), restricted, len(changed))

    async def _item_access(
        self, source: SourceConfigRef
    ) -> tuple[Callable[[str, Mapping[str, Any]], str], dict[str, SourceAccess]]:
        """How the connector keys a document's access, and the access of every item listed."""
        connection = await asyncio.to_thread(self._connections.repository.get, source.source_id)
        kind = connector_kind(connection.kind)
        folders = [kind.parse_folder(f) for f in source.folders]
        async with self._connections.open(connection) as connector:
            if not isinstance(connector, AccessReader):
                raise ConnectorError(f"{connection.kind} does not say who may read its items")
            options = source.options.get("selection") or {}
            listing = connector.item_access(folders, options)
            return kind.access_key, {item: access async for item, access in listing}

    async def _failed(
        self, source: SourceConfigRef, documents: Sequence[DocumentRef], error: str
    ) -> PermissionReport:
        log.warning(
            "permission sync of attachment %s failed, its documents are unreadable: %s", source.id, error
        )
        nobody = dict.fromkeys((d.id for d in documents), DocumentAccess.nobody())
        changed = await asyncio.to_thread(self._documents.set_access, nobody)
        await asyncio.to_thread(self._access.record_permissions, source.id, error)
        return PermissionReport(source, len(documents), len(documents), len(changed), error=error)

    # -- group sync -------------------------------------------------------------------------

    async def groups(self, connection: ConnectionRef) -> GroupReport:
        """Read the members of every group the connection's documents name, and the people
        named, with their emails."""
        claimed = await asyncio.to_thread(
            self._access.claim_groups, connection.id, stale_after=self.policy.stale_after
        )
        if not claimed:
            return GroupReport(connection, 0, 0, skipped=True)
        try:
            members, people = await self._read_groups(connection)
        except (ConnectorError, StorageError) as exc:
            return await self._groups_failed(connection, str(exc))
        except Exception as exc:
            log.exception("group sync of connection %s failed", connection.id)
            return await self._groups_failed(connection, f"an unexpected error ({type(exc).__name__})")
        await asyncio.to_thread(
            self._access.save_people, connection.id, [Person(p.account_id, p.email, p.name) for p in people]
        )
        await asyncio.to_thread(
            self._access.replace_members,
            connection.id,
            {g: [m.account_id for m in ms] for g, ms in members.items()},
        )
        await asyncio.to_thread(self._access.record_groups, connection.id, None)
        return GroupReport(connection, len(members), sum(len(m) for m in members.values()))

    async def _read_groups(
        self, connection: ConnectionRef
    ) -> tuple[dict[str, list[SourceUser]], list[SourceUser]]:
        named = [grantee_of(p) for p in await asyncio.to_thread(self._access.referenced, connection.id)]
        groups = sorted({value for _, kind, value in filter(None, named) if kind == GROUP})
        users = {value for _, kind, value in filter(None, named) if kind == USER}
        async with self._connections.open(connection) as connector:
            if not isinstance(connector, AccessReader):
                raise ConnectorError(f"{connection.kind} has no groups Lore can read")
            members = {name: await connector.group_members(name) for name in groups}
            listed = {m.account_id: m for ms in members.values() for m in ms}
            known = await asyncio.to_thread(self._access.known_accounts, connection.id)
            missing = sorted(
                a for a in users | set(listed) if a not in known and not (listed.get(a) and listed[a].email)
            )
            looked_up = await connector.people(missing[:PEOPLE_PER_SYNC])
        return members, [*listed.values(), *looked_up]

    async def _groups_failed(self, connection: ConnectionRef, error: str) -> GroupReport:
        log.warning("group sync of connection %s failed, its groups count as empty: %s", connection.id, error)
        named = await asyncio.to_thread(self._access.referenced, connection.id)
        groups = [g[2] for g in map(grantee_of, named) if g is not None and g[1] == GROUP]
        await asyncio.to_thread(self._access.replace_members, connection.id, {}, read=groups)
        await asyncio.to_thread(self._access.record_groups, connection.id, error)
        return GroupReport(connection, 0, 0, error=error)


def _document_access(item: str, listed: dict[str, SourceAccess], connection_id: int) -> DocumentAccess:
    """A document's access: its item's (`ConnectorKind.access_key`: an attachment's, its
    page's; a GitHub issue's, its repository's); nobody's when the item was not listed (gone,
    moved out, or hidden from Lore's account)."""
    found = listed.get(item)
    return found.document_access(connection_id) if found is not None else DocumentAccess.nobody()
