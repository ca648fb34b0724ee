"""The second ranking stage: passages re-scored by how well their sentences answer.

Retrieval (`knowledge.search.retrieval`) finds candidate passages by fusing a dense and a keyword
ranking, each looking at a whole passage. This stage looks inside the best few: each holds
quotable units (`knowledge.text.quotes`: sentences, list items, code blocks), read from its
markup once, at ingest (`knowledge.indexing.units`), and

- every unit is scored by its dense similarity to the question (the local embedder, on the
  unit alone) and by how much of the question's weight its words cover, each question word
  weighed by its rarity in the index (idf from the keyword index), the unit's section and
  directive name read with it;
- every passage by its own dense similarity, its best unit's, the question coverage of its
  best window of three units and of its best unit, of its heading and document name, its
  keyword score relative to the best one, whether both retrievers found it, and whether it
  lies in a folder the question names (`flask/docs/…` for a question about Flask: of the
  question's words that name a folder of some candidate, the share its path holds).

The question's words are also weighed by meaning (`QuestionTerms.importance`): how far the
question's embedding moves when the word is taken out. Words found in most passages weigh
nothing there. Abstention reads how much of that weight the best passages hold.

The weights (`Weights`) are a linear model fitted on the tuning half of the docs-QA set
(`bench/data/docs_qa`, by coordinate ascent on the reciprocal rank of the first passage of a
gold file: `python -m bench.fit_ranking`). The passages come back reordered; their scored
units are what the extractive answer quotes, and the evidence (`Evidence`) is what
abstention is decided from (`knowledge.judging.abstain`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, fields, replace

import numpy as np
from cachetools import LRUCache

from knowledge.backends.embedding import Embedder, Vectors
from knowledge.indexing.chunking import innermost
from knowledge.indexing.units import recorded
from knowledge.judging import parameters
from knowledge.search.retrieval import Hit
from knowledge.text.quotes import Kind, Unit
from knowledge.text.words import content_words, stem, stems_of
from storage.keyword import MAX_TERMS
from storage.records import ChunkRecord

Frequencies = Callable[[Sequence[str]], Awaitable[tuple[list[int], int]]]
"""How many chunks hold each word, and how many chunks there are."""

EMBEDDED_CHARS = 400
"""A unit is embedded from its first characters: enough to say what it is about, and the
cost of embedding grows with length."""
COMMON_SHARE = 0.2
"""A word found in more than this share of the index's passages (the product's own name,
say) carries no meaning of its own to weigh..."""
COMMON_MINIMUM = 10
"""...once it is found in at least this many: in a handful of passages every word is in
a large share."""
MAX_WEIGHED = 24
"""At most this many of a question's words are weighed by meaning, the rarest: each costs an
embedding of the whole question without it, and a pasted log of 500 words took 9 s of the
one model every conversation shares (the longest question of the docs-QA set has 19)."""


PASSAGE_SIGNALS = (
    "passage_dense",
    "unit_dense",
    "window_coverage",
    "unit_coverage",
    "heading_coverage",
    "keyword",
    "agreement",
    "location",
)
"""The evidence a passage is scored on (`score_passage`), each weighed by the field of
`Weights` of its name."""


@dataclass(frozen=True)
class Weights:
    """A passage's score, a weighted sum of its evidence; fitted on the tuning half by
    `python -m bench.fit_ranking` (`fitted`)."""

    passage_dense: float
    unit_dense: float
    window_coverage: float
    unit_coverage: float
    heading_coverage: float
    keyword: float
    agreement: float
    location: float
    unit_mix_dense: float
    """A unit's own score: its dense similarity times this, plus its coverage times
    `unit_mix_coverage`."""
    unit_mix_coverage: float

    @classmethod
    def fitted(cls) -> Weights:
        """The weights Lore ships with (`knowledge/data/parameters.toml`)."""
        table = parameters.fitted("ranking")
        return cls(**{f.name: float(table[f.name]) for f in fields(cls)})

    def passage_score(self, signals: dict[str, float]) -> float:
        return sum(float(getattr(self, name)) * signals[name] for name in PASSAGE_SIGNALS)


@dataclass(frozen=True)
class ScoredUnit:
    unit: Unit
    dense: float
    coverage: float
    score: float


@dataclass(frozen=True)
class Scored:
    """A passage with its second-stage score and its scored units, in text order."""

    hit: Hit
    score: float
    units: list[ScoredUnit]
    following: int = 0
    """How many of the last units were read on from the next passage of the document
    (`read_on`): they may be quoted with the passage, never lead it."""
    continued: bool = False
    """Whether it was read on into the next passage (units added, or its last unit made
    whole: a code block the next passage ends); the next passage is not quoted again."""
    signals: dict[str, float] = field(default_factory=dict)
    """The evidence its score weighs (`PASSAGE_SIGNALS`); empty for a passage not scored."""

    @property
    def own_units(self) -> list[ScoredUnit]:
        """The units of the passage itself, without those read on from the next one."""
        return self.units[: len(self.units) - self.following]

    @property
    def best_unit(self) -> int | None:
        """Position of the best unit of the passage itself that can be quoted on its own."""
        quotable = [i for i, u in enumerate(self.own_units) if not u.unit.fragment]
        return max(quotable, key=lambda i: self.units[i].score, default=None)

    def own(self) -> Scored:
        """The passage without the units read on from the next one."""
        return replace(self, units=self.own_units, following=0) if self.following else self


@dataclass(frozen=True)
class QuestionTerms:
    """The question's content words, stemmed, each with its idf in the index and, once
    the question is embedded, its importance to the question's meaning."""

    idf: dict[str, float]
    importance: dict[str, float] = field(default_factory=dict)
    """How far the question's embedding moves (1 - cosine) when the word is taken out;
    common words (`COMMON_SHARE`) are left out."""

    def coverage(self, stems: set[str]) -> float:
        """The share of the question's weight that `stems` hold."""
        total = sum(self.idf.values())
        return sum(w for t, w in self.idf.items() if t in stems) / total if total else 0.0

    def meaning_coverage(self, stems: set[str]) -> float:
        """The share of the question's importance that `stems` hold (1.0 when nothing
        was weighed: there is nothing to miss)."""
        total = sum(self.importance.values())
        return sum(w for t, w in self.importance.items() if t in stems) / total if total > 0 else 1.0


