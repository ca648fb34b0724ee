"""Use cases on help channels, experts and verified answers.

A help channel is a channel where Lore answers questions posted to nobody, when it is
confident (`threshold`); its experts are the people (or user groups) Lore asks when it is
not. Both are the channel's answer settings: workspace admins change them in a channel, as
they change the answer mode (`storage.access.may_change_answers`).

A verified answer is a question and the answer a person marked as right. It is kept in the
channel's own index, so whoever may search that index finds it, and nobody else; saving one
is `Action.ADD` there (the channel's members). Who may mark what:
- any member, a person's reply in a thread ("Save as the answer", or saying “the answer to
  … is …”);
- the asker (who started the thread) or an expert, with ✅ on a reply;
- an expert (or an admin), Lore's own answer ("Verify");
- experts and admins edit, set aside for review, verify again and remove them (from the Home).
A verified answer is set aside for review after `LORE_VERIFIED_REVIEW_DAYS`, and when a
document it rests on changes (`knowledge.answering.verified`).

A verified answer remembers who asked its question in those words (`asked_by`): when that
person is forgotten (`lore forget-user`), the wording goes with them, and the answer waits,
set aside, until an expert gives it a question in their own words (Edit, in the Home).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from bot.app.actions.errors import ANSWER_SETTINGS, PARTNERS, refused
from bot.app.conversations import Actor, enter_channel
from knowledge import KnowledgeError, NotAllowed
from storage.access import Action, allowed, may_change_answers
from storage.records import (
    AnswerRecord,
    ChannelRef,
    ConversationRef,
    IndexRef,
    NotFound,
    UserRef,
    VerifiedRef,
)
from storage.repositories.verified import VerifiedEntry

if TYPE_CHECKING:
    from bot.app.services import Services

MembersOf = Callable[[str], Awaitable[Collection[str]]]
"""The members (Slack user ids) of a user group (S…), as the surface can ask them."""
LORE = "Lore"
"""Who answered, for an answer of Lore's own."""
ONLY_IN_CHANNELS = "Verified answers belong to a channel: mark them in the channel they answer."
NOT_AN_EXPERT = (
    "Only this channel's experts (or a workspace admin) can do that. An admin names them with "
    "“experts here are @someone @another”."
)
NOT_THE_ASKER = "Only the person who asked (or an expert) can mark the answer with ✅."
NO_EXPERTS = "This channel has no experts yet; an admin names them with “experts here are @someone”."
NOT_HERE = "That answer was given in another conversation."
NOT_SHAREABLE = (
    "That answer draws on documents their source lets only some people read, so it can't be a "
    "verified answer: I give verified answers to whoever asks here."
)
NOT_A_MEMBER = "You can manage a channel's verified answers from Home only for channels you are in."
NEEDS_A_QUESTION = (
    "That verified answer has no question any more (whoever asked it was forgotten): edit it "
    "and write the question it answers, in your own words."
)
QUESTION_LIMIT = 2_000
ANSWER_LIMIT = 4_000


async def no_groups(group: str) -> Collection[str]:
    """Where user groups cannot be asked (the shell): nobody is in one."""
    return ()


@dataclass(frozen=True)
class VerifiedListing:
    """A verified answer as the Home lists it, and whether the viewer may manage it."""

    verified: VerifiedRef
    channel: ChannelRef
    manageable: bool


