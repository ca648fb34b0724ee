"""Use cases on answers: record what Lore answered (the question, the answer, the indexes
it searched and what it cited), and find an answer again for the person who asked it."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING

from bot.app.conversations import Actor
from knowledge import Answer, NotAllowed
from storage.access import Given
from storage.records import AnswerRecord, IndexRef, NotFound
from storage.repositories.answers import AnswerEntry
from storage.values import ConversationKind

if TYPE_CHECKING:
    from bot.app.services import Services

NOT_YOURS = "only the person who asked can share that answer, in the conversation where they asked"
NOT_HERE = "I can't show that answer here: it was given in another conversation."


class AnswerActions:
    def __init__(self, services: Services) -> None:
        self._answers = services.answers

    async def record(
        self,
        actor: Actor,
        question: str,
        answer: Answer,
        searched: Sequence[IndexRef] = (),
        *,
        thread: str | None = None,
    ) -> int:
        """Keep an answer (and the thread it was given in); its id is what its buttons carry."""
        entry = AnswerEntry(
            tenant_id=actor.place.tenant_id,
            question=question,
            text=answer.text,
            mode=answer.mode.value,
            fallback=answer.fallback.value if answer.fallback else None,
            abstained=answer.abstained,
            cited=[
                {
                    "n": c.n,
                    "name": c.name,
                    "url": c.url,
                    "index": c.index_name,
                    "index_id": c.index_id,
                    "document_id": c.document_id,
                    **({"section": c.section} if c.section else {}),
                }
                for c in answer.citations
            ],
            brief=answer.short(),
            thread=thread,
            conversation_id=actor.conversation.id,
            user_id=actor.user.id,
            searched=[index.id for index in searched],
            given=given_in(actor),
        )
        return await asyncio.to_thread(self._answers.record, entry)

    async def given_here(self, actor: Actor, answer_id: int) -> AnswerRecord:
        """An answer given in the conversation the actor is in (whoever asked it: everyone
        there saw it), for "Show more"; `NotAllowed` for one given anywhere else."""
        try:
            found = await asyncio.to_thread(self._answers.get, answer_id, actor.place.tenant_id)
        except NotFound:
            raise NotAllowed(NOT_HERE) from None
        if found.conversation_id != actor.conversation.id:
            raise NotAllowed(NOT_HERE)
        return found

    async def own(self, actor: Actor, answer_id: int) -> AnswerRecord:
        """An answer the actor was given in the conversation they are in (to share it
        there); `NotAllowed` for anyone else's, or from anywhere else."""
        try:
            found = await asyncio.to_thread(self._answers.get, answer_id, actor.place.tenant_id)
        except NotFound:
            raise NotAllowed(NOT_YOURS) from None
        if found.user_id != actor.user.id or found.conversation_id != actor.conversation.id:
            raise NotAllowed(NOT_YOURS)
        return found


def given_in(actor: Actor) -> Given:
    """Where the actor is being answered: their DM, or a private or public channel."""
    if actor.conversation.kind == ConversationKind.DM or actor.place.channel_id is None:
        return Given.DM
    return Given.PRIVATE_CHANNEL if actor.place.channel_is_private else Given.PUBLIC_CHANNEL
