"""Whether the documents answer a question: a confidence from retrieval evidence.

A cosine floor cannot tell an answerable question from an unanswerable one that sounds as
if it could be answered (both find passages on the subject). What separates them better is
how the evidence is shaped: the best sentence's similarity to the question, how far it
stands out from the other sentences found, the second stage's score of the best passage,
whether the dense and the keyword retrievers put the same document first, and how much of
the question's meaning the two best passages hold in words (each question word weighed by
how far the question's embedding moves without it: an unanswerable question's key concept,
"rate limiter", "JWT", is the word the passages on its subject lack). These five
are combined by a logistic model fitted on the tuning half of the docs-QA set
(`bench/data/docs_qa`); Lore abstains when the resulting confidence is under `threshold`,
chosen on the same half as the highest that wrongly refuses at most 3% of the answerable
questions. The held-out half reports how well that generalises (`bench/answer-quality.md`).

Whatever its confidence, an answer for another project than the one the question names is
no answer (`elsewhere`): with several projects' docs in one index, FastAPI's `StaticFiles`
page does not say whether Uvicorn serves static files.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from knowledge.judging import parameters
from knowledge.judging.ranking import Ranking, Scored, folder_names
from knowledge.search.notices import Notice, NoticeKind
from knowledge.search.retrieval import Hit
from knowledge.text.words import stems_of

MIN_UNITS = 12
"""With fewer units found (a small index of short documents), how far the best stands out
says nothing: it is taken as `Calibration.typical_standout`."""
MEANING_PASSAGES = 2
"""How many of the best passages are read for the question's words."""
BESIDE = 0.25
"""At most this share of the passages found may lie beside the folders that tell projects
apart (a README at the root of several projects' docs) for the folders to count as projects."""
COMMON_NAME = 0.5
"""A part of the index whose name is written in at least this share of the passages found
in the other parts is not named by a question that says it: "requests" in a question
about Flask is a word, not the Requests project."""
OWN_NAME = 1 / 3
"""A part of the index is a project only when at least this share of its own passages found
write its name: a project's docs say what they document ("uvicorn" in nearly every passage of
Uvicorn's), a section's folder does not (`guide/`, `api/`: a question that says "api" names no
part of a site whose pages rarely write it)."""


@dataclass(frozen=True)
class Evidence:
    best_sentence: float
    """Dense similarity of the best passage's best unit to the question."""
    standout: float
    """How many standard deviations the best unit's similarity stands above the mean of
    every unit scored."""
    passage_score: float
    """The second stage's score of the best passage."""
    agreement: float
    """1.0 when the dense and the keyword retriever's first hits are in the same document."""
    meaning: float = 1.0
    """The share of the question's importance (`QuestionTerms.importance`) whose words the
    best `MEANING_PASSAGES` passages hold."""

    def as_vector(self) -> tuple[float, ...]:
        return (self.best_sentence, self.standout, self.passage_score, self.agreement, self.meaning)


@dataclass(frozen=True)
class Calibration:
    """A logistic model over `Evidence` and the abstention threshold on its output; fitted on
    the tuning half by `python -m bench.calibrate` (`fitted`)."""

    intercept: float
    coefficients: tuple[float, float, float, float, float]
    threshold: float
    hedge: float = 0.0
    """Between `threshold` and this, Lore answers but says it is not sure the documents
    answer exactly what was asked."""
    typical_standout: float = 0.0
    """The standout taken when too few units were found to measure it (`MIN_UNITS`)."""

    def confidence(self, evidence: Evidence) -> float:
        z = self.intercept + sum(c * x for c, x in zip(self.coefficients, evidence.as_vector(), strict=True))
        return 1.0 / (1.0 + math.exp(-z))

    @classmethod
    def fitted(cls) -> Calibration:
        """The calibration Lore ships with (`knowledge/data/parameters.toml`)."""
        table = parameters.fitted("abstention")
        a, b, c, d, e = (float(x) for x in table["coefficients"])
        return cls(
            intercept=float(table["intercept"]),
            coefficients=(a, b, c, d, e),
            threshold=float(table["threshold"]),
            hedge=float(table["hedge"]),
            typical_standout=float(table["typical_standout"]),
        )


