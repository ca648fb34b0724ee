"""Use cases on feedback: people judge answers (helpful or not, what was wrong, a comment),
and the people who look after an index see the answers it gave that did not help and the
questions it could not answer (`Action.REVIEW` in the permission table: a personal index's
owner; a channel index's members, from its channel; a shared index's creator; admins)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from storage.access import Action, Place
from storage.records import IndexRef, NotFound, ReviewItem
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
        items = await asyncio.to_thread(
            self._answers.review, place.tenant_id, [i.id for i in indexes], limit=limit
        )
        items = await self._within_reach(place, items)
        reviews = []
        for reviewed in indexes:
            mine = [item for item in items if reviewed.id in item.answer.index_ids]
            unanswered = tuple(i for i in mine if i.answer.abstained)
            unhelpful = tuple(i for i in mine if not i.answer.abstained)
            if unanswered or unhelpful:
                reviews.append(IndexReview(reviewed, unhelpful, unanswered))
        return reviews

    async def _within_reach(self, place: Place, items: list[ReviewItem]) -> list[ReviewItem]:
        """The items as the reviewer may see them: an answer that drew on documents its
        source does not let them read keeps its question and verdicts, not its text, nor the
        citations of those documents."""
        restricted = sorted({d for item in items for d in item.answer.restricted})
        if not restricted:
            return items
        readable = await self._services.actions.access.readable(place, restricted)
        shown = []
        for item in items:
            hidden = set(item.answer.restricted) - readable
            if hidden:
                cited = [c for c in item.answer.cited if c.get("document_id") not in hidden]
                item = replace(item, answer=replace(item.answer, text=None, cited=cited))
            shown.append(item)
        return shown
