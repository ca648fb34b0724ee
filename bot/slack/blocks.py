"""Block Kit for answers: the text, numbered sources, feedback buttons; split to fit Slack.

Limits: a `markdown` block holds 12,000 characters, a `section` 3,000, a message 50 blocks.
Long answers become several messages; no text is ever cut. Nothing a document, a user or
the model wrote goes out raw (`bot.chat.mrkdwn`): the answer's markdown cannot mention
anyone, and names, authors, quotes and links are escaped.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bot.chat.messages import notice as worded
from bot.chat.mrkdwn import bold, defuse, escape, source
from bot.chat.render import age
from knowledge import Answer, Citation, distinct_names

Block = dict[str, Any]
MARKDOWN_LIMIT = 12_000
SECTION_LIMIT = 3_000
BLOCKS_PER_MESSAGE = 50
QUOTE_LIMIT = 600
FEEDBACK_ACTION = "answer_feedback"
HELPFUL, NOT_HELPFUL = "helpful", "not_helpful"


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
    """The model's (or Lore's) markdown, defused, in blocks that fit."""
    return [{"type": "markdown", "text": piece} for piece in split_text(defuse(text), MARKDOWN_LIMIT)]


def source_block(citation: Citation, *, quote: bool, name: str | None = None) -> Block:
    """A source, numbered, under the name it is shown by (`distinct_names`; its own name
    without one) and the heading its passage stands under, with its quote."""
    name = name or citation.name
    title = source(name, citation.url)
    if citation.section:
        title += f" › {escape(citation.section)}"
    facts = [f"added {age(citation.time_added)}", f"in {escape(citation.index_name)}"]
    if citation.author:
        facts.insert(0, f"by {escape(citation.author)}")
    text = f"[{citation.n}] {title} — {', '.join(facts)}"
    if quote and citation.text:
        snippet = (
            citation.text if len(citation.text) <= QUOTE_LIMIT else citation.text[: QUOTE_LIMIT - 1] + "…"
        )
        text += "\n>" + bold(escape(snippet)).replace("\n", "\n>")
    return {"type": "section", "text": {"type": "mrkdwn", "text": text[:SECTION_LIMIT]}}


def feedback_block(answer_id: int) -> Block:
    """Slack's own 👍/👎 (`feedback_buttons`): each button's value is `helpful:<answer id>`
    or `not_helpful:<answer id>`."""
    return {
        "type": "context_actions",
        "block_id": f"feedback:{answer_id}",
        "elements": [
            {
                "type": "feedback_buttons",
                "action_id": FEEDBACK_ACTION,
                "positive_button": {
                    "text": {"type": "plain_text", "text": "👍"},
                    "value": f"{HELPFUL}:{answer_id}",
                    "accessibility_label": "This answer helped",
                },
                "negative_button": {
                    "text": {"type": "plain_text", "text": "👎"},
                    "value": f"{NOT_HELPFUL}:{answer_id}",
                    "accessibility_label": "This answer did not help: tell us why",
                },
            }
        ],
    }


def read_feedback(value: str) -> tuple[bool, int] | None:
    """(helpful, answer id) from a feedback button's value; None for anything else."""
    verdict, _, answer = value.partition(":")
    if verdict not in (HELPFUL, NOT_HELPFUL) or not answer.isdigit():
        return None
    return verdict == HELPFUL, int(answer)


def tail_blocks(answer: Answer, answer_id: int | None) -> list[Block]:
    """What follows the answer text: notices, sources and the feedback buttons."""
    blocks: list[Block] = []
    if answer.citations:
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": "*Sources*"}]})
        names = distinct_names(answer.citations)
        blocks.extend(
            source_block(c, quote=is_extractive(answer), name=name)
            for c, name in zip(answer.citations, names, strict=True)
        )
    if answer_id is not None and not answer.abstained:
        blocks.append(feedback_block(answer_id))
    return blocks


def notice_blocks(answer: Answer) -> list[Block]:
    if not answer.notices:
        return []
    text = "\n".join(f"_{escape(worded(n))}_" for n in answer.notices)
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
        body = "\n".join(bold(escape(" ".join(c.text.split()))) for c in answer.citations[:2])
    else:
        body = bold(escape(answer.text.strip()))
    if len(body) > NOTIFICATION_LIMIT:
        body = body[: NOTIFICATION_LIMIT - 1].rsplit(" ", 1)[0] + "…"
    names = list(dict.fromkeys(escape(name) for name in distinct_names(answer.citations)))
    if names:
        shown = ", ".join(names[:SOURCE_NAMES]) + (
            f" and {len(names) - SOURCE_NAMES} more" if len(names) > SOURCE_NAMES else ""
        )
        body += f"\nSources: {shown}"
    return body or "Lore's answer"


def fallback_text(blocks: Sequence[Block]) -> str:
    """The message's `text` (mrkdwn, escaped) for notifications and clients without Block
    Kit: the first markdown block's text (an answer's first message uses `answer_text`)."""
    for block in blocks:
        if block["type"] == "markdown":
            text: str = block["text"]
            return escape(text.replace("&lt;", "<"))[:3000]
    return "Lore's answer"


def page_text(blocks: Sequence[Block]) -> str:
    """Everything a message's blocks say, as plain mrkdwn text (for when Slack refuses the
    blocks themselves): the markdown, then the sections and context lines."""
    lines: list[str] = []
    for block in blocks:
        if block["type"] == "markdown":
            lines.append(block["text"])
        elif block["type"] == "section":
            lines.append(block["text"]["text"])
        elif block["type"] == "context":
            lines.extend(e.get("text", "") for e in block["elements"])
    return "\n".join(line for line in lines if line) or "Lore's answer"


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


FORM_LABELS = {
    "connect_confluence": "Connect Confluence",
    "connect_github": "Connect GitHub",
    "connect_google-drive": "Connect Google Drive",
    "connect_notion": "Connect Notion",
}


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