def evidence(ranking: Ranking, hits: Sequence[Hit], typical_standout: float) -> Evidence | None:
    """The evidence in a ranking (and the first-stage hits it came from); None when nothing
    was found. With fewer than `MIN_UNITS` units, the standout is `typical_standout`."""
    scored = [p for p in ranking.passages if p.units]
    if not scored:
        return None
    best = scored[0]
    position = best.best_unit
    best_sentence = best.units[position].dense if position is not None else 0.0
    every = [u.dense for p in scored for u in p.units]
    spread = statistics.pstdev(every) if len(every) >= MIN_UNITS else 0.0
    standout = (max(every) - statistics.fmean(every)) / spread if spread > 0 else typical_standout
    held = set().union(*(stems_of(f"{p.hit.heading} {p.hit.text}") for p in scored[:MEANING_PASSAGES]))
    return Evidence(
        best_sentence, standout, best.score, _agreement(hits), ranking.terms.meaning_coverage(held)
    )


@dataclass(frozen=True)
class Elsewhere:
    """The question names a part of the index (a project: "can uvicorn serve static
    files?") and the best passage lies in another part, which is what it answers for."""

    asked: tuple[str, ...]
    found: str

    @property
    def notice(self) -> Notice:
        return Notice(NoticeKind.ELSEWHERE, self.found, self.asked)


def elsewhere(ranking: Ranking) -> Elsewhere | None:
    """Whether the best passage answers for another part of the index than the question
    names. The parts are the folders (or a URL's hosts) where the passages' paths first
    part ways: `uvicorn/docs/…` and `fastapi/docs/…` under one root. A part is named when
    the question holds its name and the other parts' passages rarely write it
    (`COMMON_NAME`); another part than the best passage's must be a project, whose own
    passages write its name (`OWN_NAME`), and the best passage must not say it either."""
    scored = [p for p in ranking.passages if p.units]
    parts = _parts(scored)
    if parts is None or len(set(parts) - {""}) < 2:
        return None
    asked = set(ranking.terms.idf)
    if not any(stems_of(part) & asked for part in set(parts) - {""}):
        return None  # most questions name no part: no passage need be read
    written = [stems_of(f"{p.hit.heading} {p.hit.text}") for p in scored]
    if _named(parts[0], asked, written, parts):
        return None
    others = set(parts) - {"", parts[0]}
    named = sorted(
        part for part in others if _named(part, asked, written, parts) and _project(part, written, parts)
    )
    if not named or any(stems_of(name) & written[0] for name in named):
        return None
    return Elsewhere(tuple(named), parts[0])


def _parts(passages: Sequence[Scored]) -> list[str] | None:
    """The folder each passage lies in where their paths part ways ("" for a file beside
    the folders, a README at the root); None when the best passage lies beside them, or more
    than `BESIDE` of the passages do (one project's pages beside its sections' folders: no
    projects to tell apart)."""
    paths = [folder_names(p.hit) for p in passages]
    depth = 0  # down the folders every passage not beside them shares
    while (deeper := [path for path in paths if len(path) > depth]) and len({p[depth] for p in deeper}) == 1:
        depth += 1
    beside = sum(len(path) <= depth for path in paths)
    if not paths or len(paths[0]) <= depth or beside > BESIDE * len(paths):
        return None
    return [path[depth] if len(path) > depth else "" for path in paths]


def _named(part: str, asked: set[str], written: Sequence[set[str]], parts: Sequence[str]) -> bool:
    said = stems_of(part) & asked
    others = [words for words, where in zip(written, parts, strict=True) if where != part]
    return bool(said) and bool(others) and _writing(said, others) < COMMON_NAME


def _project(part: str, written: Sequence[set[str]], parts: Sequence[str]) -> bool:
    own = [words for words, where in zip(written, parts, strict=True) if where == part]
    return _writing(stems_of(part), own) >= OWN_NAME


def _writing(name: set[str], written: Sequence[set[str]]) -> float:
    """The share of the passages (their stemmed words, `written`) that write `name`; 0.0 for
    none."""
    return sum(bool(name & words) for words in written) / len(written) if written else 0.0


def _agreement(hits: Sequence[Hit]) -> float:
    dense = [h for h in hits if h.similarity is not None]
    keyword = [h for h in hits if h.keyword_score is not None]
    if not dense or not keyword:
        return 0.0
    first_dense = max(dense, key=lambda h: h.similarity or 0.0)
    first_keyword = max(keyword, key=lambda h: h.keyword_score or 0.0)
    return float(first_dense.document.id == first_keyword.document.id)
