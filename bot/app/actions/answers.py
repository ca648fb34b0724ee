"""Use cases on answers: record what Lore answered (with what it cited), and the feedback
people give on it."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from bot.app.conversations import Actor
from knowledge.answer import Answer
from storage.access import Place
from storage.records import NotFound
from storage.repositories.answers import AnswerEntry

if TYPE_CHECKING:
    from bot.app.services import Services


class AnswerActions:
    def __init__(self, services: Services) -> None:
        self._answers = services.answers

    async def record(self, actor: Actor, question: str, answer: Answer) -> int:
        """Keep an answer; its id is what its feedback buttons carry."""
        entry = AnswerEntry(
            tenant_id=actor.place.tenant_id,
            question=question,
            mode=answer.mode.value,
            fallback=answer.fallback.value if answer.fallback else None,
            abstained=answer.abstained,
            cited=[
                {"document_id": c.document_id, "name": c.name, "index": c.index_name}
                for c in answer.citations
            ],
            conversation_id=actor.conversation.id,
            user_id=actor.user.id,
        )
        return await asyncio.to_thread(self._answers.record, entry)

    async def feedback(self, place: Place, answer_id: int, helpful: bool) -> bool:
        """Record whether answer `answer_id` (of the place's workspace) helped; False when
        there is no such answer."""
        value = "helpful" if helpful else "not_helpful"
        try:
            await asyncio.to_thread(
                self._answers.set_feedback, answer_id, place.tenant_id, place.user_id, value
            )
        except NotFound:
            return False
        return True
