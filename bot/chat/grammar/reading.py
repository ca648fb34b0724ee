"""Reading a message: mentions, greetings, "please" and punctuation set aside, links found;
and the pieces of phrasing the commands share (an index's name, “into the … index”)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from bot.chat.intents import (
    Command,
    Question,
)

__all__ = [
    "INDEX",
    "INDEX_WORD",
    "MEMORY",
    "POLITE",
    "URL",
    "Said",
    "fixed",
    "named",
    "question",
    "read",
    "reference",
    "regex",
    "strip_mentions",
]


URL = re.compile(r"<?(https?://[^\s<>|]+)(?:\|[^>]*)?>?")
POLITE = re.compile(
    r"^(?:(?:hey|hi|hello|ok|okay|so)[,!\s]+)?(?:lore[,:!]?\s+)?(?:(?:please|pls|plz|kindly)\s+|(?:can|could|would|will) you(?: please)?\s+)*",
    re.I,
)
_TRAILING = re.compile(r"[\s.!?,;:]*(?:,?\s*(?:please|pls|thanks|thank you))?[\s.!?,;:]*$", re.I)
_NAME = r"(?:the\s+)?[\"'“‘`]?(?P<name>[#\w][\w .#/-]*?)[\"'”’`]?"
_SUFFIX = r"\s+(?:knowledge\s+)?(?:index|kb)"
INDEX = rf"{_NAME}(?:{_SUFFIX})?"  # "enable the eng index" or "enable eng"
INDEX_WORD = rf"{_NAME}{_SUFFIX}"  # "use the eng index": the word "index" is required
MEMORY = r"(?:(?:to|into|in)\s+(?:(?:your|the|my|our)\s+)?(?:memory|knowledge(?:\s+base)?|index|brain|kb))"
_MENTION = re.compile(r"<@[A-Z0-9]+(?:\|[^>]*)?>|^\s*@lore\b[,:]?", re.I)
_CHANNEL = re.compile(r"<#[A-Z0-9]+\|([^>]+)>")  # how Slack sends "#eng"


def regex(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.I)


@dataclass(frozen=True)
class Said:
    """A message as the grammar reads it: as typed (`raw`), tidied (`text`), its links."""

    raw: str
    text: str
    urls: tuple[str, ...]


def named(
    patterns: tuple[re.Pattern[str], ...], build: Callable[[str], Command]
) -> Callable[[Said], Command | None]:
    def match(said: Said) -> Command | None:
        for pattern in patterns:
            if found := pattern.match(said.text):
                return build(found.group("name").strip())
        return None

    return match


def fixed(pattern: re.Pattern[str], build: Callable[[], Command]) -> Callable[[Said], Command | None]:
    return lambda said: build() if pattern.match(said.text) else None


def read(message: str) -> Said:
    """The message as the grammar reads it."""
    raw = " ".join(message.split())
    urls = tuple(match.group(1).rstrip(".,;:!?") for match in URL.finditer(raw))  # "see https://x.io."
    return Said(raw, _normalise(raw), urls)


def question(said: Said) -> Question:
    """The message as a question: its words, without the mentions."""
    return Question(strip_mentions(said.raw))


def strip_mentions(text: str) -> str:
    """Mentions removed and Slack's channel links (`<#C123|eng>`) spelled `#eng`."""
    return " ".join(_CHANNEL.sub(r"#\1", _MENTION.sub(" ", text)).split())


def _normalise(text: str) -> str:
    """Mentions, greetings, "please" and trailing punctuation removed; case kept."""
    text = strip_mentions(text)
    text = POLITE.sub("", text)
    return _TRAILING.sub("", text).strip()


def reference(said: Said, captured: str) -> str:
    if said.urls:
        return said.urls[0]
    return captured.strip().strip("\"'“”‘’`").strip()
