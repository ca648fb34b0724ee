"""Verified answers: questions a person answered and someone marked as right, answered first.

A verified answer is kept in an index (a channel's own, `storage.repositories.verified`), so
it is found only where that index is searched, by whoever may search it. A question matches
one when the local embedder finds the two questions close (`MATCH`) and the new one does not
say the opposite of it (`knowledge.answering.opposites`: "after each request" of "before each
request", which the embedder finds as close as a rewording). The match shows the question it
answers, so a reader sees when it answers a neighbouring one. Where Lore speaks unasked (a
help channel) a match answers on its own only when closer still (`CONFIDENT`).

What was measured (`python -m bench.verified`, 20 questions each with a rewording and a
neighbouring question that must not match, written before any was run; the thresholds were
chosen on the 10 `tune` ones): MiniLM puts a rewording ("what's the way to…") at 0.54–0.91
of its question and a neighbouring question at 0.24–0.97, so no threshold separates them.

A verified answer is set aside for review, no longer answered with, when its review date
passes or a document it rests on changes or goes; one resting on a document outside the
indexes searched is not answered with (the document may be one the asker may not read).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np

from knowledge.answering.opposites import contradicts, statements_of
from knowledge.backends.embedding import Embedder
from storage.document_access import PUBLIC_ONLY, AccessFilter
from storage.records import IndexRef, VerifiedRef
from storage.repositories.verified import VerifiedRepository

log = logging.getLogger(__name__)

MATCH = 0.57
"""Cosine similarity of two questions at which a verified answer is answered first: midway
between the 9th and the 10th closest of the 10 `tune` rewordings (0.60 and 0.54), so that 9 of
them match (`bench.verified`)."""
CONFIDENT = 0.8
"""Similarity at which a verified answer may answer unasked on its own: above every `tune`
neighbouring question that does not say the opposite (the closest, 0.72)."""
EXPIRED = "expired"
CHANGED = "document changed"
MARKED = "marked for review"


@dataclass(frozen=True)
class VerifiedMatch:
    """A verified answer found for a question."""

    id: int
    question: str
    """The question it answers (shown, so a reader sees whether it is theirs)."""
    answer: str
    verified_by: str
    verified_at: datetime
    link: str | None
    similarity: float
    index_id: int

    @property
    def confident(self) -> bool:
        """Close enough to answer where nobody asked Lore (`CONFIDENT`)."""
        return self.similarity >= CONFIDENT


class VerifiedAnswers:
    """Finds the verified answer a question matches, among those of the indexes searched."""

    def __init__(self, repository: VerifiedRepository, embedder: Embedder) -> None:
        self._repository = repository
        self._embedder = embedder

    @property
    def model_id(self) -> str:
        return self._embedder.model_id

    async def vector(self, question: str) -> list[float]:
        """The question as stored with its verified answer."""
        return [float(x) for x in (await self._embedder.embed([question]))[0]]

    async def cited(self, document_ids: Sequence[int]) -> dict[int, tuple[int, str]]:
        """The documents an answer rests on as they are now: index and content hash, by id."""
        return await asyncio.to_thread(self._repository.documents, list(document_ids))

    async def match(
        self,
        indexes: Sequence[IndexRef],
        question: str,
        *,
        access: AccessFilter = PUBLIC_ONLY,
        now: datetime | None = None,
    ) -> VerifiedMatch | None:
        """The closest live verified answer of `indexes` whose question `question` means, if
        any (set aside for review, along the way, the ones found expired or stale). One that
        rests on a document `access` may not read (its source restricts it) is never given:
        its text may quote it."""
        searched = {i.id for i in indexes}
        kept = await asyncio.to_thread(self._repository.of_indexes, sorted(searched), live_only=True)
        if not kept or not question.strip():
            return None
        asked = (await self._embedder.embed([question]))[0]
        scored = [
            (float(np.dot(asked, np.asarray(v.question_vector, dtype=np.float32))), v)
            for v in kept
            if v.embedding_model == self._embedder.model_id and len(v.question_vector) == len(asked)
        ]
        for similarity, verified in sorted(scored, key=lambda s: -s[0]):
            if similarity < MATCH:
                break
            if contradicts(question, statements_of(verified.question)):
                continue
            if await self._usable(verified, searched, access, now or datetime.now(UTC)):
                return VerifiedMatch(
                    verified.id,
                    verified.question,
                    verified.answer,
                    verified.verified_by_name,
                    verified.verified_at,
                    verified.link,
                    round(similarity, 4),
                    verified.index_id,
                )
        return None

    async def stale(self, verified: VerifiedRef, now: datetime | None = None) -> str | None:
        """Why `verified` should be reviewed now (`EXPIRED`, `CHANGED`), if it should."""
        if verified.review_at is not None and verified.review_at <= (now or datetime.now(UTC)):
            return EXPIRED
        ids = [int(c["document_id"]) for c in verified.cited if c.get("document_id") is not None]
        found = await self.cited(ids)
        for cited in verified.cited:
            document = found.get(int(cited.get("document_id", -1)))
            if document is None or document[1] != cited.get("content_hash"):
                return CHANGED
        return None

    async def _usable(
        self, verified: VerifiedRef, searched: set[int], access: AccessFilter, now: datetime
    ) -> bool:
        reason = await self.stale(verified, now)
        if reason is not None:
            log.info("verified answer %s set aside for review: %s", verified.id, reason)
            await asyncio.to_thread(self._repository.flag, verified.id, reason)
            return False
        ids = [int(c["document_id"]) for c in verified.cited if c.get("document_id") is not None]
        readable = await asyncio.to_thread(self._repository.documents, ids, access)
        return len(readable) == len(set(ids)) and all(index in searched for index, _ in readable.values())
