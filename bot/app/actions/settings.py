"""Use cases on a conversation's settings: how Lore answers there (response mode, retrieval
strategy, whether Lore needs a mention) and whether its settings are locked to admins."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from bot.app.actions.errors import ANSWER_SETTINGS, PARTNERS
from bot.app.audit import AuditAction, Auditor
from bot.app.conversations import Actor
from knowledge import NotAllowed, ResponseMode, Strategy
from storage.access import may_change_answers
from storage.records import ConversationRef

if TYPE_CHECKING:
    from bot.app.services import Services


class SettingActions:
    def __init__(self, services: Services) -> None:
        self._directory = services.directory
        self._audit: Auditor = services.audit

    async def set_mode(self, actor: Actor, mode: ResponseMode) -> ConversationRef:
        return await self._set(actor, AuditAction.CONVERSATION_MODE, mode.value, response_mode=mode)

    async def set_strategy(self, actor: Actor, strategy: Strategy) -> ConversationRef:
        return await self._set(
            actor, AuditAction.CONVERSATION_STRATEGY, strategy.value, rag_strategy=strategy
        )

    async def lock(self, actor: Actor, locked: bool) -> ConversationRef:
        """Lock (or unlock) the conversation's settings: only admins change them while locked."""
        return await self._set(actor, AuditAction.CONVERSATION_LOCK, locked, settings_locked=locked)

    async def require_mention(self, actor: Actor, required: bool) -> ConversationRef:
        """Whether Lore answers here only when mentioned, or also follow-ups in its threads."""
        return await self._set(actor, AuditAction.CONVERSATION_MENTIONS, required, require_mention=required)

    async def _set(self, actor: Actor, action: AuditAction, value: object, **change: Any) -> ConversationRef:
        self._check(actor)
        changed = await asyncio.to_thread(
            self._directory.set_conversation_options, actor.conversation.id, **change
        )
        await self._audit.record(actor.place, action, actor.conversation.key, value=value)
        return changed

    def _check(self, actor: Actor) -> None:
        if not may_change_answers(actor.place):
            raise NotAllowed(PARTNERS if actor.place.partner else ANSWER_SETTINGS)