@dataclass(frozen=True)
class Ranking:
    question: str
    passages: list[Scored]
    """Best first."""
    terms: QuestionTerms = field(default_factory=lambda: QuestionTerms({}))

    @property
    def hits(self) -> list[Hit]:
        return [p.hit for p in self.passages]


class Ranker:
    """Re-scores a retrieval's best passages; see the module docstring."""

    def __init__(
        self,
        embedder: Embedder,
        frequencies: Frequencies | None = None,
        *,
        weights: Weights | None = None,
        depth: int = 12,  # the passages the extractive answer retrieves (`AnswerSpec.extractive_top_k`)
        cache_size: int = 4096,  # units' vectors kept: a question's follow-ups embed the same passages
    ) -> None:
        self._embedder = embedder
        self._frequencies = frequencies
        self._weights = weights or Weights.fitted()
        self._depth = depth
        self._cache: LRUCache[tuple[str, str], Vectors] = LRUCache(maxsize=cache_size)

    @property
    def depth(self) -> int:
        return self._depth

    async def rank(self, question: str, hits: Sequence[Hit]) -> Ranking:
        """The first `depth` hits re-scored and reordered, by the units ingest recorded for
        each (`knowledge.indexing.units`); the others follow in their order, unscored (with
        no units)."""
        head, tail = list(hits[: self._depth]), list(hits[self._depth :])
        if not head:
            return Ranking(question, [])
        words, counts = await self._counted(question)
        weighed = rarest([w for w in words if not common(w, counts)], counts)
        variants = [without_word(question, w) for w in weighed]
        cut = [recorded(h.units, h.text) for h in head]
        held = [[as_held(u, h) for u in us] for h, us in zip(head, cut, strict=True)]
        texts = [u.shown[:EMBEDDED_CHARS] for us in held for u in us]
        vectors = await self._embed([question, *variants, *texts])
        moves = (1.0 - vectors[1 : 1 + len(variants)] @ vectors[0]).tolist()
        sims = (vectors[1 + len(variants) :] @ vectors[0]).tolist() if texts else []
        terms = replace(question_terms(words, counts), importance=importance(weighed, moves))
        top_keyword = max((h.keyword_score or 0.0 for h in head), default=0.0)
        names = set(terms.idf) & set().union(*(folders(h) for h in head))
        scored, offset = [], 0
        for hit, passage_units, as_scored in zip(head, cut, held, strict=True):
            unit_sims = sims[offset : offset + len(passage_units)]
            offset += len(passage_units)
            located = len(names & folders(hit)) / len(names) if names else 0.0
            scored.append(
                score_passage(
                    self._weights, hit, passage_units, unit_sims, terms, top_keyword, located, as_scored
                )
            )
        scored.sort(key=lambda s: s.score, reverse=True)
        return Ranking(question, scored + [Scored(h, -math.inf, []) for h in tail], terms)

    def read_on(self, ranking: Ranking, passage: Scored, following: ChunkRecord) -> Scored:
        """`passage` with the units ingest recorded for the passage that follows it in its
        document appended, scored by question coverage alone (they are not embedded: a
        passage read on is a quote's continuation, not a candidate). Chunks overlap: those of
        its units that begin before `passage` ends are `passage`'s own already (it holds
        them whole); without offsets, those whose text it holds, and fragments, are left out.
        Units of another section are shown under its title."""
        hit = passage.hit
        end = hit.start + len(hit.text) if hit.start is not None else None
        section = innermost(following.heading) if following.heading != hit.heading else ""
        known = {u.unit.text for u in passage.units}
        fresh = [
            u if u.section or not section else replace(u, section=section)
            for u in recorded(following.units, following.text)
            if not (u.continues or (u.start is None and following.start is not None))  # (titles alone)
            and (u.start >= end if end is not None and u.start is not None else u.text not in known)
        ]
        while fresh and (fresh[0].fragment or any(fresh[0].text in text for text in known)):
            fresh.pop(0)  # a fragment of what the passage holds, read without offsets
        added = [
            ScoredUnit(u, 0.0, c, self._weights.unit_mix_coverage * c)
            for u in fresh
            for c in [ranking.terms.coverage(stems_of(f"{u.text} {u.section} {u.label}"))]
        ]
        return replace(
            passage,
            units=[*passage.units, *added],
            following=passage.following + len(added),
            continued=passage.continued or bool(added) or _runs_on(passage, end),
        )

    async def question_terms(self, question: str) -> QuestionTerms:
        """The question's words weighed by their idf (not yet by importance)."""
        words, counts = await self._counted(question)
        return question_terms(words, counts)

    async def _counted(self, question: str) -> tuple[list[str], tuple[dict[str, int], int] | None]:
        """The question's first `MAX_TERMS` content words (as many as the keyword search reads
        of it: a pasted log is not a question of a thousand words), and how many passages
        hold each out of how many (None without counts)."""
        words = content_words(question)[:MAX_TERMS]
        if self._frequencies is None or not words:
            return words, None
        counts, total = await self._frequencies(words)
        return words, (dict(zip(words, counts, strict=True)), total)

    async def _embed(self, texts: list[str]) -> Vectors:
        """Embeddings of `texts`, the ones embedded recently taken from the cache."""
        model = self._embedder.model_id
        known = {t: self._cache[(model, t)] for t in dict.fromkeys(texts) if (model, t) in self._cache}
        missing = [t for t in dict.fromkeys(texts) if t not in known]
        if missing:
            known.update(zip(missing, await self._embedder.embed(missing), strict=True))
        for text in dict.fromkeys(texts):
            self._cache[(model, text)] = known[text]
        return np.vstack([known[t] for t in texts])


