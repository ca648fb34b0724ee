"""Chat commands about connectors (Confluence, GitHub, Notion): "connect confluence" / "connect
github" / "connect notion" (a private form where there is one), "list confluence spaces" /
"list github repositories" / "list notion pages", and "add the ENG space to the confluence
index" / "add the acme/payments repository to the eng index" / "add our Notion to the handbook
index" (with live progress in the thread, as for sites). The use cases, and who may run
them, are `bot.app.actions.connectors`; this renders them."""

from __future__ import annotations

from bot.app.actions.sources import label as source_label
from bot.app.services import Services
from bot.chat import messages
from bot.chat.sources import SiteCommands
from bot.chat.surface import Surface, Turn
from knowledge import CONNECTORS

CONNECT_FORMS = {kind: f"connect_{kind}" for kind in CONNECTORS}
"""The private form (a Slack modal) that takes each kind's credentials, by kind."""
CONNECT_FORM = CONNECT_FORMS["confluence"]


class ConnectorCommands:
    def __init__(self, services: Services, sites: SiteCommands) -> None:
        self._connectors = services.actions.connectors
        self._sites = sites

    async def connect(self, kind: str, turn: Turn, surface: Surface) -> None:
        if kind not in CONNECTORS:
            await surface.tell(messages.unknown_connector(kind))
            return
        if not self._connectors.allowed(turn.actor.place):
            await surface.tell(messages.CONNECT_NOT_ALLOWED)
            return
        if not self._connectors.can_store_credentials:
            await surface.tell(messages.NEEDS_KEY_SETUP)
            return
        if not await surface.offer_form(messages.connect_offer(kind), CONNECT_FORMS[kind]):
            await surface.tell(messages.connect_with_cli(kind))

    async def folders(self, kind: str, turn: Turn, surface: Surface) -> None:
        place = turn.actor.place
        if not self._connectors.allowed(place):
            await surface.tell(messages.CONNECT_NOT_ALLOWED)
            return
        await surface.working()
        connection = await self._connectors.find(place, kind=kind)
        folders = await self._connectors.spaces(place, connection)
        await surface.tell(messages.spaces(connection.name, [(f.key, f.name) for f in folders], kind))

    async def attach(self, kind: str, folder: str, index_name: str, turn: Turn, surface: Surface) -> None:
        actor = turn.actor
        if not self._connectors.allowed(actor.place):
            await surface.tell(messages.CONNECT_NOT_ALLOWED)
            return
        try:
            spec = CONNECTORS[kind].parse_folder(folder)
        except ValueError as exc:
            await surface.tell(messages.failed_file(str(exc)))
            return
        await surface.working()
        connection = await self._connectors.find(actor.place, kind=kind)
        attached = await self._connectors.attach(
            actor.place, connection, index_name, [spec], conversation=actor.conversation
        )
        if attached.already_running:
            await surface.tell(messages.job_already_running(source_label(attached.source)))
            return
        await surface.say(messages.space_queued(str(spec), attached.index.name, attached.created_index, kind))
        await self._sites.follow(attached.job, source_label(attached.source), surface)
