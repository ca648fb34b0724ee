"""Answers at a glance: the brief never runs past its room, holds only what the whole answer
quotes, picks the units the second stage scored best, and a long text is cut at its
paragraphs with an open code block closed."""

from __future__ import annotations

from knowledge.answering.brief import (
    GAP,
    LINE_CHARS,
    VISIBLE_LINES,
    Brief,
    Candidate,
    Glimpse,
    cut,
    display_lines,
    pick,
)
from knowledge.engine import Knowledge, Request
from tests.knowledge.conftest import HANDBOOK, Stack, md


def test_display_lines_count_the_lines_a_long_line_wraps_to() -> None:
    assert display_lines("one") == 1
    assert display_lines("a\nb\n\nc") == 4
    assert display_lines("x" * (LINE_CHARS + 1)) == 2


def test_a_short_text_is_its_own_brief_and_a_long_one_is_cut_at_its_paragraphs() -> None:
    assert cut("We deploy on Tuesdays.") == Brief(text="We deploy on Tuesdays.")
    paragraphs = "\n\n".join(f"Paragraph {n} says something." for n in range(10))
    brief = cut(paragraphs)
    assert not brief.complete and brief.text.endswith(GAP) and brief.lines() <= VISIBLE_LINES
    assert paragraphs.startswith(brief.text.removesuffix(GAP).strip())
    code = "Run this:\n```\n" + "\n".join(f"step {n}" for n in range(30)) + "\n```"
    shown = cut(code).text
    assert shown.count("```") == 2, "an open code block is closed"
    assert display_lines(cut("word " * 1000).text) <= VISIBLE_LINES


def test_pick_shows_the_best_units_that_fit_in_their_documents_order() -> None:
    candidates = [
        Candidate(1, 0, 0, "Intro sentence of the page.", 0.1),
        Candidate(1, 1, 1, "Rollbacks switch the load balancer back.", 0.9),
        Candidate(1, 2, 1, "Something in between, " * 7, 0.05),
        Candidate(1, 3, 1, "A rollback takes about two minutes.", 0.8),
        Candidate(1, 4, 2, "```\nmake rollback\n```", 0.3, prose=False),
        Candidate(2, 0, 0, "The other page's best line.", 0.7),
    ]
    sources = {1: "deploy.md › Rollbacks", 2: "runbook.md"}
    quotes = pick(candidates, sources, room=6)
    assert quotes == (
        Glimpse(
            1,
            "Intro sentence of the page.\nRollbacks switch the load balancer back. … A rollback takes about two "
            "minutes.\n```\nmake rollback\n```",
            "deploy.md › Rollbacks",
        ),
        Glimpse(2, "The other page's best line.", "runbook.md"),
    ), "one paragraph's sentences on one line, skipped ones marked, code on lines of its own"
    assert Brief(quotes=quotes).lines() == 6
    assert quotes[1].shown == "From runbook.md: The other page's best line."
    assert pick(candidates, sources, room=1) == (
        Glimpse(1, "Rollbacks switch the load balancer back.", "deploy.md › Rollbacks"),
    )
    code = Glimpse(3, "```\nx = 1\n```", "api.md")
    assert code.shown == "From api.md:\n```\nx = 1\n```"
    huge = [Candidate(1, 0, 0, "\n".join(f"line {n}" for n in range(40)), 1.0, prose=False)]
    [only] = pick(huge, {1: "big.md"})
    assert display_lines(only.shown) <= VISIBLE_LINES and only.text.endswith(GAP)
    assert pick([]) == ()


async def test_an_extractive_answer_glances_at_what_it_quotes(stack: Stack) -> None:
    index = stack.index()
    long_page = HANDBOOK + "\n".join(
        f"\n## Section {n}\n\nThe rollback runbook, part {n}, is long." for n in range(12)
    )
    await stack.ingestor.add(index, md("handbook.md", long_page))
    question = [{"role": "user", "content": "How long does a rollback take?"}]
    answer = await Knowledge(stack.retriever, None, window=16_000).ask(
        Request([stack.fresh(index)], question)
    )
    assert not answer.abstained and answer.brief.quotes and not answer.brief.complete
    assert answer.brief.lines() <= VISIBLE_LINES
    whole = " ".join(" ".join(c.text for c in answer.citations).split())
    for glimpse in answer.brief.quotes:
        for part in glimpse.text.replace("\n", f" {GAP} ").split(f" {GAP} "):
            assert " ".join(part.split()).removeprefix(f"{GAP} ") in whole
    assert "two minutes" in answer.short() and answer.short().startswith("From handbook.md")
    assert answer.as_json()["short"] == answer.short()
