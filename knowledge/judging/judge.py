"""Whether what was found answers the question: the second stage's ranking of the passages,
the calibrated confidence that they answer (`knowledge.judging.abstain`), and, without a model, the
answer quoted from them or the honest abstention that confidence calls for.

`Judge` is the one place these are decided; `knowledge.engine` asks it before choosing how
to answer, and `knowledge.answering.generation` asks it again when a model fails and the documents
must speak for themselves.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace

from knowledge.answering.answer import Answer, Fallback, ResponseMode
from knowledge.answering.extractive import MOST_QUOTED, abstention, extractive_answer
from knowledge.errors import EmbedderUnavailable
from knowledge.judging.abstain import CALIBRATION, Calibration, Evidence, elsewhere, evidence
from knowledge.judging.ranking import Ranker, Ranking, Scored
from knowledge.search.retrieval import Retrieval, Retriever

log = logging.getLogger(__name__)

READ_ON = MOST_QUOTED
"""How many of the best passages an answer may quote on into the passage that follows."""


class Judge:
    """Ranks what the first stage found and says how sure Lore is that it answers.

    `relevance_floor` is the best cosine similarity under which nothing found is relevant
    (no ranking is done); `confident_similarity` is where the plain similarity confidence
    (`similarity`) reaches 1.0.
    """

    def __init__(
        self,
        retriever: Retriever,
        ranker: Ranker,
        *,
        relevance_floor: float,
        confident_similarity: float,
        calibration: Calibration = CALIBRATION,
    ) -> None:
        self._retriever = retriever
        self._ranker = ranker
        self.relevance_floor = relevance_floor
        self._confident_similarity = confident_similarity
        self._calibration = calibration

    async def __call__(self, question: str, retrieval: Retrieval) -> tuple[Ranking, float]:
        """The second stage's ranking of what was found, and the calibrated confidence that
        it answers the question (0.0 when nothing relevant was found, or when the best
        passage answers for another project than the question names: `elsewhere`). When
        the confidence is enough to answer, the best passages are read on (`READ_ON`)."""
        if not self.relevant(retrieval):
            return Ranking(question, []), 0.0
        ranking, found = await self.weigh(question, retrieval)
        if found is None:
            return ranking, self._calibration.threshold
        confidence = 0.0 if elsewhere(ranking) else self._calibration.confidence(found)
        if self.answers(confidence):
            ranking = await self._read_on(ranking)
        return ranking, confidence

    async def weigh(self, question: str, retrieval: Retrieval) -> tuple[Ranking, Evidence | None]:
        """The second stage's ranking of what was found and the evidence abstention reads
        (`knowledge.judging.abstain`); with nothing to weigh (keyword hits only, the embedder failed),
        the first stage's order and None."""
        unweighed = Ranking(question, [Scored(h, h.score, []) for h in retrieval.hits])
        if retrieval.best_similarity is None:
            return unweighed, None
        before = await self._retriever.preceding(retrieval.hits[: self._ranker.depth])
        try:
            ranking = await self._ranker.rank(question, retrieval.hits, before)
        except EmbedderUnavailable as exc:
            log.warning("second stage skipped, the embedder failed: %s", exc)
            return unweighed, None
        found = evidence(ranking, retrieval.hits)
        return (ranking, found) if found is not None else (unweighed, None)

    def similarity(self, retrieval: Retrieval) -> float:
        """A plainer confidence in [0, 1], from the best dense similarity alone (how close
        the closest passage is, not whether it answers)."""
        best = retrieval.best_similarity
        if best is None:
            return 0.5 if retrieval.hits else 0.0
        floor, top = self.relevance_floor, self._confident_similarity
        return min(1.0, max(0.0, (best - floor) / (top - floor)))

    def relevant(self, retrieval: Retrieval) -> bool:
        """Whether anything found is close enough to the question to be worth ranking."""
        if not retrieval.hits:
            return False
        best = retrieval.best_similarity
        return best is None or best >= self.relevance_floor

    def answers(self, confidence: float) -> bool:
        """Whether the documents answer at `confidence` (`Calibration.threshold`)."""
        return confidence >= self._calibration.threshold

    def hedges(self, confidence: float | None) -> bool:
        """Whether an answer at `confidence` comes with a caveat (`Calibration.hedge`)."""
        return confidence is not None and self.answers(confidence) and confidence < self._calibration.hedge

    def quote(
        self,
        ranking: Ranking,
        retrieval: Retrieval,
        mode: ResponseMode,
        *,
        confidence: float,
        fallback: Fallback | None = None,
        notices: Sequence[str] = (),
        hedged: bool | None = None,
    ) -> Answer:
        """The answer quoted from the ranking when it answers at `confidence`, else the
        abstention that says where Lore looked (`knowledge.answering.extractive`). The answer is
        `hedged` as the caller says, else as the confidence calls for (`hedges`)."""
        if not ranking.passages or not self.answers(confidence):
            return abstention(
                retrieval, mode, ranking=ranking, confidence=confidence, fallback=fallback, notices=notices
            )
        return extractive_answer(
            ranking,
            retrieval,
            mode,
            confidence=confidence,
            fallback=fallback,
            notices=notices,
            relevance_floor=self.relevance_floor,
            hedged=self.hedges(confidence) if hedged is None else hedged,
        )

    async def _read_on(self, ranking: Ranking) -> Ranking:
        """The ranking with its first `READ_ON` passages each read on into the passage that
        follows it in its document (what their quotes may continue into: a passage often
        ends by introducing the list or the example that answers)."""
        passages = list(ranking.passages)
        for i, passage in enumerate(passages[:READ_ON]):
            if not passage.units:
                continue
            following = await self._retriever.following(passage.hit)
            if following is not None:
                passages[i] = self._ranker.read_on(ranking, passage, following)
        return replace(ranking, passages=passages)