def score_passage(
    weights: Weights,
    hit: Hit,
    passage_units: list[Unit],
    sims: list[float],
    terms: QuestionTerms,
    top_keyword: float,
    located: float = 0.0,
    as_held: list[Unit] | None = None,
) -> Scored:
    """One passage's second-stage score, with its units' (see `Weights`); `located` is the
    share of the folder names in the question that its path holds. Units are scored as the
    passage holds them (`as_held`, when given: the words of a unit running past its end are
    the next passage's), and kept whole, to be quoted."""
    w = weights
    context = stems_of(f"{hit.heading} {hit.document.name}")
    held = [stems_of(f"{u.text} {u.section} {u.label}") for u in (as_held or passage_units)]
    scored_units = []
    for unit, sim, stems in zip(passage_units, sims, held, strict=True):
        coverage = terms.coverage(stems)
        score = w.unit_mix_dense * sim + w.unit_mix_coverage * coverage
        scored_units.append(ScoredUnit(unit, sim, coverage, score))
    windows = (terms.coverage(set().union(*held[max(0, i - 1) : i + 2])) for i in range(len(held)))
    best_dense = max(sims, default=0.0)
    signals = {
        "passage_dense": hit.similarity if hit.similarity is not None else best_dense,
        "unit_dense": best_dense,
        "window_coverage": max(windows, default=0.0),
        "unit_coverage": max((u.coverage for u in scored_units), default=0.0),
        "heading_coverage": terms.coverage(context),
        "keyword": (hit.keyword_score or 0.0) / top_keyword if top_keyword > 0 else 0.0,
        "agreement": float(hit.similarity is not None and hit.keyword_score is not None),
        "location": located,
    }
    return Scored(hit, w.passage_score(signals), scored_units, signals=signals)


