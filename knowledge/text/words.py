"""Words as Lore weighs them: content words (no function words), stems, identifier parts.

One place for how a text becomes words, shared by the second stage (`knowledge.judging.ranking`),
abstention, the citation check and follow-up questions: a word counted in one of them is
the same word in the others.
"""

from __future__ import annotations

import re
from functools import lru_cache

import Stemmer

from storage.keyword import searched_words

WORD = re.compile(r"\w+")
STOPWORDS = frozenset(
    [
        "a",
        "about",
        "after",
        "again",
        "all",
        "also",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "been",
        "before",
        "being",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "done",
        "for",
        "from",
        "get",
        "gets",
        "getting",
        "got",
        "had",
        "has",
        "have",
        "having",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "just",
        "like",
        "me",
        "my",
        "need",
        "needs",
        "no",
        "not",
        "of",
        "on",
        "only",
        "or",
        "other",
        "our",
        "out",
        "over",
        "same",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "up",
        "us",
        "use",
        "used",
        "using",
        "very",
        "via",
        "want",
        "was",
        "way",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "without",
        "would",
        "you",
        "your",
        "yours",
    ]
)
_IDENTIFIER_PARTS = re.compile(r"[_.]")


@lru_cache(maxsize=1)
def _stemmer() -> Stemmer.Stemmer:
    return Stemmer.Stemmer("english")


def stem(word: str) -> str:
    return str(_stemmer().stemWord(word))


def content_words(text: str) -> list[str]:
    """Distinct words that can carry meaning (not function words), lower-cased, in order."""
    words = (w for w in searched_words(text) if w not in STOPWORDS)
    return list(dict.fromkeys(words))


def stems_of(text: str) -> set[str]:
    """Stemmed words of `text`, and the parts of identifiers (`pool_size`: pool, size)."""
    words = WORD.findall(text.lower())
    parts = [p for w in words if "_" in w for p in _IDENTIFIER_PARTS.split(w) if p]
    return {stem(w) for w in [*words, *parts]}


def content_stems(text: str) -> set[str]:
    """The stems of `text`'s content words (identifiers also in their parts)."""
    return {s for w in content_words(text) for s in stems_of(w)}


def share(wanted: set[str], held: set[str]) -> float:
    """The share of `wanted` in `held`; 0.0 for nothing wanted."""
    return len(wanted & held) / len(wanted) if wanted else 0.0
