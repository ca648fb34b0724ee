"""Use cases on feedback: people judge answers (helpful or not, what was wrong, a comment),
and the people who look after an index see the answers it gave that did not help and the
questions it could not answer (`Action.REVIEW` in the permission table: a personal index's
owner; a channel index's members, from its channel; a shared index's creator; admins)."""

from __future__ import annotations

import asyncio
import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from storage.access import Action, IndexFacts, Place, allowed
from storage.records import IndexRef, NotFound, ReviewItem
from storage.repositories.history import Asked
from storage.values import ConversationKind, FeedbackReason, Scope

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
        if not helpful:  # a coverage gap now (the job groups it with its kept vector)
            await self._services.gaps.keep(answer_id, answer.question)
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
        reviews = []
        for reviewed in indexes:
            mine = [item for item in items if reviewed.id in item.answer.index_ids]
            unanswered = tuple(i for i in mine if i.answer.abstained)
            unhelpful = tuple(i for i in mine if not i.answer.abstained)
            if unanswered or unhelpful:
                reviews.append(IndexReview(reviewed, unhelpful, unanswered))
        return reviews


class Sight(enum.StrEnum):
    """How much of a question and its answer a reader sees (the feedback review's rule)."""

    TEXT = "reads its question, answer, sources and comments"
    COUNT = "only counts it"


class Given(enum.StrEnum):
    DM = "a DM"
    PRIVATE_CHANNEL = "a private channel"
    PUBLIC_CHANNEL = "a public channel"


def given_in(asked: Asked) -> Given:
    """Where a question was asked, failing closed: a DM unless a channel says otherwise."""
    if asked.conversation_kind != ConversationKind.CHANNEL or asked.channel_id is None:
        return Given.DM
    return Given.PRIVATE_CHANNEL if asked.channel_is_private else Given.PUBLIC_CHANNEL


def sight(place: Place, asked: Asked, indexes: Sequence[IndexFacts | None]) -> Sight | None:
    """How much `place` sees of a question it reviews (None: nothing, not even a count), by
    where it was asked: a DM's is its asker's alone, in private (admins count it); a private
    channel's is read from that channel (admins count it); a public channel's by anyone of
    the workspace. Its text also needs every index it searched or quoted (`indexes`, None
    for one that is gone) to be searchable from `place`."""
    if place.partner:
        return None
    given = given_in(asked)
    if given == Given.DM:
        reads = place.is_private and place.user_id is not None and place.user_id == asked.asker_id
    elif given == Given.PRIVATE_CHANNEL:
        reads = place.channel_id is not None and place.channel_id == asked.channel_id
    else:
        reads = True
    searchable = all(i is not None and allowed(Action.SEARCH, i, place) for i in indexes)
    if reads and searchable:
        return Sight.TEXT
    if reads or place.user_is_admin:
        return Sight.COUNT
    return None