def question_terms(words: Sequence[str], frequencies: tuple[dict[str, int], int] | None) -> QuestionTerms:
    """Stemmed words with their idf; each weighs 1.0 without counts. A word no chunk holds
    weighs the most."""
    counts, total = frequencies or ({}, 0)
    idf: dict[str, float] = {}
    for word in words:
        weight = math.log((total + 1) / (counts[word] + 0.5)) if total and word in counts else 1.0
        term = stem(word)
        idf[term] = max(idf.get(term, 0.0), weight, 0.0)
    return QuestionTerms(idf)


def common(word: str, counts: tuple[dict[str, int], int] | None) -> bool:
    """Whether more than `COMMON_SHARE` of the index's passages hold `word` (and at least
    `COMMON_MINIMUM`)."""
    if counts is None or not counts[1]:
        return False
    held = counts[0].get(word, 0)
    return held >= COMMON_MINIMUM and held > COMMON_SHARE * counts[1]


def rarest(words: Sequence[str], counts: tuple[dict[str, int], int] | None) -> list[str]:
    """The `MAX_WEIGHED` of `words` found in the fewest passages (the first ones without
    counts), in their order."""
    if len(words) <= MAX_WEIGHED:
        return list(words)
    held = counts[0] if counts is not None else {}
    kept = set(sorted(words, key=lambda w: held.get(w, 0))[:MAX_WEIGHED])
    return [w for w in words if w in kept]


def without_word(question: str, word: str) -> str:
    """`question` with every occurrence of `word` (a whole word, any case) taken out."""
    return " ".join(re.sub(rf"(?<!\w){re.escape(word)}(?!\w)", " ", question, flags=re.IGNORECASE).split())


def importance(words: Sequence[str], moves: Sequence[float]) -> dict[str, float]:
    """Each word's stem with how far taking it out moved the question (never below 0)."""
    weights: dict[str, float] = {}
    for word, move in zip(words, moves, strict=True):
        term = stem(word)
        weights[term] = max(weights.get(term, 0.0), move, 0.0)
    return weights


_FOLDER_SEPARATORS = re.compile(r"[/\\]")


def folder_names(hit: Hit) -> list[str]:
    """The folders a passage's document lies in, outermost first: its source key (a path or
    a URL) without the file name."""
    return _FOLDER_SEPARATORS.split(hit.document.source_key)[:-1]


def as_held(unit: Unit, hit: Hit) -> Unit:
    """`unit` as far as the passage `hit` holds it: a unit stored whole on the passage it
    begins in may run past its end (its lines, or its words, up to the passage's end, as the
    passage shows them); others as they are."""
    if unit.start is None or unit.end is None or hit.start is None or unit.end <= hit.start + len(hit.text):
        return unit
    shown = hit.text[max(0, unit.start - hit.start) :]
    if unit.kind == Kind.CODE:
        return replace(unit, text="\n".join(unit.text.split("\n")[: shown.count("\n") + 1]))
    return replace(unit, text=" ".join(unit.text.split()[: len(shown.split())]))


def _runs_on(passage: Scored, end: int | None) -> bool:
    """Whether a unit of `passage` runs on past its end, into the next passage (it holds the
    unit whole: the next passage's piece of it is not to be quoted again)."""
    return end is not None and any(u.unit.end is not None and u.unit.end > end for u in passage.own_units)


def folders(hit: Hit) -> set[str]:
    """Stemmed words of the folders a passage's document lies in."""
    return stems_of(" ".join(folder_names(hit)))
