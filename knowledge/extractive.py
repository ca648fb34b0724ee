"""The extractive answerer: the most relevant passages, trimmed to the sentences that
answer the question, quoted with numbered citations. Needs no model; the offline default."""

from __future__ import annotations

from collections.abc import Sequence

from knowledge.answer import Answer, Citation, Fallback, ResponseMode
from knowledge.quotes import best_sentences
from knowledge.retrieval import Hit, Retrieval

QUOTED_SOURCES = 3


def extractive_answer(
    question: str,
    retrieval: Retrieval,
    mode: ResponseMode,
    *,
    fallback: Fallback | None = None,
    notices: Sequence[str] = (),
    relevance_floor: float = 0.0,
) -> Answer:
    """Quotes from the best hits; the caller has already decided the best one is relevant.

    Other hits are quoted only when they clear `relevance_floor` too (a passage found by
    keywords alone has no similarity and is kept): a quote off the subject is noise.
    """
    best, *others = _distinct_documents(retrieval.hits)
    relevant = [best] + [h for h in others if h.similarity is None or h.similarity >= relevance_floor]
    citations = [
        Citation.from_hit(n, hit, best_sentences(hit.text, question) or hit.text)
        for n, hit in enumerate(relevant[:QUOTED_SOURCES], start=1)
    ]
    lines = ["Here is what I found:"] + [f"> {c.text} [{c.n}]" for c in citations]
    return Answer(
        text="\n".join(lines),
        citations=citations,
        mode=mode,
        fallback=fallback,
        notices=[*retrieval.notices, *notices],
        searched=[i.name for i in retrieval.searched],
    )


def abstention(
    retrieval: Retrieval,
    mode: ResponseMode,
    *,
    fallback: Fallback | None = None,
    notices: Sequence[str] = (),
) -> Answer:
    """An honest "not found", saying where Lore looked."""
    names = [i.name for i in retrieval.searched]
    where = _where(names)
    text = (
        f"I couldn't find anything about that in {where}. "
        "Add the right document with “add this doc to your memory”, or enable another index."
        if names
        else "There is no index enabled here to search. Enable one with “enable the <name> index”."
    )
    return Answer(
        text=text,
        citations=[],
        mode=mode,
        abstained=True,
        fallback=fallback,
        notices=[*retrieval.notices, *notices],
        searched=names,
    )


def _where(names: list[str]) -> str:
    quoted = [f"the {name} index" for name in names]
    if len(quoted) <= 1:
        return "".join(quoted)
    return ", ".join(quoted[:-1]) + " or " + quoted[-1]


def _distinct_documents(hits: Sequence[Hit]) -> list[Hit]:
    """The best hit of each document first, then the rest (so quotes span documents)."""
    firsts: list[Hit] = []
    rest: list[Hit] = []
    seen: set[int] = set()
    for hit in hits:
        (rest if hit.document.id in seen else firsts).append(hit)
        seen.add(hit.document.id)
    return firsts + rest
