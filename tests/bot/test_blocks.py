"""Block Kit for answers: nothing lost when split, every Slack limit respected."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import UTC, datetime

import pytest

from bot.slack.blocks import (
    BLOCKS_PER_MESSAGE,
    MARKDOWN_LIMIT,
    NOTIFICATION_LIMIT,
    SECTION_LIMIT,
    Block,
    answer_messages,
    answer_text,
    confirm_blocks,
    fallback_text,
    form_button_blocks,
    markdown_blocks,
    paginate,
    split_text,
    whole_messages,
)
from knowledge.answering.answer import Answer, Citation, ResponseMode
from knowledge.answering.brief import VISIBLE_LINES, Brief, Glimpse, display_lines
from knowledge.search.notices import Notice, NoticeKind

WORDS = ["deploy", "billing", "on-call", "pager", "Tuesday", "rollback", "🚀", "naïve", "`code`", "*bold*"]


def words(n: int, seed: int = 0, newline_every: int = 0) -> str:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        out.append(rng.choice(WORDS))
        if newline_every and i % newline_every == newline_every - 1:
            out.append(rng.choice(["\n", "\n\n"]))
        else:
            out.append(" ")
    return "".join(out).strip()


def visible(text: str) -> str:
    """The text without whitespace: what a reader sees must survive any split."""
    return "".join(text.split())


def citation(
    n: int, name: str = "handbook.md", text: str = "We deploy every Tuesday.", **extra: object
) -> Citation:
    values: dict[str, object] = {
        "n": n,
        "name": name,
        "url": None,
        "author": None,
        "time_added": datetime(2024, 1, 1, tzinfo=UTC),
        "doc_timestamp": None,
        "text": text,
        "score": 0.5,
        "index_name": "eng",
        "document_id": n,
    }
    values.update(extra)
    return Citation(**values)  # type: ignore[arg-type]


def block_texts(blocks: list[Block]) -> str:
    out = []
    for block in blocks:
        if block["type"] == "markdown":
            out.append(block["text"])
        elif block["type"] == "section":
            out.append(block["text"]["text"])
        elif block["type"] == "context":
            out.extend(e["text"] for e in block["elements"])
    return "\n".join(out)


def assert_fits_slack(messages: list[list[Block]]) -> None:
    for blocks in messages:
        assert 1 <= len(blocks) <= BLOCKS_PER_MESSAGE
        assert sum(len(b["text"]) for b in blocks if b["type"] == "markdown") <= MARKDOWN_LIMIT
        for block in blocks:
            if block["type"] == "section":
                assert len(block["text"]["text"]) <= SECTION_LIMIT
            if block["type"] == "markdown":
                assert block["text"]
        assert len(fallback_text(blocks)) <= 3000


TEXTS = {
    "empty": "",
    "short": "We deploy on Tuesdays.",
    "words": words(5_000),
    "lines": words(5_000, seed=1, newline_every=7),
    "paragraphs": words(8_000, seed=2, newline_every=60),
    "one long word": "x" * 30_001,
    "long words": " ".join(["y" * 700] * 40),
    "spaces": "a" + " " * 20_000 + "b",
    "emoji": "🚀" * 25_000,
}


@pytest.mark.parametrize("limit", [10, 100, SECTION_LIMIT, MARKDOWN_LIMIT])
@pytest.mark.parametrize("name", list(TEXTS))
def test_split_text_never_loses_text_and_respects_the_limit(name: str, limit: int) -> None:
    text = TEXTS[name]
    pieces = split_text(text, limit)
    assert all(len(piece) <= limit for piece in pieces)
    assert visible("".join(pieces)) == visible(text)
    assert pieces == [text] if len(text) <= limit else all(piece.strip() for piece in pieces)


def test_split_text_cuts_at_paragraphs_then_lines_then_words() -> None:
    first, second = "a" * 60, "b" * 30
    assert split_text(f"{first}\n\n{second} c d e", 100) == [f"{first}\n\n{second} c d e"]
    assert split_text(f"{first}\n\n{second} cc dd ee", 95) == [first, f"{second} cc dd ee"]
    assert split_text(f"{first}\n{second} cc dd ee", 95) == [first, f"{second} cc dd ee"]
    assert split_text(f"{first} {second} cc dd ee", 98) == [f"{first} {second} cc dd", "ee"]
    assert split_text("z" * 25, 10) == ["z" * 10, "z" * 10, "z" * 5]


def test_markdown_blocks_hold_at_most_12000_characters() -> None:
    text = TEXTS["paragraphs"] * 2
    blocks = markdown_blocks(text)
    assert len(blocks) >= 2 and all(len(b["text"]) <= MARKDOWN_LIMIT for b in blocks)
    assert visible("".join(b["text"] for b in blocks)) == visible(text)


def test_paginate_keeps_order_and_fits_messages() -> None:
    small = [{"type": "section", "text": {"type": "mrkdwn", "text": f"block {i}"}} for i in range(120)]
    big = [{"type": "markdown", "text": "m" * 5_000} for _ in range(7)]
    blocks: list[Block] = [*big[:3], *small[:60], *big[3:], *small[60:]]
    messages = paginate(blocks)
    assert_fits_slack(messages)
    assert [b for m in messages for b in m] == blocks
    assert paginate([]) == []


def test_a_long_generated_answer_shows_a_glance_and_show_more_gives_it_whole() -> None:
    text = words(12_000, seed=3, newline_every=40)
    assert len(text) > 3 * MARKDOWN_LIMIT
    answer = Answer(
        text=text,
        citations=[citation(1), citation(2, "oncall.md")],
        mode=ResponseMode.HYBRID,
        notices=[Notice(NoticeKind.KEYWORD_ONLY)],
        model="gpt-fake",
    )
    [glance] = answer_messages(answer, answer_id=7)
    assert glance[0]["type"] == "context" and "searched by keyword only" in block_texts(glance)
    shown = "".join(b["text"] for b in glance if b["type"] == "markdown")
    assert display_lines(shown) <= VISIBLE_LINES and text.startswith(shown.removesuffix("…").strip())
    [buttons] = [b for b in glance if b["type"] == "actions"]
    assert [(e["text"]["text"], e["value"]) for e in buttons["elements"]] == [("Show more", "7")]
    assert glance[-1]["type"] == "context_actions" and glance[-1]["elements"][0]["type"] == "feedback_buttons"
    assert glance[-1]["elements"][0]["negative_button"]["value"] == "not_helpful:7"
    assert "Sources: [1] *handbook.md* · [2] *oncall.md*" in block_texts(glance)

    whole = whole_messages(
        text, [{"n": 1, "name": "handbook.md", "url": None}, {"n": 2, "name": "oncall.md"}]
    )
    assert len(whole) >= 4
    assert_fits_slack(whole)
    markdown = "".join(b["text"] for m in whole for b in m if b["type"] == "markdown")
    assert visible(markdown) == visible(text)
    assert "[1] *handbook.md*" in block_texts(whole[-1]) and "[2] *oncall.md*" in block_texts(whole[-1])
    assert ">" not in block_texts(whole[-1]).split("*Sources*")[1]  # a generated answer shows no quotes


def test_many_sources_fit_their_line() -> None:
    answer = Answer(
        text="See the sources.",
        citations=[citation(n, f"doc-{n}-" + "x" * 60 + ".md") for n in range(1, 80)],
        mode=ResponseMode.HYBRID,
        model="gpt-fake",
    )
    messages = answer_messages(answer, answer_id=1)
    assert_fits_slack(messages)
    shown = "\n".join(block_texts(m) for m in messages)
    assert all(f"doc-{n}-" in shown for n in range(1, 80))
    contexts = [e["text"] for m in messages for b in m if b["type"] == "context" for e in b["elements"]]
    assert len(contexts) >= 2 and all(len(t) <= SECTION_LIMIT for t in contexts)


def test_an_extractive_answer_shows_quotes_from_their_documents_not_a_lead() -> None:
    answer = Answer(
        text="We deploy every Tuesday. [1]\n\n> We deploy every Tuesday. [1]\n> The pager rotates on Monday. [2]",
        citations=[
            citation(1, "deploy.md", "We deploy every Tuesday.", section="Schedule"),
            citation(
                2,
                "oncall.md",
                "The pager rotates on Monday.\nEscalate within 15 minutes.",
                url="https://wiki.example.com/oncall",
            ),
        ],
        mode=ResponseMode.SMART_FALLBACK,
        glance=Brief(
            quotes=(
                Glimpse(1, "We deploy every Tuesday.", "deploy.md › Schedule"),
                Glimpse(2, "The pager rotates on Monday.\n… Escalate within 15 minutes.", "oncall.md"),
            ),
            complete=False,
        ),
    )
    [blocks] = answer_messages(answer, answer_id=3)
    assert blocks[0]["text"]["text"] == "From *deploy.md* › Schedule: We deploy every Tuesday."
    assert blocks[1]["text"]["text"] == (
        "From <https://wiki.example.com/oncall|oncall.md>: The pager rotates on Monday.\n… Escalate within 15 minutes."
    )
    assert not [b for b in blocks if b["type"] == "markdown"], "no sentence Lore seems to have written"
    assert any(b["type"] == "actions" and b["elements"][0]["action_id"] == "answer_more" for b in blocks)
    assert answer.short() == (
        "From deploy.md › Schedule: We deploy every Tuesday.\n"
        "From oncall.md: The pager rotates on Monday.\n… Escalate within 15 minutes."
    )


def test_an_abstention_has_no_feedback_buttons() -> None:
    answer = Answer(
        text="I couldn't find anything.", citations=[], mode=ResponseMode.RAG_ONLY, abstained=True
    )
    [blocks] = answer_messages(answer, answer_id=5)
    assert [b["type"] for b in blocks] == ["markdown"]


def test_sources_of_one_name_show_their_folders_and_each_its_section_escaped() -> None:
    answer = Answer(
        text="Here is what I found:\n> Set up logging. [1]",
        citations=[
            citation(1, "index.md", "Set up logging.", source="/d/httpx/docs/index.md", section="Logging"),
            citation(
                2,
                "index.md",
                "Logs go to stderr.",
                source="/d/uvicorn/docs/index.md",
                section="<!channel> & co",
            ),
            citation(3, "index.md", "Set the level.", source="/d/httpx/docs/index.md", document_id=1),
        ],
        mode=ResponseMode.SMART_FALLBACK,
    )
    [blocks] = answer_messages(answer, answer_id=7)
    texts = block_texts(blocks)
    assert "[1] *httpx/docs/index.md* › Logging" in texts
    assert "[2] *uvicorn/docs/index.md* › &lt;!channel&gt; &amp; co" in texts
    assert "[3] *httpx/docs/index.md* ·" not in texts and texts.endswith("[3] *httpx/docs/index.md*"), (
        "one document cited twice needs no folders"
    )
    assert "<!channel>" not in texts
    assert answer_text(answer).endswith("\nSources: httpx/docs/index.md, uvicorn/docs/index.md")
    linked = replace(
        answer, citations=[citation(4, "Runbook", url="https://wiki.example.com/runbook", section="Paging")]
    )
    assert "[4] <https://wiki.example.com/runbook|Runbook> › Paging" in block_texts(
        answer_messages(linked, 1)[0]
    )


def test_the_delete_confirmation_has_a_danger_button_and_a_cancel_button() -> None:
    blocks = confirm_blocks("Delete the *eng* index?", "delete_index", "12")
    buttons = blocks[1]["elements"]
    assert [b["action_id"] for b in buttons] == ["confirm_delete_index", "cancel_delete_index"]
    assert [b["value"] for b in buttons] == ["12", "12"] and buttons[0]["style"] == "danger"


def test_the_notification_text_is_the_answer_itself_with_its_source_names() -> None:
    extractive = Answer(
        text="Here is what I found:\n> We deploy every Tuesday. [1]\n> The pager rotates on Monday. [2]",
        citations=[
            citation(1, "deploy.md", "We deploy\nevery Tuesday."),
            citation(2, "oncall.md", "The pager rotates on Monday."),
            citation(3, "deploy.md", "Rollbacks take five minutes."),
        ],
        mode=ResponseMode.SMART_FALLBACK,
    )
    glanced = replace(
        extractive,
        glance=Brief(quotes=(Glimpse(1, "We deploy\nevery Tuesday.", "deploy.md"),), complete=False),
    )
    assert answer_text(glanced) == "From deploy.md: We deploy\nevery Tuesday.\nSources: deploy.md, oncall.md"
    generated = Answer(
        text=words(3_000, seed=4),
        citations=[citation(n, f"doc-{n}.md") for n in range(1, 9)],
        mode=ResponseMode.HYBRID,
        model="gpt",
    )
    text = answer_text(generated)
    lead, sources = text.rsplit("\n", 1)
    assert generated.text.startswith(lead.removesuffix("…").rstrip()) and len(lead) <= NOTIFICATION_LIMIT
    assert sources == "Sources: doc-1.md, doc-2.md, doc-3.md, doc-4.md, doc-5.md and 3 more"
    abstained = Answer(
        text="I couldn't find anything.", citations=[], mode=ResponseMode.RAG_ONLY, abstained=True
    )
    assert answer_text(abstained) == "I couldn't find anything."
    assert "Here is what I found" not in answer_text(glanced)


def test_every_button_has_an_accessibility_label() -> None:
    answer = Answer(text="Tuesdays.", citations=[citation(1)], mode=ResponseMode.HYBRID, model="gpt")
    blocks = [
        *answer_messages(answer, answer_id=7)[0],
        *confirm_blocks("Delete the *eng* index?", "delete_index", "12"),
        *form_button_blocks("Connect it.", "connect_confluence"),
    ]
    buttons = [e for b in blocks if b["type"] == "actions" for e in b["elements"] if e["type"] == "button"]
    feedback = [e for b in blocks if b["type"] == "context_actions" for e in b["elements"]]
    buttons += [f[side] for f in feedback for side in ("positive_button", "negative_button")]
    assert len(buttons) == 5
    for button in buttons:
        assert 0 < len(button["accessibility_label"]) <= 75, button
