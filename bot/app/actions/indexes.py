"""Use cases on indexes: find, list, create, delete, and which ones a conversation uses."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.app.actions.errors import SETTINGS_LOCKED, refused
from bot.app.audit import AuditAction
from bot.app.conversations import Actor
from knowledge import IndexListing, IndexNotFound, KnowledgeError, NotAllowed
from storage.access import Action, Place, allowed, may_change_settings
from storage.document_access import PUBLIC_ONLY, AccessFilter
from storage.records import ChannelRef, ConversationRef, IndexRef, IndexStats
from storage.values import Scope

if TYPE_CHECKING:
    from bot.app.services import Services


@dataclass(frozen=True)
class Found:
    """An index, and whether this use case created it."""

    index: IndexRef
    created: bool = False


class IndexActions:
    def __init__(self, services: Services) -> None:
        self._services = services
        self._catalog = services.catalog
        self._audit = services.audit

    async def find(self, place: Place, name: str, action: Action = Action.SEARCH) -> IndexRef:
        """The index called `name` (the place's own first) that `place` may `action`."""
        return await self._catalog.find(place, name, action)

    async def visible(self, place: Place) -> list[IndexRef]:
        return await self._catalog.visible(place)

    async def get(self, place: Place, index_id: int, action: Action = Action.LIST) -> IndexRef:
        """The index with that id, if `place` may `action` it (unknown otherwise)."""
        index = await asyncio.to_thread(self._services.indexes.get, index_id)
        if not allowed(Action.LIST, index.facts, place):
            raise IndexNotFound(str(index_id), [])
        if not allowed(action, index.facts, place):
            raise refused(action, index)
        return index

    async def stats(self, index: IndexRef, access: AccessFilter | None = PUBLIC_ONLY) -> IndexStats:
        """Its documents and passages that `access` may read (every one with None)."""
        return await asyncio.to_thread(self._services.indexes.stats, index.id, access)

    async def listing(self, actor: Actor) -> list[IndexListing]:
        access = await self._services.actions.access.for_place(actor.place)
        return await self._catalog.listing(actor.place, actor.conversation, access)

    async def enabled(self, actor: Actor) -> list[IndexRef]:
        """What the conversation searches (only what the actor may search)."""
        return await self._catalog.enabled(actor.conversation, actor.place)

    async def viewed(self, actor: Actor, channel: ChannelRef) -> IndexRef | None:
        """The index of a channel the actor is looking at (Slack's agent view), if it has one
        and the actor may search it from where they ask (a private channel's, never from a DM)."""
        for index in await self._catalog.visible(actor.place, Action.SEARCH):
            if index.scope == Scope.CHANNEL and index.channel_id == channel.id:
                return index
        return None

    async def default(self, actor: Actor) -> IndexRef:
        """Where new documents go in this conversation: its first enabled index the actor may
        add to."""
        for index in await self.enabled(actor):
            if allowed(Action.ADD, index.facts, actor.place):
                return index
        raise KnowledgeError(
            "no index here takes new documents; enable one with “enable the <name> index”, or create one"
        )

    async def create(
        self, place: Place, name: str, *, conversation: ConversationRef | None = None
    ) -> IndexRef:
        """A new shared index owned by the place's user, enabled in `conversation` if given."""
        if place.partner:
            raise NotAllowed("people from other organisations can't create indexes here")
        if conversation is not None:
            self._check_settings(place, conversation)
        index = await self._catalog.create_shared(place, name)
        await self._audit.record(place, AuditAction.INDEX_CREATE, index.name, index_id=index.id)
        if conversation is not None:
            await self._catalog.enable(conversation, index)
        return index

    async def find_or_create(
        self, place: Place, name: str, *, conversation: ConversationRef | None = None
    ) -> Found:
        """The index called `name` that `place` may add to, or a new shared one."""
        try:
            return Found(await self.find(place, name, Action.ADD))
        except IndexNotFound:
            return Found(await self.create(place, name, conversation=conversation), created=True)

    async def check_delete(self, place: Place, name: str) -> tuple[IndexRef, IndexStats]:
        """The index `place` asks to delete and its size (for the confirmation), if allowed."""
        index = await self.find(place, name, Action.DELETE)
        return index, await self.stats(index, None)

    async def delete(self, place: Place, index: IndexRef) -> None:
        if not allowed(Action.DELETE, index.facts, place):
            raise refused(Action.DELETE, index)
        stats = await self.stats(index)
        await self._catalog.delete(place, index)
        await self._audit.record(
            place,
            AuditAction.INDEX_DELETE,
            index.name,
            index_id=index.id,
            scope=index.scope,
            documents=stats.documents,
        )

    async def enable(self, actor: Actor, name: str) -> tuple[IndexRef, bool]:
        """Turn on `name` in the actor's conversation; whether it was off."""
        self._check_settings(actor.place, actor.conversation)
        index = await self.find(actor.place, name, Action.ENABLE)
        changed = await self._catalog.enable(actor.conversation, index)
        await self._conversation_changed(actor, AuditAction.CONVERSATION_ENABLE, index, changed)
        return index, changed

    async def disable(self, actor: Actor, name: str) -> tuple[IndexRef, bool]:
        """Turn off `name` in the actor's conversation; whether it was on."""
        self._check_settings(actor.place, actor.conversation)
        index = await self.find(actor.place, name, Action.LIST)
        changed = await self._catalog.disable(actor.conversation, index)
        await self._conversation_changed(actor, AuditAction.CONVERSATION_DISABLE, index, changed)
        return index, changed

    async def set_enabled(self, actor: Actor, index_id: int, on: bool) -> tuple[IndexRef, bool]:
        """Turn the index with that id on (or off) in the actor's conversation; whether that
        changed anything."""
        self._check_settings(actor.place, actor.conversation)
        index = await self.get(actor.place, index_id, Action.ENABLE if on else Action.LIST)
        if on:
            changed = await self._catalog.enable(actor.conversation, index)
        else:
            changed = await self._catalog.disable(actor.conversation, index)
        action = AuditAction.CONVERSATION_ENABLE if on else AuditAction.CONVERSATION_DISABLE
        await self._conversation_changed(actor, action, index, changed)
        return index, changed

    async def make_default(self, actor: Actor, name: str) -> IndexRef:
        self._check_settings(actor.place, actor.conversation)
        index = await self.find(actor.place, name, Action.ADD)
        await self._catalog.enable(actor.conversation, index, as_default=True)
        await self._conversation_changed(actor, AuditAction.CONVERSATION_DEFAULT, index, True)
        return index

    async def set_documents_only(self, place: Place, name: str, documents_only: bool) -> IndexRef:
        """Lock an index to answers from its documents alone (RAG_ONLY wherever it is
        searched), or unlock it: its owner's or an admin's call."""
        index = await self.find(place, name, Action.CONFIGURE)
        changed = await asyncio.to_thread(self._services.indexes.set_documents_only, index.id, documents_only)
        await self._audit.record(
            place,
            AuditAction.INDEX_DOCUMENTS_ONLY,
            index.name,
            index_id=index.id,
            documents_only=documents_only,
        )
        return changed

    async def _conversation_changed(
        self, actor: Actor, action: AuditAction, index: IndexRef, changed: bool
    ) -> None:
        if changed:
            await self._audit.record(
                actor.place, action, index.name, index_id=index.id, conversation=actor.conversation.key
            )

    def _check_settings(self, place: Place, conversation: ConversationRef) -> None:
        if not may_change_settings(place, locked=conversation.settings_locked):
            from bot.app.actions.errors import PARTNERS

            raise NotAllowed(PARTNERS if place.partner else SETTINGS_LOCKED)


def describe(index: IndexRef, place: Place) -> str:
    """What an index is, from where the actor stands: "your personal index", "#eng's
    channel index", "a shared index" (so a name can never pass for another's index)."""
    if index.scope == Scope.PERSONAL:
        return "your personal index" if index.owner_user_id == place.user_id else "someone's personal index"
    if index.scope == Scope.CHANNEL:
        return (
            "this channel's index"
            if index.channel_id == place.channel_id
            else f"#{index.name}'s channel index"
        )
    if index.owner_user_id is not None and index.owner_user_id == place.user_id:
        return "a shared index you created"
    return "a shared index"
