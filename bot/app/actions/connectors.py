"""Use cases on connectors (Confluence, GitHub): connect with credentials, list folders
(spaces, repositories), attach them to an index (a job starts), disconnect. Connector admins
only (`may_manage_connectors`): a connector decides what an index holds; who may read each of
its documents is then its source's to say where it syncs permissions (Confluence:
`bot.app.actions.access`), and the index's alone where it does not yet (GitHub)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bot.app.actions.errors import CONNECTORS
from bot.app.actions.indexes import IndexActions
from bot.app.actions.sources import Attached, SourceActions, label
from bot.app.audit import AuditAction
from knowledge import Credentials, Folder, FolderSpec, NotAllowed, Schedule
from storage.access import Place, may_manage_connectors
from storage.records import ConnectionRef, ConversationRef

if TYPE_CHECKING:
    from bot.app.services import Services
    from knowledge import Connections


@dataclass(frozen=True)
class Connected:
    connection: ConnectionRef
    account: str
    """The account the credentials belong to, as the site names it."""
    spaces: list[Folder]


class ConnectorActions:
    def __init__(self, services: Services, indexes: IndexActions, sources: SourceActions) -> None:
        self._services = services
        self._indexes = indexes
        self._sources = sources

    @property
    def _connections(self) -> Connections:
        """Built on first use: every surface builds these actions, and the connectors' client
        (aiohttp, the crawler's fetcher) costs up to a quarter of a second that `lore ask` never
        needs."""
        return self._services.connections

    def allowed(self, place: Place) -> bool:
        return may_manage_connectors(place)

    def check(self, place: Place) -> None:
        if not may_manage_connectors(place):
            raise NotAllowed(CONNECTORS)

    @property
    def can_store_credentials(self) -> bool:
        return self._connections.repository.can_store_credentials

    async def connect(
        self,
        place: Place,
        url: str,
        credentials: Credentials,
        *,
        kind: str = "confluence",
        name: str | None = None,
    ) -> Connected:
        """Check the credentials against the site, then keep them sealed."""
        self.check(place)
        connection, account = await self._connections.connect(
            place.tenant_id, url, credentials, kind=kind, created_by=place.user_id, name=name
        )
        await self._services.audit.record(
            place, AuditAction.CONNECTOR_CONNECT, connection.name, kind=kind, url=connection.base_url
        )
        return Connected(connection, account, await self._connections.folders(connection))

    async def listing(self, place: Place) -> list[ConnectionRef]:
        return await self._connections.for_tenant(place.tenant_id)

    async def find(
        self, place: Place, reference: str | None = None, *, kind: str | None = None
    ) -> ConnectionRef:
        return await self._connections.find(place.tenant_id, reference, kind=kind)

    async def get(self, place: Place, connection_id: int) -> ConnectionRef:
        return await self._connections.get(place.tenant_id, connection_id)

    async def spaces(self, place: Place, connection: ConnectionRef) -> list[Folder]:
        self.check(place)
        return await self._connections.folders(connection)

    async def attach(
        self,
        place: Place,
        connection: ConnectionRef,
        index_name: str,
        folders: Sequence[FolderSpec],
        *,
        schedule: Schedule | None = None,
        conversation: ConversationRef | None = None,
        selection: Mapping[str, Any] | None = None,
    ) -> Attached:
        """Attach folders (spaces or page trees, repositories or owners) to the index called
        `index_name` (a new shared index if there is none, enabled in `conversation`), and
        queue their sync; `selection` says what of them to index (GitHub's parts and files)."""
        self.check(place)
        found = await self._indexes.find_or_create(place, index_name, conversation=conversation)
        source = await self._connections.attach(
            connection,
            found.index,
            folders,
            schedule=schedule.text if schedule else "daily",
            selection=selection,
        )
        attached = await self._sources.start(
            found.index, source, conversation_id=conversation.id if conversation else None
        )
        await self._services.audit.record(
            place,
            AuditAction.CONNECTOR_ATTACH,
            label(source),
            index=found.index.name,
            connection=connection.name,
        )
        return Attached(
            attached.source, attached.index, attached.job, attached.already_running, found.created
        )

    async def disconnect(self, place: Place, connection: ConnectionRef) -> int:
        """Detach a connection from every index (its documents go, its jobs stop) and forget
        its credentials; the documents removed."""
        self.check(place)
        removed = 0
        repository = self._connections.repository
        for attached in await asyncio.to_thread(repository.attachments, connection.id):
            index = await asyncio.to_thread(self._services.indexes.get, attached.index_id)
            removed += await self._services.jobs.detach_docsource_from_index(index, attached)
        await asyncio.to_thread(self._services.source_access.forget_source, connection.id)
        await asyncio.to_thread(repository.remove, connection.id)
        await self._services.audit.record(
            place, AuditAction.CONNECTOR_DISCONNECT, connection.name, documents_removed=removed
        )
        return removed
