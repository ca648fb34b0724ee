"""Block Kit for answers: the text, numbered sources, feedback buttons; split to fit Slack.

Limits: a `markdown` block holds 12,000 characters, a `section` 3,000, a message 50 blocks.
Long answers become several messages; no text is ever cut. Nothing a document, a user or
the model wrote goes out raw (`bot.chat.mrkdwn`): the answer's markdown cannot mention
anyone, and names, authors, quotes and links are escaped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bot.chat import messages
from bot.chat.messages import notice as worded
from bot.chat.mrkdwn import bold, defuse, escape, safe_url, source
from bot.chat.surface import Offers
from knowledge import VISIBLE_LINES, Answer, cut, distinct_names

Block = dict[str, Any]
MARKDOWN_LIMIT = 12_000
SECTION_LIMIT = 3_000
BLOCKS_PER_MESSAGE = 50
FEEDBACK_ACTION = "answer_feedback"
MORE_ACTION = "answer_more"
VERIFY_ACTION = "answer_verify"
ESCALATE_ACTION = "answer_escalate"
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


def tail_blocks(answer: Answer, answer_id: int | None, offers: Buttons | None = None) -> list[Block]:
    """What follows the answer's words: its sources in a line, the buttons ("Show more",
    "Verify", "Ask an expert") and 👍/👎."""
    blocks = [*sources_line(answer), *offer_blocks(answer, answer_id, offers or Buttons())]
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


@dataclass(frozen=True)
class Buttons:
    """The buttons an answer carries besides 👍/👎 and "Show more"."""

    verify: bool = False
    """"Verify": for the conversation's experts, who may mark the answer as the right one."""
    escalate: bool = False
    """"Ask an expert": Lore was not sure, and there are experts to ask."""


def offers_for(offers: Offers, answer: Answer) -> Buttons:
    """What the conversation offers (`bot.chat.surface.Offers`), for this answer."""
    return Buttons(verify=offers.verify(answer), escalate=offers.escalate(answer))


def not_sure_blocks(text: str, answer_id: int) -> list[Block]:
    """Lore is not sure enough to answer, said privately, with "Ask an expert"."""
    return [
        {"type": "section", "text": {"type": "mrkdwn", "text": text[:SECTION_LIMIT]}},
        {
            "type": "actions",
            "block_id": f"unsure:{answer_id}",
            "elements": [_button(messages.ASK_EXPERT, ESCALATE_ACTION, answer_id, messages.ASK_EXPERT_LABEL)],
        },
    ]


def brief_blocks(answer: Answer) -> list[Block]:
    """The answer at a glance (`Answer.brief`): quotes from the documents after their names
    ("From *deploy.md* › Rollbacks: …"), escaped, in Slack's bold; else the start of the answer's words,
    defused."""
    brief = answer.brief
    if not brief.quotes:
        return markdown_blocks(brief.text) if brief.text else []
    names = dict(zip((c.n for c in answer.citations), distinct_names(answer.citations), strict=True))
    by_n = {c.n: c for c in answer.citations}
    blocks = []
    for glimpse in brief.quotes:
        cited = by_n[glimpse.n]
        title = source(names[glimpse.n], cited.url)
        if cited.section:
            title += f" › {escape(cited.section)}"
        text = messages.quoted_from(title, bold(escape(glimpse.text)))
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": text[:SECTION_LIMIT]}})
    return blocks


def sources_line(answer: Answer) -> list[Block]:
    """The sources as compact links: "Sources: [1] deploy.md › Rollbacks · [2] runbook.md",
    in as many context lines as they need."""
    if not answer.citations:
        return []
    names = distinct_names(answer.citations)
    shown = []
    for c, name in zip(answer.citations, names, strict=True):
        title = f"[{c.n}] {source(name, c.url)}"
        shown.append(title + (f" › {escape(c.section)}" if c.section else ""))
    lines: list[list[str]] = [[]]
    for item in shown:
        if lines[-1] and len(messages.sources_line([*lines[-1], item])) > SECTION_LIMIT:
            lines.append([])
        lines[-1].append(item[: SECTION_LIMIT // 2])
    return [_context(messages.sources_line(line)) for line in lines]


def offer_blocks(answer: Answer, answer_id: int | None, offers: Buttons) -> list[Block]:
    """ "Show more" when the brief leaves something out, "Verify" and "Ask an expert" as
    `offers` says; each button's value is the answer's id."""
    if answer_id is None:
        return []
    buttons = []
    if not answer.brief.complete:
        buttons.append(_button(messages.SHOW_MORE, MORE_ACTION, answer_id, messages.SHOW_MORE_LABEL))
    if offers.verify:
        buttons.append(_button(messages.VERIFY, VERIFY_ACTION, answer_id, messages.VERIFY_LABEL))
    if offers.escalate:
        buttons.append(_button(messages.ASK_EXPERT, ESCALATE_ACTION, answer_id, messages.ASK_EXPERT_LABEL))
    return [{"type": "actions", "block_id": f"answer:{answer_id}", "elements": buttons}] if buttons else []


def verified_blocks(answer: Answer) -> list[Block]:
    """A verified answer that matched the question, first: its words (escaped, cut to the
    glance), then "✅ Verified by Carol on 3 Nov" with the link to its thread."""
    found = answer.verified
    if found is None:
        return []
    words = cut(found.answer, VISIBLE_LINES - 2).text
    mark = messages.verified_mark(
        escape(found.question), escape(found.verified_by), found.verified_at, safe_url(found.link)
    )
    return [
        {"type": "section", "text": {"type": "mrkdwn", "text": escape(words)[:SECTION_LIMIT]}},
        _context(mark),
    ]


def answer_messages(
    answer: Answer, answer_id: int | None, offers: Buttons | None = None
) -> list[list[Block]]:
    """The answer at a glance, as one or more messages' blocks, in order: notices, a
    verified answer that matched, the brief (at most about 8 lines), the sources in a line,
    the buttons; "Show more" (`whole_messages`) gives the rest. With a verified answer, the
    documents' own answer waits behind "Show more"."""
    shown = verified_blocks(answer) or brief_blocks(answer)
    blocks = [*notice_blocks(answer), *shown, *tail_blocks(answer, answer_id, offers)]
    return paginate(blocks)


def whole_messages(text: str, cited: Sequence[Mapping[str, object]]) -> list[list[Block]]:
    """An answer whole, as "Show more" gives it: its text (defused) and every source, named
    and linked, with the heading its passage stands under."""
    lines = []
    for source_ in cited:
        name, url = str(source_.get("name") or ""), source_.get("url")
        title = source(name, url if isinstance(url, str) else None)
        if section := source_.get("section"):
            title += f" › {escape(str(section))}"
        lines.append(f"[{source_.get('n')}] {title}")
    tail = [_context("*Sources*\n" + "\n".join(lines))] if lines else []
    return paginate([*markdown_blocks(text), *tail])


def _button(text: str, action: str, answer_id: int, label: str) -> Block:
    return {
        "type": "button",
        "action_id": action,
        "value": str(answer_id),
        "text": {"type": "plain_text", "text": text},
        "accessibility_label": label,
    }


def _context(text: str) -> Block:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": text[:SECTION_LIMIT]}]}


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
    Kit: the answer itself at a glance (a verified answer that matched, else the brief: an
    extractive answer's quotes, not a lead-in), then the names of its sources."""
    if answer.verified is not None:
        body = bold(escape(answer.verified.answer.strip()))
    else:
        body = bold(escape(answer.short().strip()))
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
