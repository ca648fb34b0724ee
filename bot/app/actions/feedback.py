"""Use cases on feedback: people judge answers (helpful or not, what was wrong, a comment),
and the people who look after an index see the answers it gave that did not help and the
questions it could not answer (`Action.REVIEW` in the permission table: a personal index's
owner; a channel index's members, from its channel; a shared index's creator; admins)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING

from storage.access import Action, Place
from storage.records import AnswerRecord, IndexRef, NotFound, ReviewItem, VerifiedRef
from storage.values import FeedbackReason, Scope

if TYPE_CHECKING:
    from bot.app.services import Services

REVIEW_LIMIT = 50


@dataclass(frozen=True)
class Verdict:
    """Feedback recorded, and whose eyes it reaches: the indexes the answer searched
    (`personal`: only the asker's own personal index, so only they will see it)."""

    answer_id: int
    helpful: bool
    indexes: tuple[str, ...]
    personal: bool


@dataclass(frozen=True)
class IndexReview:
    """What the people who look after one index should look at."""

    index: IndexRef
    unhelpful: tuple[ReviewItem, ...]
    unanswered: tuple[ReviewItem, ...]
    escalated: tuple[AnswerRecord, ...] = ()
    """Answers someone took to the experts ("Ask an expert")."""
    verified: tuple[VerifiedRef, ...] = ()
    """The verified answers the index keeps (those awaiting review first)."""

    @property
    def empty(self) -> bool:
        return not (self.unhelpful or self.unanswered or self.escalated or self.verified)


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
        reason: FeedbackReason | None = None,
        comment: str | None = None,
    ) -> Verdict | None:
        """Record the place's user's verdict on an answer of its workspace; None when there
        is no such answer (or no user to attribute it to)."""
        if place.user_id is None:
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
        indexes = [await asyncio.to_thread(self._services.indexes.get, i) for i in answer.index_ids]
        personal = bool(indexes) and all(i.scope == Scope.PERSONAL for i in indexes)
        return Verdict(answer_id, helpful, tuple(sorted({i.name for i in indexes})), personal)

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
        escalated = await asyncio.to_thread(self._answers.escalated, place.tenant_id, ids, limit=limit)
        verified = await asyncio.to_thread(self._services.verified_answers.of_indexes, ids)
        reviews = []
        for reviewed in indexes:
            mine = [item for item in items if reviewed.id in item.answer.index_ids]
            review = IndexReview(
                reviewed,
                unhelpful=tuple(i for i in mine if not i.answer.abstained),
                unanswered=tuple(i for i in mine if i.answer.abstained),
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
