"""How an answer is shown: while Lore looks, at a glance, shared, and its notices."""

from __future__ import annotations

from collections.abc import Sequence

from knowledge import Notice, NoticeKind

__all__ = [
    "LOADING_MESSAGES",
    "LOOKING_PRIVATELY",
    "NOT_SHAREABLE",
    "NOT_SHOWN_HERE",
    "SHOW_MORE",
    "SHOW_MORE_LABEL",
    "STATUS",
    "WORKING",
    "notice",
    "quoted_from",
    "shared_by",
    "sources_line",
]


WORKING = "Looking through my memory…"
LOOKING_PRIVATELY = "Looking through my memory… (only you will see the answer)"
NOT_SHAREABLE = "I can't share that answer any more."


def shared_by(user: str, question: str) -> str:
    """Above an answer someone shared from `/lore`."""
    shown = question if len(question) <= 300 else question[:299] + "…"
    shown = shown.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return f"<@{user}> shared Lore's answer to “{shown}”"


STATUS = "is looking through its memory…"
LOADING_MESSAGES = (
    "Looking through my memory…",
    "Reading the passages that match…",
    "Checking my sources…",
)
SHOW_MORE = "Show more"
SHOW_MORE_LABEL = "Show the whole answer, only to you"
NOT_SHOWN_HERE = "I can't show that answer here."


def quoted_from(source: str, quote: str) -> str:
    """A quote in an answer at a glance, after its source (both already made safe); a code
    block opens on a line of its own."""
    return f"From {source}:{chr(10) if quote.startswith('```') else ' '}{quote}"


def sources_line(sources: Sequence[str]) -> str:
    """The sources of an answer in one line (each already made safe)."""
    return "Sources: " + " · ".join(sources)


_NOTICES = {
    NoticeKind.HEDGED: "I'm not sure the documents answer exactly this: check the sources.",
    NoticeKind.KEYWORD_ONLY: "The embedding model failed, so I searched by keyword only.",
    NoticeKind.UNVERIFIED: "The model's answer did not rest every claim on a cited document, so here is "
    "what the documents say.",
    NoticeKind.GENERAL_KNOWLEDGE: "Not from your documents: this answer comes from the model's general knowledge.",
    NoticeKind.PARTLY_GENERAL: "Sentences marked (general knowledge) are not from your documents.",
    NoticeKind.MODEL_FIRST: "Partly from the model's own knowledge: only what cites a source here rests on "
    "your documents.",
}


def notice(said: Notice) -> str:
    """What an answer's notice says, as plain text (every surface shows it; Slack escapes it)."""
    match said.kind:
        case NoticeKind.ELSEWHERE:
            return f"What I found is about {said.detail}, not {' or '.join(said.asked)}."
        case NoticeKind.NO_MODEL:
            return f"No language model is configured, so {said.detail} answers quote the documents."
        case NoticeKind.MODEL_FAILED:
            return _sentence(f"{said.detail}, so here is what the documents say.")
        case NoticeKind.MODEL_SILENT:
            return _sentence(f"{said.detail or 'the model gave no answer'}; here is what the documents say.")
        case NoticeKind.MODEL_PROBLEM:
            return f"{said.detail.capitalize()}."
    return _NOTICES[said.kind]


def _sentence(text: str) -> str:
    return text[0].upper() + text[1:]
