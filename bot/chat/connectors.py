"""Chat commands about connectors (Confluence): "connect confluence" (a private form where
there is one), "list confluence spaces", and "add the ENG space to the confluence index"
(with live progress in the thread, as for sites). Used by the router.

Connecting and attaching decide what the whole workspace can read (Confluence's own space
permissions are not synced), so only workspace admins and the users in
`LORE_CONNECTOR_ADMINS` may do either.
"""

from __future__ import annotations

import asyncio

from bot.app.conversations import Actor
from bot.app.services import Services
from bot.chat import messages
from bot.chat.sources import SiteCommands, source_label
from bot.chat.surface import Surface, Turn
from knowledge.catalog import IndexNotFound
from knowledge.sources.connectors import FolderSpec
from knowledge.sources.connectors.confluence import KIND as CONFLUENCE
from storage.access import Action, Place
from storage.records import ConnectionRef, IndexRef

CONNECT_FORM = "connect_confluence"


def may_connect(services: Services, actor: Actor) -> bool:
    """Workspace admins, and the users the allowlist names."""
    return actor.user.is_admin or actor.user.external_id in services.settings.connector_admins


async def target_index(services: Services, place: Place, name: str) -> tuple[IndexRef, bool]:
    """The index called `name` that `place` may add to, or a new shared one; and whether it
    was created."""
    try:
        return await services.catalog.find(place, name, Action.ADD), False
    except IndexNotFound:
        return await services.catalog.create_shared(place, name), True


async def disconnect(services: Services, connection: ConnectionRef) -> int:
    """Detach a connection from every index (its documents go, its jobs stop) and forget its
    credentials; the documents removed."""
    removed = 0
    for attached in await asyncio.to_thread(services.connections.repository.attachments, connection.id):
        index = await asyncio.to_thread(services.indexes.get, attached.index_id)
        removed += await services.jobs.detach_docsource_from_index(index, attached)
    await asyncio.to_thread(services.connections.repository.remove, connection.id)
    return removed


class ConnectorCommands:
    def __init__(self, services: Services, sites: SiteCommands) -> None:
        self._services = services
        self._sites = sites

    async def connect(self, kind: str, turn: Turn, surface: Surface) -> None:
        if kind != CONFLUENCE:
            await surface.say(messages.unknown_connector(kind))
            return
        if not may_connect(self._services, turn.actor):
            await surface.say(messages.CONNECT_NOT_ALLOWED)
            return
        if not self._services.connections.repository.can_store_credentials:
            await surface.say(messages.NEEDS_KEY_SETUP)
            return
        if not await surface.offer_form(messages.CONNECT_OFFER, CONNECT_FORM):
            await surface.say(messages.CONNECT_WITH_CLI)

    async def spaces(self, turn: Turn, surface: Surface) -> None:
        if not may_connect(self._services, turn.actor):
            await surface.say(messages.CONNECT_NOT_ALLOWED)
            return
        await surface.working()
        connections = self._services.connections
        connection = await connections.find(turn.actor.place.tenant_id)
        folders = await connections.folders(connection)
        await surface.say(messages.spaces(connection.name, [(f.key, f.name) for f in folders]))

    async def attach(
        self, space: str, page: str | None, index_name: str, turn: Turn, surface: Surface
    ) -> None:
        if not may_connect(self._services, turn.actor):
            await surface.say(messages.CONNECT_NOT_ALLOWED)
            return
        try:
            folder = FolderSpec.parse(f"{space}/{page}" if page else space)
        except ValueError as exc:
            await surface.say(messages.failed_file(str(exc)))
            return
        await surface.working()
        services, actor = self._services, turn.actor
        connection = await services.connections.find(actor.place.tenant_id)
        index, created = await target_index(services, actor.place, index_name)
        source = await services.connections.attach(connection, index, [folder])
        if created:
            await services.catalog.enable(actor.conversation, index)
        jobs = services.jobs
        if await asyncio.to_thread(jobs.repository.active_for_source, source.id) is not None:
            await surface.say(messages.job_already_running(source_label(source)))
            return
        job = await jobs.start_indexing_job(index, source, conversation_id=actor.conversation.id)
        await surface.say(messages.space_queued(str(folder), index.name, created))
        await self._sites.follow(job, source_label(source), surface)
