"""Trimming a passage to the sentences that answer a question (for extractive answers)."""

from __future__ import annotations

import re
from functools import lru_cache

import Stemmer

SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])|\n{2,}|\n(?=[-*#] )")
WORD = re.compile(r"\w+")
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "can",
        "do",
        "does",
        "for",
        "from",
        "has",
        "have",
        "how",
        "i",
        "in",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "our",
        "should",
        "that",
        "the",
        "their",
        "this",
        "to",
        "was",
        "we",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "you",
    ]
)
MAX_QUOTE_CHARS = 400


@lru_cache(maxsize=1)
def _stemmer() -> Stemmer.Stemmer:
    return Stemmer.Stemmer("english")


def terms(text: str) -> set[str]:
    """Stemmed content words."""
    words = [w for w in WORD.findall(text.lower()) if w not in STOPWORDS]
    return set(_stemmer().stemWords(words))


def sentences(text: str) -> list[str]:
    return [s.strip() for s in SENTENCE_END.split(text) if s and s.strip()]


def best_sentences(passage: str, question: str, *, limit: int = 2) -> str:
    """The passage's sentences that share most words with the question, in their original
    order, at most `limit` of them and about MAX_QUOTE_CHARS characters."""
    wanted = terms(question)
    parts = sentences(passage)
    if not parts:
        return ""
    scored = sorted(range(len(parts)), key=lambda i: (len(terms(parts[i]) & wanted), -i), reverse=True)
    chosen = sorted(scored[:limit]) if wanted else list(range(min(limit, len(parts))))
    quote = " … ".join(parts[i] for i in chosen)
    return quote if len(quote) <= MAX_QUOTE_CHARS else quote[: MAX_QUOTE_CHARS - 1].rstrip() + "…"
