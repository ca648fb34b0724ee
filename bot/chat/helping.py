"""Help channels in chat: a post to nobody answered when Lore is sure enough ("unasked"),
and the commands "answer questions here", "the experts here are …", "the answer to … is: …"
and "list verified answers". The use cases, and who may run them, are
`bot.app.actions.helping`; this renders them."""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence

from bot.app.services import Services
from bot.chat import commands as c
from bot.chat import messages
from bot.chat.grammar import asks_something
from bot.chat.render import render_verified_md
from bot.chat.surface import Offers, Surface, Turn
from knowledge import Answer, Request
from storage.records import IndexRef

log = logging.getLogger(__name__)

Recorder = Callable[[Turn, str, Sequence[IndexRef], float], Callable[[Answer], Awaitable[int]]]
"""Makes the function that records an answer given to a question (`Router._recorder`)."""


class HelpChannelCommands:
    def __init__(self, services: Services, recorder: Recorder) -> None:
        self._helping = services.actions.helping
        self._indexes = services.actions.indexes
        self._access = services.actions.access
        self._knowledge = services.knowledge
        self._recorder = recorder

    async def unasked(self, turn: Turn, surface: Surface) -> bool:
        """A message posted to nobody in a help channel: answered when it asks something and
        Lore is sure enough (the channel's threshold; a verified answer close enough counts),
        and nobody has begun answering it; else left alone (where there are experts and Lore
        found something, the asker alone is offered "Ask an expert").
        Whether Lore answered."""
        actor, command = turn.actor, turn.command
        if not actor.conversation.help_channel or not isinstance(command, c.Question):
            return False
        text = command.text
        post = f"help channel post {turn.thread_id} (conversation {actor.conversation.id})"
        if not asks_something(text):
            log.info("%s: left alone, not a question", post)
            return False
        indexes = await self._indexes.enabled(actor)
        if not indexes:
            log.info("%s: left alone, no index to answer from", post)
            return False
        started = time.monotonic()
        # Posted in the channel, for everyone there: only what everyone there may read.
        access = await self._access.for_answer(actor, private=False)
        request = Request(indexes, [{"role": "user", "content": text}], unasked=True, access=access)
        answer = await self._knowledge.ask(request)
        record = self._recorder(turn, text, indexes, started)
        experts = bool(actor.conversation.experts)
        threshold = self._helping.threshold(actor.conversation)
        # Why Lore spoke or not, without the message's words: what an operator tuning the
        # channel's threshold reads (and what `bench.help_channel` counts).
        found = "abstained" if answer.abstained else f"confidence {answer.confidence or 0.0:.3f}"
        weighed = f"{found}, threshold {threshold:.3f}, verified {answer.verified is not None}"
        if not sure(answer, threshold):
            log.info("%s: left alone, not sure (%s)", post, weighed)
            if experts and (not answer.abstained or answer.verified is not None):
                await surface.not_sure(messages.NOT_SURE_OFFER, await record(answer))
            return False
        if await turn.answered_by_people():
            log.info("%s: left alone, people are answering (%s)", post, weighed)
            return False
        log.info("%s: answered (%s)", post, weighed)
        await surface.answer(_events(answer), record, Offers(experts=experts))
        return True

    async def help_channel(self, command: c.HelpChannel, turn: Turn, surface: Surface) -> None:
        helping = self._helping
        conversation = await helping.help_mode(turn.actor, command.on, command.confidence)
        await surface.say(messages.help_mode(command.on, helping.threshold(conversation)))

    async def set_experts(self, command: c.SetExperts, turn: Turn, surface: Surface) -> None:
        conversation = await self._helping.set_experts(turn.actor, command.experts)
        await surface.say(messages.experts_set(conversation.experts))

    async def teach(self, command: c.Teach, turn: Turn, surface: Surface) -> None:
        saved = await self._helping.teach(turn.actor, command.question, command.answer)
        await surface.say(messages.verified_saved(saved.question))

    async def list_verified(self, command: c.ListVerified, turn: Turn, surface: Surface) -> None:
        kept = await self._helping.here(turn.actor)
        await surface.tell(render_verified_md(kept))


def sure(answer: Answer, threshold: float) -> bool:
    """Whether an answer may be given where nobody asked Lore: the documents' answer at
    `threshold` or more, or a verified answer close enough to stand on its own
    (`VerifiedMatch.confident`)."""
    documents = not answer.abstained and (answer.confidence or 0.0) >= threshold
    if answer.verified is not None:
        return answer.verified.confident or documents
    return documents


async def _events(answer: Answer) -> AsyncIterator[Answer]:
    yield answer
