"""Block Kit for answers: the text, numbered sources, feedback buttons; split to fit Slack.

Limits: a `markdown` block holds 12,000 characters, a `section` 3,000, a message 50 blocks.
Long answers become several messages; no text is ever cut.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bot.chat.render import age
from knowledge.answer import Answer, Citation

Block = dict[str, Any]
MARKDOWN_LIMIT = 12_000
SECTION_LIMIT = 3_000
BLOCKS_PER_MESSAGE = 50
QUOTE_LIMIT = 600
FEEDBACK_ACTIONS = ("feedback_helpful", "feedback_not_helpful")


def split_text(text: str, limit: int) -> list[str]:
    """Pieces of at most `limit` characters, cut at a paragraph, else a line, else a word
    boundary in the second half of each piece (else anywhere); only whitespace at cuts is lost."""
    pieces: list[str] = []
    rest = text
    while len(rest) > limit:
        window = rest[:limit]
        cut = next((at for sep in ("\n\n", "\n", " ") if (at := window.rfind(sep)) > limit // 2), limit)
        if piece := rest[:cut].rstrip():
            pieces.append(piece)
        rest = rest[cut:].lstrip("\n ")
    if rest or not pieces:
        pieces.append(rest)
    return pieces


def markdown_blocks(text: str) -> list[Block]:
    return [{"type": "markdown", "text": piece} for piece in split_text(text, MARKDOWN_LIMIT)]


def source_block(citation: Citation, *, quote: bool) -> Block:
    title = f"<{citation.url}|{_escape(citation.name)}>" if citation.url else f"*{_escape(citation.name)}*"
    facts = [f"added {age(citation.time_added)}", f"in {citation.index_name}"]
    if citation.author:
        facts.insert(0, f"by {_escape(citation.author)}")
    text = f"[{citation.n}] {title} — {', '.join(facts)}"
    if quote and citation.text:
        snippet = (
            citation.text if len(citation.text) <= QUOTE_LIMIT else citation.text[: QUOTE_LIMIT - 1] + "…"
        )
        text += "\n>" + _escape(snippet).replace("\n", "\n>")
    return {"type": "section", "text": {"type": "mrkdwn", "text": text[:SECTION_LIMIT]}}


def feedback_block(answer_id: int) -> Block:
    return {
        "type": "actions",
        "block_id": f"feedback:{answer_id}",
        "elements": [
            {
                "type": "button",
                "action_id": FEEDBACK_ACTIONS[0],
                "value": str(answer_id),
                "text": {"type": "plain_text", "text": "👍 Helpful"},
                "accessibility_label": "This answer was helpful",
            },
            {
                "type": "button",
                "action_id": FEEDBACK_ACTIONS[1],
                "value": str(answer_id),
                "text": {"type": "plain_text", "text": "👎 Not helpful"},
                "accessibility_label": "This answer was not helpful",
            },
        ],
    }


def tail_blocks(answer: Answer, answer_id: int | None) -> list[Block]:
    """What follows the answer text: notices, sources and the feedback buttons."""
    blocks: list[Block] = []
    if answer.citations:
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": "*Sources*"}]})
        blocks.extend(source_block(c, quote=is_extractive(answer)) for c in answer.citations)
    if answer_id is not None and not answer.abstained:
        blocks.append(feedback_block(answer_id))
    return blocks


def notice_blocks(answer: Answer) -> list[Block]:
    if not answer.notices:
        return []
    text = "\n".join(f"_{_escape(n)}_" for n in answer.notices)
    return [{"type": "context", "elements": [{"type": "mrkdwn", "text": text[:SECTION_LIMIT]}]}]


def is_extractive(answer: Answer) -> bool:
    return answer.model is None and bool(answer.citations)


def answer_messages(answer: Answer, answer_id: int | None) -> list[list[Block]]:
    """The answer as one or more messages' blocks, in order. An extractive answer shows its
    lead line, then each source with its quote."""
    text = answer.text.split("\n", 1)[0] if is_extractive(answer) else answer.text
    blocks = [*notice_blocks(answer), *markdown_blocks(text), *tail_blocks(answer, answer_id)]
    return paginate(blocks)


def paginate(blocks: Sequence[Block]) -> list[list[Block]]:
    """Blocks in messages of at most 50 blocks and 12,000 characters of markdown each."""
    messages: list[list[Block]] = [[]]
    size = 0
    for block in blocks:
        length = len(block.get("text", "")) if block["type"] == "markdown" else 0
        if len(messages[-1]) >= BLOCKS_PER_MESSAGE or (length and size + length > MARKDOWN_LIMIT):
            messages.append([])
            size = 0
        messages[-1].append(block)
        size += length
    return [m for m in messages if m]


NOTIFICATION_LIMIT = 1_500
SOURCE_NAMES = 5


def answer_text(answer: Answer) -> str:
    """The answer as plain text for notifications, screen readers and clients without Block
    Kit: the answer itself (an extractive answer's quotes, not its lead-in), then the names
    of its sources."""
    if is_extractive(answer):
        body = "\n".join(" ".join(c.text.split()) for c in answer.citations[:2])
    else:
        body = answer.text.strip()
    if len(body) > NOTIFICATION_LIMIT:
        body = body[: NOTIFICATION_LIMIT - 1].rsplit(" ", 1)[0] + "…"
    names = list(dict.fromkeys(c.name for c in answer.citations))
    if names:
        shown = ", ".join(names[:SOURCE_NAMES]) + (
            f" and {len(names) - SOURCE_NAMES} more" if len(names) > SOURCE_NAMES else ""
        )
        body += f"\nSources: {shown}"
    return body or "Lore's answer"


def fallback_text(blocks: Sequence[Block]) -> str:
    """Plain text for notifications and clients without Block Kit (an answer's first
    message uses `answer_text`)."""
    for block in blocks:
        if block["type"] == "markdown":
            text: str = block["text"]
            return text[:3000]
    return "Lore's answer"


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def confirm_blocks(text: str, action: str, value: str) -> list[Block]:
    return [
        {"type": "section", "text": {"type": "mrkdwn", "text": text[:SECTION_LIMIT]}},
        {
            "type": "actions",
            "block_id": f"confirm:{action}",
            "elements": [
                {
                    "type": "button",
                    "style": "danger",
                    "action_id": f"confirm_{action}",
                    "value": value,
                    "text": {"type": "plain_text", "text": "Yes, delete"},
                    "accessibility_label": "Yes, delete it for good",
                },
                {
                    "type": "button",
                    "action_id": f"cancel_{action}",
                    "value": value,
                    "text": {"type": "plain_text", "text": "Cancel"},
                    "accessibility_label": "Cancel and keep it",
                },
            ],
        },
    ]


FORM_LABELS = {"connect_confluence": "Connect Confluence"}


def form_button_blocks(text: str, form: str) -> list[Block]:
    """Text and a button whose action (`form`) opens a private form: a modal needs a
    trigger_id, which only an interaction such as this button press brings."""
    return [
        {"type": "section", "text": {"type": "mrkdwn", "text": text[:SECTION_LIMIT]}},
        {
            "type": "actions",
            "block_id": f"form:{form}",
            "elements": [
                {
                    "type": "button",
                    "style": "primary",
                    "action_id": form,
                    "value": form,
                    "text": {"type": "plain_text", "text": FORM_LABELS.get(form, "Open")},
                    "accessibility_label": f"{FORM_LABELS.get(form, 'Open')}: opens a private form",
                }
            ],
        },
    ]
