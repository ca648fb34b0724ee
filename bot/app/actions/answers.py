"""Use cases on answers: record what Lore answered (the question, the answer, the indexes
it searched and what it cited), and find an answer again for the person who asked it."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING

from bot.app.actions.access import AccessActions
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
NOT_FOR_CHANNEL = (
    "that answer draws on documents their source lets only some people read, so I can't post it "
    "where everyone in the channel would see it; ask in the channel instead, and I'll answer from "
    "what everyone here may read"
)


class AnswerActions:
    def __init__(self, services: Services, access: AccessActions) -> None:
        self._services = services
        self._answers = services.answers
        self._access = access

    async def record(
        self,
        actor: Actor,
        question: str,
        answer: Answer,
        searched: Sequence[IndexRef] = (),
        *,
        thread: str | None = None,
        latency_ms: int | None = None,
    ) -> int:
        """Keep an answer (the thread it was given in, how long it took); its id is what its
        buttons carry. A question Lore could not answer keeps its vector too, for the
        coverage-gap job."""
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
            restricted=answer.restricted_documents,
            given=given_in(actor),
            latency_ms=latency_ms,
            verified=answer.verified is not None,
        )
        answer_id = await asyncio.to_thread(self._answers.record, entry)
        if answer.abstained:  # a coverage gap: its vector is kept while the search has it at hand
            await self._services.gaps.keep(answer_id, question)
        return answer_id

    async def given_here(self, actor: Actor, answer_id: int) -> AnswerRecord:
        """An answer given in the conversation the actor is in (whoever asked it: everyone
        there saw it), for "Show more"; `NotAllowed` for one given anywhere else, and for
        someone else's private answer (`/lore`) that drew on documents their source lets
        only some people read."""
        try:
            found = await asyncio.to_thread(self._answers.get, answer_id, actor.place.tenant_id)
        except NotFound:
            raise NotAllowed(NOT_HERE) from None
        if found.conversation_id != actor.conversation.id:
            raise NotAllowed(NOT_HERE)
        if found.user_id != actor.user.id and not await self._access.may_share(found.restricted):
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

    async def shareable(self, actor: Actor, answer_id: int) -> AnswerRecord:
        """`own`, refused when the answer drew on a document its source does not let
        everyone read: what a channel shows, everyone there reads."""
        found = await self.own(actor, answer_id)
        if not await self._access.may_share(found.restricted):
            raise NotAllowed(NOT_FOR_CHANNEL)
        return found


def given_in(actor: Actor) -> Given:
    """Where the actor is being answered: their DM, or a private or public channel."""
    if actor.conversation.kind == ConversationKind.DM or actor.place.channel_id is None:
        return Given.DM
    return Given.PRIVATE_CHANNEL if actor.place.channel_is_private else Given.PUBLIC_CHANNEL
