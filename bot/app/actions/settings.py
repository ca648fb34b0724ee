"""Use cases on a conversation's settings: how Lore answers there (response mode, retrieval
strategy, whether Lore needs a mention) and whether its settings are locked to admins."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from bot.app.actions.errors import ANSWER_SETTINGS, PARTNERS
from bot.app.conversations import Actor
from knowledge import NotAllowed, ResponseMode, Strategy
from storage.access import may_change_answers
from storage.records import ConversationRef

if TYPE_CHECKING:
    from bot.app.services import Services


class SettingActions:
    def __init__(self, services: Services) -> None:
        self._directory = services.directory

    async def set_mode(self, actor: Actor, mode: ResponseMode) -> ConversationRef:
        self._check(actor)
        return await asyncio.to_thread(
            self._directory.set_conversation_options, actor.conversation.id, response_mode=mode
        )

    async def set_strategy(self, actor: Actor, strategy: Strategy) -> ConversationRef:
        self._check(actor)
        return await asyncio.to_thread(
            self._directory.set_conversation_options, actor.conversation.id, rag_strategy=strategy
        )

    async def lock(self, actor: Actor, locked: bool) -> ConversationRef:
        """Lock (or unlock) the conversation's settings: only admins change them while locked."""
        self._check(actor)
        return await asyncio.to_thread(
            self._directory.set_conversation_options, actor.conversation.id, settings_locked=locked
        )

    async def require_mention(self, actor: Actor, required: bool) -> ConversationRef:
        """Whether Lore answers here only when mentioned, or also follow-ups in its threads."""
        self._check(actor)
        return await asyncio.to_thread(
            self._directory.set_conversation_options, actor.conversation.id, require_mention=required
        )

    def _check(self, actor: Actor) -> None:
        if not may_change_answers(actor.place):
            raise NotAllowed(PARTNERS if actor.place.partner else ANSWER_SETTINGS)
