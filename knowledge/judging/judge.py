"""Whether what was found answers the question, said once as a `Verdict`: the second stage's
ranking of the passages, the calibrated confidence that they answer (`knowledge.judging.abstain`),
whether they answer for another project than the question names, and whether an answer from
them carries a caveat.

`Judge` is the one place these are decided; `knowledge.engine` asks it once per question and
the writers (`knowledge.answering`) take its verdict as it is. It writes no answer.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace

from knowledge.errors import EmbedderUnavailable
from knowledge.judging.abstain import Calibration, Elsewhere, Evidence, elsewhere, evidence
from knowledge.judging.ranking import Ranker, Ranking, Scored
from knowledge.search.retrieval import Retrieval, Retriever

log = logging.getLogger(__name__)

READ_ON = 4
"""How many of the best passages an answer may quote on into the passage that follows: as
many as it quotes at most (`knowledge.answering.extractive.MOST_QUOTED`)."""


@dataclass(frozen=True)
class Verdict:
    """What the judge says of what was found for a question, computed once."""

    ranking: Ranking
    """The passages, best first, with their scored units (the best read on)."""
    confidence: float
    """How sure Lore is that the passages answer, in [0, 1]."""
    answers: bool
    """Whether the passages answer at that confidence (`Calibration.threshold`)."""
    hedged: bool = False
    """Whether an answer from them says Lore is not sure they answer exactly this."""
    elsewhere: Elsewhere | None = None
    """The project the passages answer for, when the question names another."""
    closeness: float = 0.0
    """A plainer confidence from the best dense similarity alone (how close the closest
    passage is, not whether it answers)."""
    floor: float = 0.0
    """The similarity under which a passage found is not relevant: not quoted."""

    @classmethod
    def nothing(cls, question: str) -> Verdict:
        """The verdict when nothing was looked for (the model's knowledge alone)."""
        return cls(Ranking(question, []), 0.0, answers=False)


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
        calibration: Calibration | None = None,
    ) -> None:
        self._retriever = retriever
        self._ranker = ranker
        self.relevance_floor = relevance_floor
        self._confident_similarity = confident_similarity
        self._calibration = calibration or Calibration.fitted()

    async def __call__(self, question: str, retrieval: Retrieval) -> Verdict:
        """The verdict on what was found: the second stage's ranking and the calibrated
        confidence that it answers the question (0.0 when nothing relevant was found, or when
        the best passage answers for another project than the question names: `elsewhere`).
        When the confidence is enough to answer, the best passages are read on (`READ_ON`)."""
        closeness = self.similarity(retrieval)
        if not self.relevant(retrieval):
            return self._verdict(Ranking(question, []), 0.0, None, closeness)
        ranking, found = await self.weigh(question, retrieval)
        if found is None:
            return self._verdict(ranking, self._calibration.threshold, None, closeness)
        misplaced = elsewhere(ranking)
        confidence = 0.0 if misplaced else self._calibration.confidence(found)
        if self.answers(confidence):
            ranking = await self._read_on(ranking)
        return self._verdict(ranking, confidence, misplaced, closeness)

    def _verdict(
        self, ranking: Ranking, confidence: float, misplaced: Elsewhere | None, closeness: float
    ) -> Verdict:
        return Verdict(
            ranking,
            confidence,
            answers=self.answers(confidence),
            hedged=self.hedges(confidence),
            elsewhere=misplaced,
            closeness=closeness,
            floor=self.relevance_floor,
        )

    async def weigh(self, question: str, retrieval: Retrieval) -> tuple[Ranking, Evidence | None]:
        """The second stage's ranking of what was found and the evidence abstention reads
        (`knowledge.judging.abstain`); with nothing to weigh (keyword hits only, the embedder failed),
        the first stage's order and None."""
        unweighed = Ranking(question, [Scored(h, h.score, []) for h in retrieval.hits])
        if retrieval.best_similarity is None:
            return unweighed, None
        try:
            ranking = await self._ranker.rank(question, retrieval.hits)
        except EmbedderUnavailable as exc:
            log.warning("second stage skipped, the embedder failed: %s", exc)
            return unweighed, None
        found = evidence(ranking, retrieval.hits, self._calibration.typical_standout)
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

    def hedges(self, confidence: float) -> bool:
        """Whether an answer at `confidence` comes with a caveat (`Calibration.hedge`)."""
        return self.answers(confidence) and confidence < self._calibration.hedge

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
