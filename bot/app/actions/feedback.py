"""Use cases on feedback: people judge answers (helpful or not, what was wrong, a comment),
and the people who look after an index see the answers it gave that did not help and the
questions it could not answer (`Action.REVIEW` in the permission table: a personal index's
owner; a channel index's members, from its channel; a shared index's creator; admins).

What a reviewer sees of each answer depends on where it was given (`storage.access.FEEDBACK`
and `sight`): a DM's answer only its asker reads (an admin counts it), a private channel's
only its members, from there; and never the text of an answer that searched or quoted an
index the reviewer may not search. Answers they may only count are counted, not shown."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from storage.access import Action, Given, IndexFacts, Place, Sight, sight
from storage.records import AnswerRecord, ChannelRef, IndexRef, NotFound, ReviewItem, VerifiedRef
from storage.values import FeedbackReason

if TYPE_CHECKING:
    from bot.app.services import Services

REVIEW_LIMIT = 50
Reads = Callable[[ChannelRef], Awaitable[bool]]
"""Whether the person acting reads a channel (a surface's platform says)."""


@dataclass(frozen=True)
class Verdict:
    """Feedback recorded, and whose eyes it reaches: the indexes the answer searched, and
    where it was given (a DM's answer stays with its asker)."""

    answer_id: int
    helpful: bool
    indexes: tuple[str, ...]
    given: Given


@dataclass(frozen=True)
class IndexReview:
    """What the people who look after one index should look at."""

    index: IndexRef
    unhelpful: tuple[ReviewItem, ...]
    unanswered: tuple[ReviewItem, ...]
    withheld_unhelpful: int = 0
    """Unhelpful answers given where the reviewer may not read them: counted, not shown."""
    withheld_unanswered: int = 0

    escalated: tuple[AnswerRecord, ...] = ()
    """Answers someone took to the experts ("Ask an expert"), where the reviewer may read them."""
    verified: tuple[VerifiedRef, ...] = ()
    """The verified answers the index keeps (those awaiting review first)."""

    @property
    def empty(self) -> bool:
        return not (self.total_unhelpful or self.total_unanswered or self.escalated or self.verified)

    @property
    def total_unhelpful(self) -> int:
        return len(self.unhelpful) + self.withheld_unhelpful

    @property
    def total_unanswered(self) -> int:
        return len(self.unanswered) + self.withheld_unanswered


class FeedbackActions:
    def __init__(self, services: Services) -> None:
        self._services = services
        self._answers = services.answers

    async def give(
        self,
        place: Place,
        answer_id: int,
        helpful: bool,
        *,
        reads: Reads,
        reason: FeedbackReason | None = None,
        comment: str | None = None,
    ) -> Verdict | None:
        """Record the place's user's verdict on an answer they could see: one given in their
        own DM, in a public channel of their workspace, or in a private channel `reads` says
        they are in (the surface asks its platform, so an answer id in a forged payload
        reaches nothing). None for any other answer, or none, or with no user to attribute
        it to."""
        if place.user_id is None or not await self._may_judge(place, answer_id, reads):
            return None
        text = (comment or "").strip() or None
        try:
            await asyncio.to_thread(
                self._answers.set_feedback,
                answer_id,
                place.tenant_id,
                place.user_id,
                helpful,
                reason=reason,
                comment=text,
            )
            answer = await asyncio.to_thread(self._answers.get, answer_id, place.tenant_id)
        except NotFound:
            return None
        if not helpful:  # a coverage gap now (the job groups it with its kept vector)
            await self._services.gaps.keep(answer_id, answer.question)
        indexes = [await asyncio.to_thread(self._services.indexes.get, i) for i in answer.index_ids]
        return Verdict(answer_id, helpful, tuple(sorted({i.name for i in indexes})), answer.given)

    async def _may_judge(self, place: Place, answer_id: int, reads: Reads) -> bool:
        try:
            answer = await asyncio.to_thread(self._answers.get, answer_id, place.tenant_id)
        except NotFound:
            return False
        if answer.given == Given.DM or answer.channel_id is None:
            return answer.user_id is not None and answer.user_id == place.user_id
        if answer.given == Given.PUBLIC_CHANNEL and not place.partner:
            return True  # a public channel is open to everyone of the workspace
        channel = await asyncio.to_thread(self._services.directory.channel, answer.channel_id)
        return await reads(channel)

    async def review(
        self, place: Place, index: str | None = None, *, limit: int = REVIEW_LIMIT
    ) -> list[IndexReview]:
        """Per index the place may review (or only `index`, by name), its unhelpful
        answers and unanswered questions, newest first. An index with neither is left out."""
        catalog = self._services.catalog
        if index is not None:
            indexes = [await catalog.find(place, index, Action.REVIEW)]
        else:
            indexes = await catalog.visible(place, Action.REVIEW)
        if not indexes:
            return []
        ids = [i.id for i in indexes]
        items = await asyncio.to_thread(self._answers.review, place.tenant_id, ids, limit=limit)
        items = await self._within_reach(place, items)
        seen = {item.answer.id: await self._sight(item, place) for item in items}
        escalated = await asyncio.to_thread(self._answers.escalated, place.tenant_id, ids, limit=limit)
        escalated = [a for a in escalated if await self._answer_sight(a, place) == Sight.TEXT]
        escalated = await self._reach(place, escalated)
        verified = await asyncio.to_thread(self._services.verified_answers.of_indexes, ids)
        reviews = []
        for reviewed in indexes:
            mine = [i for i in items if reviewed.id in i.answer.index_ids and seen[i.answer.id] is not None]
            shown = [i for i in mine if seen[i.answer.id] == Sight.TEXT]
            withheld = [i for i in mine if seen[i.answer.id] == Sight.COUNT]
            review = IndexReview(
                reviewed,
                unhelpful=tuple(i for i in shown if not i.answer.abstained),
                unanswered=tuple(i for i in shown if i.answer.abstained),
                withheld_unhelpful=sum(not i.answer.abstained for i in withheld),
                withheld_unanswered=sum(i.answer.abstained for i in withheld),
                escalated=tuple(a for a in escalated if reviewed.id in a.index_ids),
                verified=tuple(
                    sorted(
                        (v for v in verified if v.index_id == reviewed.id),
                        key=lambda v: v.live,
                    )[:limit]
                ),
            )
            if not review.empty:
                reviews.append(review)
        return reviews

    async def _within_reach(self, place: Place, items: list[ReviewItem]) -> list[ReviewItem]:
        """The items as the reviewer may see them (`_reach`)."""
        answers = await self._reach(place, [item.answer for item in items])
        return [replace(item, answer=answer) for item, answer in zip(items, answers, strict=True)]

    async def _reach(self, place: Place, answers: list[AnswerRecord]) -> list[AnswerRecord]:
        """The answers as the reviewer may see them: one that drew on documents its source
        does not let them read keeps its question, not its text or glance, nor the citations
        of those documents."""
        restricted = sorted({d for answer in answers for d in answer.restricted})
        if not restricted:
            return answers
        readable = await self._services.actions.access.readable(place, restricted)
        shown = []
        for answer in answers:
            hidden = set(answer.restricted) - readable
            if hidden:
                cited = [c for c in answer.cited if c.get("document_id") not in hidden]
                answer = replace(answer, text=None, brief=None, cited=cited)
            shown.append(answer)
        return shown

    async def _sight(self, item: ReviewItem, place: Place) -> Sight | None:
        """How much of the answer the reviewer at `place` may see, by where it was given
        and the indexes it searched and quoted."""
        return await self._answer_sight(item.answer, place)

    async def _answer_sight(self, answer: AnswerRecord, place: Place) -> Sight | None:
        ids = sorted({*answer.index_ids, *answer.cited_index_ids})
        facts = [await self._facts(i) for i in ids]
        return sight(answer.facts, facts, place)

    async def _facts(self, index_id: int) -> IndexFacts | None:
        try:
            return (await asyncio.to_thread(self._services.indexes.get, index_id)).facts
        except NotFound:
            return None
