"""Chat commands about document-level access from connected sources: "refresh permissions",
"why can @alice read …", "map @alice to github octocat" / "unmap …" / "who is mapped", and
"restrict the notion attachment to #eng". The use cases, and who may run them, are
`bot.app.actions.access` and `bot.app.actions.restrictions`; this renders them."""

from __future__ import annotations

from bot.app.services import Services
from bot.chat import commands as c
from bot.chat import messages
from bot.chat.render import (
    permissions_refreshed,
    render_explanation,
    render_mapped,
    render_mappings,
    render_restricted,
    render_unmapped,
)
from bot.chat.surface import Surface, Turn


class AccessCommands:
    def __init__(self, services: Services) -> None:
        self._access = services.actions.access
        self._restrictions = services.actions.restrictions

    async def refresh_permissions(self, command: c.RefreshPermissions, turn: Turn, surface: Surface) -> None:
        await surface.working()
        await surface.tell(permissions_refreshed(await self._access.refresh(turn.actor.place)))

    async def explain_access(self, command: c.ExplainAccess, turn: Turn, surface: Surface) -> None:
        explanation = await self._access.explain(turn.actor.place, command.user, command.document)
        await surface.tell(render_explanation(explanation))

    async def map_account(self, command: c.MapAccount, turn: Turn, surface: Surface) -> None:
        access = self._access
        mapping, changed = await access.map(turn.actor.place, command.user, command.account, command.source)
        await surface.tell(render_mapped(mapping, changed=changed))

    async def unmap_account(self, command: c.UnmapAccount, turn: Turn, surface: Surface) -> None:
        removed = await self._access.unmap(turn.actor.place, command.user, command.source)
        await surface.tell(render_unmapped(command.user, removed))

    async def list_mappings(self, command: c.ListMappings, turn: Turn, surface: Surface) -> None:
        await surface.tell(render_mappings(await self._access.mappings(turn.actor.place)))

    async def restrict_source(self, command: c.RestrictSource, turn: Turn, surface: Surface) -> None:
        if command.unlinked:
            await surface.tell(messages.RESTRICT_NEEDS_LINKS)
            return
        await surface.working()
        done = await self._restrictions.restrict(
            turn.actor.place, command.source, command.index, command.groups, command.names
        )
        await surface.tell(render_restricted(done))