class HelpActions:
    def __init__(self, services: Services) -> None:
        self._services = services
        self._directory = services.directory
        self._repository = services.verified_answers

    # -- the channel's settings ---------------------------------------------------------------

    async def help_mode(self, actor: Actor, on: bool, confidence: float | None = None) -> ConversationRef:
        """Make the conversation a help channel (with its own confidence, or the default), or not."""
        self._check_settings(actor)
        if actor.place.is_private:
            raise KnowledgeError(
                "A help channel is a channel: say it in the channel where people ask questions."
            )
        return await asyncio.to_thread(
            self._directory.set_conversation_options,
            actor.conversation.id,
            help_channel=on,
            help_confidence=confidence,
            default_confidence=on and confidence is None,
        )

    async def set_experts(self, actor: Actor, experts: Sequence[str]) -> ConversationRef:
        """Who Lore asks here when it cannot answer (Slack ids of people and user groups)."""
        self._check_settings(actor)
        if actor.place.is_private:
            raise KnowledgeError("Experts answer in a channel: name them in the channel they look after.")
        return await asyncio.to_thread(
            self._directory.set_conversation_options, actor.conversation.id, experts=list(experts)
        )

    def threshold(self, conversation: ConversationRef) -> float:
        """How confident Lore must be to answer unasked in this conversation."""
        own = conversation.help_confidence
        return own if own is not None else self._services.settings.lore_help_confidence

    async def is_expert(self, actor: Actor, members_of: MembersOf = no_groups) -> bool:
        """Whether the actor is one of the conversation's experts (in person or through a
        user group), or a workspace admin."""
        if actor.place.user_is_admin and not actor.place.partner:
            return True
        experts = actor.conversation.experts
        if actor.user.external_id in experts:
            return True
        for group in (e for e in experts if e.startswith("S")):
            if actor.user.external_id in await members_of(group):
                return True
        return False

    # -- marking answers as right ------------------------------------------------------------

    async def save_reply(
        self,
        actor: Actor,
        *,
        question: str,
        answer: str,
        answered_by: str,
        link: str | None,
        source_key: str,
        asker: str = "",
        answerer: str = "",
    ) -> VerifiedRef:
        """A person's reply as the verified answer to the thread's question (any member);
        `asker`: the Slack id of who asked it (who started the thread), `answerer`: of who
        replied (named `answered_by`), so that forgetting either finds what they left."""
        index = await self._channel_index(actor)
        asked_by, written_by = await self._user_id(actor, asker), await self._user_id(actor, answerer)
        return await self._save(
            actor,
            index,
            question,
            answer,
            answered_by,
            link,
            source_key,
            asked_by=asked_by,
            answered_by_user=written_by,
        )

    async def _user_id(self, actor: Actor, external_id: str) -> int | None:
        if not external_id:
            return None
        person = await asyncio.to_thread(self._directory.ensure_user, actor.place.tenant_id, external_id)
        return person.id

    async def save_by_reaction(
        self,
        actor: Actor,
        *,
        asker: str,
        question: str,
        answer: str,
        answered_by: str,
        link: str | None,
        source_key: str,
        answerer: str = "",
        members_of: MembersOf = no_groups,
    ) -> VerifiedRef:
        """✅ on a reply: the asker's (`asker`, the Slack id who started the thread) or an expert's."""
        if actor.user.external_id != asker and not await self.is_expert(actor, members_of):
            raise NotAllowed(NOT_THE_ASKER)
        return await self.save_reply(
            actor,
            question=question,
            answer=answer,
            answered_by=answered_by,
            link=link,
            source_key=source_key,
            asker=asker,
            answerer=answerer,
        )

    async def verify_answer(
        self, actor: Actor, answer_id: int, link: str | None, members_of: MembersOf = no_groups
    ) -> VerifiedRef:
        """Lore's own answer, given in this conversation, as the verified answer (experts)."""
        if not await self.is_expert(actor, members_of):
            raise NotAllowed(NOT_AN_EXPERT)
        record = await self._answer_here(actor, answer_id)
        if record.abstained:
            raise KnowledgeError("There is no answer to verify there: I couldn't answer that question.")
        if not await self._services.actions.access.may_share(record.restricted):
            # a verified answer is given to whoever asks again: only from what everyone may read
            raise NotAllowed(NOT_SHAREABLE)
        index = await self._channel_index(actor)
        cited = await self._cited([int(c["document_id"]) for c in record.cited if c.get("document_id")])
        return await self._save(
            actor,
            index,
            record.question,
            record.brief or record.text or "",
            LORE,
            link,
            f"answer:{record.id}",
            cited=cited,
            answer_id=record.id,
            asked_by=record.user_id,
        )

    async def teach(self, actor: Actor, question: str, answer: str) -> VerifiedRef:
        """“the answer to … is …”: the speaker's own answer, verified by them (any member)."""
        index = await self._channel_index(actor)
        key = "said:" + " ".join(question.lower().split())[:200]
        return await self._save(
            actor,
            index,
            question,
            answer,
            actor.user.name or actor.user.external_id,
            None,
            key,
            asked_by=actor.user.id,
            answered_by_user=actor.user.id,
        )

    async def here(self, actor: Actor) -> list[VerifiedRef]:
        """The verified answers this channel keeps (“list verified answers”)."""
        if actor.place.channel_id is None:
            raise KnowledgeError(ONLY_IN_CHANNELS)
        channel = await asyncio.to_thread(self._directory.channel, actor.place.channel_id)
        index = await self._services.catalog.channel_index(channel)
        if not allowed(Action.SEARCH, index.facts, actor.place):
            raise refused(Action.SEARCH, index)
        return await asyncio.to_thread(self._repository.of_indexes, [index.id])

    # -- escalation -----------------------------------------------------------------------------

    async def escalate(self, actor: Actor, answer_id: int) -> AnswerRecord:
        """ "Ask an expert" on an answer given in this conversation: marked as escalated."""
        if not actor.conversation.experts:
            raise KnowledgeError(NO_EXPERTS)
        record = await self._answer_here(actor, answer_id)
        if record.user_id != actor.user.id and not await self._services.actions.access.may_share(
            record.restricted
        ):  # someone else's private answer (`/lore`): its question is theirs to take further
            raise NotAllowed(NOT_HERE)
        return await asyncio.to_thread(self._services.answers.escalate, record.id, actor.place.tenant_id)

    async def escalated_in(self, actor: Actor, thread: str) -> AnswerRecord | None:
        """The answer of this thread its asker escalated to the experts, if any."""
        return await asyncio.to_thread(self._services.answers.escalated_in, actor.conversation.id, thread)

    # -- the Home's list, and what experts do there -------------------------------------------

    async def listing(
        self, user: UserRef, member_of: Sequence[str], members_of: MembersOf = no_groups
    ) -> list[VerifiedListing]:
        """The verified answers of the channels the viewer is in, newest first."""
        found = await asyncio.to_thread(self._directory.channel_conversations, user.tenant_id, member_of)
        listed: list[VerifiedListing] = []
        for channel, _ in found:
            actor = await enter_channel(self._services, user, channel)
            index = await self._services.catalog.channel_index(channel)
            if not allowed(Action.SEARCH, index.facts, actor.place):
                continue
            manageable = await self.is_expert(actor, members_of)
            kept = await asyncio.to_thread(self._repository.of_indexes, [index.id])
            listed += [VerifiedListing(v, channel, manageable) for v in kept]
        return sorted(listed, key=lambda v: v.verified.verified_at, reverse=True)

    async def edit(
        self,
        user: UserRef,
        verified_id: int,
        answer: str,
        member_of: Sequence[str],
        members_of: MembersOf = no_groups,
        question: str | None = None,
    ) -> VerifiedRef:
        """New words for the answer, and for its question when `question` differs (then the
        question is the editor's own: forgetting whoever first asked it leaves it be)."""
        actor, verified = await self._manager(user, verified_id, member_of, members_of)
        text = answer.strip()[:ANSWER_LIMIT]
        if not text:
            raise KnowledgeError("A verified answer needs some words.")
        asked = " ".join((question or "").split())[:QUESTION_LIMIT]
        if not asked and not verified.question:
            raise KnowledgeError(NEEDS_A_QUESTION)
        worded = None
        if asked and asked != verified.question:
            verifier = self._services.verified
            worded = (asked, await verifier.vector(asked), verifier.model_id)
        return await asyncio.to_thread(self._repository.edit, verified_id, text, actor.user.id, worded)

    async def expire(
        self, user: UserRef, verified_id: int, member_of: Sequence[str], members_of: MembersOf = no_groups
    ) -> VerifiedRef:
        """Set aside for review: no longer answered with until verified again."""
        await self._manager(user, verified_id, member_of, members_of)
        await asyncio.to_thread(self._repository.flag, verified_id, "marked for review")
        return await asyncio.to_thread(self._repository.get, verified_id, user.tenant_id)

    async def renew(
        self, user: UserRef, verified_id: int, member_of: Sequence[str], members_of: MembersOf = no_groups
    ) -> VerifiedRef:
        """Verified again as it is, against the documents as they are now."""
        actor, verified = await self._manager(user, verified_id, member_of, members_of)
        if not verified.question:
            raise KnowledgeError(NEEDS_A_QUESTION)
        cited = await self._cited([int(c["document_id"]) for c in verified.cited if c.get("document_id")])
        return await asyncio.to_thread(
            self._repository.renew, verified_id, actor.user.id, self._review_at(), cited
        )

    async def remove(
        self, user: UserRef, verified_id: int, member_of: Sequence[str], members_of: MembersOf = no_groups
    ) -> VerifiedRef:
        _, verified = await self._manager(user, verified_id, member_of, members_of)
        await asyncio.to_thread(self._repository.delete, verified_id)
        return verified

    # -- helpers ---------------------------------------------------------------------------------

    def _check_settings(self, actor: Actor) -> None:
        if not may_change_answers(actor.place):
            raise NotAllowed(PARTNERS if actor.place.partner else ANSWER_SETTINGS)

    async def _channel_index(self, actor: Actor) -> IndexRef:
        """The channel's own index, where its verified answers are kept (`Action.ADD` there)."""
        if actor.place.channel_id is None:
            raise KnowledgeError(ONLY_IN_CHANNELS)
        channel = await asyncio.to_thread(self._directory.channel, actor.place.channel_id)
        index = await self._services.catalog.channel_index(channel)
        if not allowed(Action.ADD, index.facts, actor.place):
            raise refused(Action.ADD, index)
        return index

    async def _answer_here(self, actor: Actor, answer_id: int) -> AnswerRecord:
        try:
            record = await asyncio.to_thread(self._services.answers.get, answer_id, actor.place.tenant_id)
        except NotFound:
            raise NotAllowed(NOT_HERE) from None
        if record.conversation_id != actor.conversation.id:
            raise NotAllowed(NOT_HERE)
        return record

    async def _cited(self, document_ids: Sequence[int]) -> list[dict[str, object]]:
        found = await self._services.verified.cited(document_ids)
        return [
            {"document_id": i, "content_hash": found[i][1]} for i in dict.fromkeys(document_ids) if i in found
        ]

    def _review_at(self) -> datetime | None:
        days = self._services.settings.lore_verified_review_days
        return datetime.now(UTC) + timedelta(days=days) if days else None

    async def _save(
        self,
        actor: Actor,
        index: IndexRef,
        question: str,
        answer: str,
        answered_by: str,
        link: str | None,
        source_key: str,
        *,
        cited: Sequence[dict[str, object]] = (),
        answer_id: int | None = None,
        asked_by: int | None = None,
        answered_by_user: int | None = None,
    ) -> VerifiedRef:
        question, answer = " ".join(question.split())[:QUESTION_LIMIT], answer.strip()[:ANSWER_LIMIT]
        if not question or not answer:
            raise KnowledgeError(
                "A verified answer needs a question and an answer, and one of them is empty."
            )
        entry = VerifiedEntry(
            tenant_id=actor.place.tenant_id,
            index_id=index.id,
            source_key=source_key[:255],
            question=question,
            answer=answer,
            question_vector=await self._services.verified.vector(question),
            embedding_model=self._services.verified.model_id,
            answered_by=answered_by[:255],
            verified_by=actor.user.id,
            link=link,
            cited=list(cited),
            answer_id=answer_id,
            review_at=self._review_at(),
            asked_by=asked_by,
            answered_by_user=answered_by_user,
        )
        return await asyncio.to_thread(self._repository.save, entry)

    async def _manager(
        self, user: UserRef, verified_id: int, member_of: Sequence[str], members_of: MembersOf
    ) -> tuple[Actor, VerifiedRef]:
        """The viewer in the channel whose index keeps the verified answer, if they are in it
        and may manage it there (an expert, or an admin)."""
        try:
            verified = await asyncio.to_thread(self._repository.get, verified_id, user.tenant_id)
            index = await asyncio.to_thread(self._services.indexes.get, verified.index_id)
            if index.channel_id is None:
                raise NotAllowed(NOT_A_MEMBER)
            channel = await asyncio.to_thread(self._directory.channel, index.channel_id)
        except NotFound:
            raise KnowledgeError("That verified answer no longer exists.") from None
        if channel.external_id not in member_of:
            raise NotAllowed(NOT_A_MEMBER)
        actor = await enter_channel(self._services, user, channel)
        if not await self.is_expert(actor, members_of):
            raise NotAllowed(NOT_AN_EXPERT)
        return actor, verified
