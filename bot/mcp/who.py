"""Who an MCP request acts as: a place the permission table checks (`storage.access`), and,
for the local user over stdio, their DM with Lore (whose enabled indexes `lore ask` searches).

Over HTTP the place is the API key's (`bot.app.keys.Caller`), exactly as for the HTTP API;
over stdio it is the CLI's local user in their DM (`bot.app.local`)."""

from __future__ import annotations

from dataclasses import dataclass

from bot.app.conversations import Actor
from bot.app.keys import Caller
from bot.app.services import Services
from storage.access import Action, Place, allowed
from storage.records import ConversationRef, IndexRef

MAX_DEFAULT_INDEXES = 20
"""Indexes searched when none are named, at most (the first by name; the result says so)."""


@dataclass(frozen=True)
class Principal:
    place: Place
    conversation: ConversationRef | None = None
    """The local user's DM with Lore (stdio); None for a key."""
    label: str = ""
    """For the log: `key 3 (ci)`, `local user`."""

    @classmethod
    def of_key(cls, caller: Caller) -> Principal:
        return cls(caller.place, label=f"key {caller.key.id} ({caller.key.name})")

    @classmethod
    def of_actor(cls, actor: Actor) -> Principal:
        return cls(actor.place, actor.conversation, label=f"local user {actor.user.external_id}")

    async def indexes(self, services: Services, names: list[str]) -> tuple[list[IndexRef], list[str]]:
        """The indexes called `names` that may be searched from here (`IndexNotFound` for
        one that may not), or, with no names, the default ones: those enabled in the local
        user's DM, or every index a key may search. With notices about what was left out."""
        catalog = services.catalog
        if names:
            found = [await catalog.find(self.place, name, Action.SEARCH) for name in names]
            return list({index.id: index for index in found}.values()), []
        if self.conversation is not None:
            every = await catalog.enabled(self.conversation, self.place)
        else:
            every = sorted(await catalog.visible(self.place, Action.SEARCH), key=lambda i: (i.name, i.id))
        notices = []
        if len(every) > MAX_DEFAULT_INDEXES:
            notices.append(
                f"Searched the first {MAX_DEFAULT_INDEXES} of the {len(every)} indexes you may use; "
                "name the ones you want in `indexes`."
            )
        return every[:MAX_DEFAULT_INDEXES], notices

    async def may_add(self, services: Services) -> bool:
        """Whether there is an index this principal may add documents to (else the tools that
        add are not offered: a tenant's key with only channel indexes, say)."""
        visible = await services.catalog.visible(self.place, Action.LIST)
        return any(allowed(Action.ADD, index.facts, self.place) for index in visible)
