"""The chat command grammar: a message to Lore is one of these commands or a question.

Natural phrasings, case-insensitive, tolerant of punctuation, with or without "please"
and "can you". `parse()` never fails: whatever is not a command is a `Question`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

URL = re.compile(r"<?(https?://[^\s<>|]+)(?:\|[^>]*)?>?")
_POLITE = re.compile(
    r"^(?:(?:hey|hi|hello|ok|okay|so)[,!\s]+)?(?:lore[,:!]?\s+)?(?:(?:please|pls|plz|kindly)\s+|(?:can|could|would|will) you(?: please)?\s+)*",
    re.I,
)
_TRAILING = re.compile(r"[\s.!?,;:]*(?:,?\s*(?:please|pls|thanks|thank you))?[\s.!?,;:]*$", re.I)
_NAME = r"(?:the\s+)?[\"'“‘`]?(?P<name>[#\w][\w .#/-]*?)[\"'”’`]?"
_SUFFIX = r"\s+(?:knowledge\s+)?(?:index|kb)"
_INDEX = rf"{_NAME}(?:{_SUFFIX})?"  # "enable the eng index" or "enable eng"
_INDEX_WORD = rf"{_NAME}{_SUFFIX}"  # "use the eng index": the word "index" is required


@dataclass(frozen=True)
class Question:
    text: str


@dataclass(frozen=True)
class AddFiles:
    """“add this doc to your memory”, “remember this”."""


@dataclass(frozen=True)
class AddUrls:
    urls: tuple[str, ...]
    whole_site: bool = False


@dataclass(frozen=True)
class ListIndexes:
    pass


@dataclass(frozen=True)
class EnableIndex:
    name: str


@dataclass(frozen=True)
class DisableIndex:
    name: str


@dataclass(frozen=True)
class MakeDefault:
    name: str


@dataclass(frozen=True)
class CreateIndex:
    name: str


@dataclass(frozen=True)
class DeleteIndex:
    name: str


@dataclass(frozen=True)
class ListDocs:
    pass


@dataclass(frozen=True)
class Forget:
    reference: str


@dataclass(frozen=True)
class Status:
    pass


@dataclass(frozen=True)
class Help:
    pass


@dataclass(frozen=True)
class SetMode:
    mode: str


@dataclass(frozen=True)
class SetStrategy:
    strategy: str


@dataclass(frozen=True)
class StopIndexing:
    reference: str


@dataclass(frozen=True)
class Refresh:
    reference: str


@dataclass(frozen=True)
class ConnectSource:
    """“connect confluence”: opens the private form for credentials."""

    kind: str


@dataclass(frozen=True)
class ListSpaces:
    """“list confluence spaces”: what a connected Confluence offers."""


@dataclass(frozen=True)
class AttachSpace:
    """“add the ENG space to the confluence index” (optionally “… page 12345 …”)."""

    space: str
    index: str
    page: str | None = None


Command = (
    Question
    | AddFiles
    | AddUrls
    | ListIndexes
    | EnableIndex
    | DisableIndex
    | MakeDefault
    | CreateIndex
    | DeleteIndex
    | ListDocs
    | Forget
    | Status
    | Help
    | SetMode
    | SetStrategy
    | StopIndexing
    | Refresh
    | ConnectSource
    | ListSpaces
    | AttachSpace
)

_MEMORY = r"(?:(?:to|into|in)\s+(?:(?:your|the|my|our)\s+)?(?:memory|knowledge(?:\s+base)?|index|brain|kb))"
_PATTERNS: list[tuple[re.Pattern[str], Callable[..., Command]]] = [  # matched case-insensitively, in order
    (re.compile(r"^(?:help|what can you do|how do (?:i|you) use (?:you|this|lore))$", re.I), Help),
    (
        re.compile(r"^(?:status|indexing status|(?:what(?:'s| is) )?the status|show (?:the )?jobs)$", re.I),
        Status,
    ),
    (
        re.compile(
            r"^(?:list|show)(?: (?:me|all|the|your|my))* (?:indexes|indices|indexs|knowledge indexes|memories)$|^which indexes can i use$|^what do you know(?: about)?$|^what indexes (?:are there|do (?:you|i) have)$",
            re.I,
        ),
        ListIndexes,
    ),
    (
        re.compile(
            r"^(?:what(?:'s| is) in your memory|what do you remember|list (?:the |all |your )?(?:docs|documents|files)|show (?:me )?(?:the |all |your )?(?:docs|documents|files))$",
            re.I,
        ),
        ListDocs,
    ),
    (re.compile(rf"^(?:enable|turn on|activate) {_INDEX}$", re.I), EnableIndex),
    (
        re.compile(rf"^(?:use|add|search|check) {_INDEX_WORD}(?: (?:too|as well|here))?$", re.I),
        EnableIndex,
    ),
    (re.compile(rf"^(?:disable|turn off|deactivate) {_INDEX}$", re.I), DisableIndex),
    (re.compile(rf"^(?:stop using|remove) {_INDEX_WORD}$", re.I), DisableIndex),
    (
        re.compile(rf"^(?:make|set) {_INDEX} (?:as )?(?:the |my |your )?default(?: index)?$", re.I),
        MakeDefault,
    ),
    (re.compile(rf"^(?:set|change) (?:the )?default(?: index)? to {_INDEX}$", re.I), MakeDefault),
    (
        re.compile(
            rf"^(?:create|make|new)(?: an?| the)?(?: new)?(?: shared)? (?:index|knowledge index|memory)(?: (?:called|named))? {_INDEX}$",
            re.I,
        ),
        CreateIndex,
    ),
    (re.compile(rf"^(?:delete|destroy|drop) {_INDEX_WORD}$", re.I), DeleteIndex),
]
_MODE = re.compile(
    r"^(?:use|switch to|set|change to)(?: the)?(?: response)?(?: mode(?: to)?)? (?P<mode>rag[ _-]?only|llm[ _-]?only|hybrid|smart[ _-]?fallback|rag[ _-]?priority|llm[ _-]?priority)(?: mode)?(?: here| in this (?:channel|conversation))?$",
    re.I,
)
_STRATEGY = re.compile(
    r"^(?:use|set)(?: the)?(?: retrieval| rag)? strategy(?: to)? (?P<s>always|confidence|smart|function)(?: here)?$|^(?:use|set) (?P<s2>always|confidence|smart|function) (?:retrieval|strategy)(?: here)?$",
    re.I,
)
_ADD_FILES = re.compile(
    rf"^(?:add|save|store|put|index|ingest) (?:this|these|that|the|my|it|them)?\s*(?:doc|docs|document|documents|file|files|attachment|attachments|pdf|one)?\s*{_MEMORY}?$|^(?:remember|memori[sz]e|learn) (?:this|these|that|it)(?: (?:doc|docs|document|documents|file|files))?$",
    re.I,
)
_FORGET = re.compile(
    r"^(?:forget|remove|delete) (?:the )?(?:doc(?:ument)?|file|page|site)?\s*(?P<ref>.+?)(?: from (?:your |the )?memory)?$",
    re.I,
)
# "remove"/"delete" also mean other things ("how do I remove a user"), so they only forget
# something plainly a document: named as one, "from memory", a file name, a URL, a quote, an id.
_DOCUMENT_LIKE = re.compile(
    r"^forget |^\S+ (?:the )?(?:doc(?:ument)?|file|page|site) | from (?:your |the )?memory$",
    re.I,
)
_FILE_NAME = re.compile(r"^[\w .()-]+\.[a-z0-9]{1,5}$|^\d+$|^[\"'“‘`]", re.I)
_STOP = re.compile(
    r"^(?:stop|cancel) (?:indexing|crawling|the (?:indexing|crawl)(?: of)?)\s*(?P<ref>.*)$", re.I
)
_REFRESH = re.compile(r"^(?:refresh|re-?crawl|re-?index|update) (?P<ref>.+)$", re.I)
_CONNECT = re.compile(
    r"^(?:connect|link|set up|setup|hook up|integrate)(?: (?:to|with|up|our|the|a|my))* (?P<kind>confluence)"
    r"(?: (?:cloud|data center|site|wiki|instance|account))?(?: (?:to lore|here))?$",
    re.I,
)
_SPACES = re.compile(
    r"^(?:(?:list|show)(?: me)?(?: the| all| available)* (?:confluence )?spaces(?: in confluence)?"
    r"|which (?:confluence )?spaces (?:are there|can (?:i|you|we) (?:add|use|index)))$",
    re.I,
)
_ATTACH_SPACE = re.compile(
    r"^(?:add|sync|index|import|attach|pull in) (?:the )?"
    r"(?:(?P<space>~?[\w.-]+) (?:confluence )?space|(?:confluence )?space (?P<space2>~?[\w.-]+))"
    r"(?: (?:from )?(?:page|tree|under page|from page) (?P<page>\d+))?"
    r" (?:to|into|in) (?:the )?[\"'“‘`]?(?P<index>[#\w][\w .#/-]*?)[\"'”’`]?(?: (?:knowledge )?index)?$",
    re.I,
)
_MENTION = re.compile(r"<@[A-Z0-9]+(?:\|[^>]*)?>|^\s*@lore\b[,:]?", re.I)
_CHANNEL = re.compile(r"<#[A-Z0-9]+\|([^>]+)>")  # how Slack sends "#eng"
_SITE_WORDS = re.compile(r"\b(?:site|website|docs site|whole|all pages|crawl)\b", re.I)


def parse(message: str) -> Command:
    """The command `message` asks for, or a `Question`."""
    raw = " ".join(message.split())
    text = _normalise(raw)
    urls = tuple(match.group(1).rstrip(".,;:!?") for match in URL.finditer(raw))  # "see https://x.io."
    if urls and re.match(r"^(?:add|save|store|index|ingest|remember|crawl|learn)\b", text, re.I):
        return AddUrls(urls, whole_site=bool(_SITE_WORDS.search(text)) or "these docs" in text.lower())
    if match := _CONNECT.match(text):
        return ConnectSource(match.group("kind").lower())
    if _SPACES.match(text):
        return ListSpaces()
    if match := _ATTACH_SPACE.match(text):
        space = match.group("space") or match.group("space2")
        return AttachSpace(
            space.upper() if not space.startswith("~") else space,
            match.group("index").strip(),
            match.group("page"),
        )
    if match := _MODE.match(text):
        return SetMode(re.sub(r"[ _-]+", "_", match.group("mode")).upper())
    if match := _STRATEGY.match(text):
        return SetStrategy((match.group("s") or match.group("s2")).lower())
    if _ADD_FILES.match(text):
        return AddFiles()
    for pattern, command in _PATTERNS:
        match = pattern.match(text)
        if match:
            name = match.groupdict().get("name")
            return command(name.strip()) if name else command()
    if match := _STOP.match(text):
        return StopIndexing(_reference(raw, match.group("ref"), urls))
    if match := _REFRESH.match(text):
        return Refresh(_reference(raw, match.group("ref"), urls))
    if (match := _FORGET.match(text)) and (
        urls or _DOCUMENT_LIKE.search(text) or _FILE_NAME.match(match.group("ref"))
    ):
        return Forget(_reference(raw, match.group("ref"), urls))
    return Question(_strip_mentions(raw))


def _strip_mentions(text: str) -> str:
    """Mentions removed and Slack's channel links (`<#C123|eng>`) spelled `#eng`."""
    return " ".join(_CHANNEL.sub(r"#\1", _MENTION.sub(" ", text)).split())


def _normalise(text: str) -> str:
    """Mentions, greetings, "please" and trailing punctuation removed; case kept."""
    text = _strip_mentions(text)
    text = _POLITE.sub("", text)
    return _TRAILING.sub("", text).strip()


def _reference(raw: str, captured: str, urls: tuple[str, ...]) -> str:
    if urls:
        return urls[0]
    return captured.strip().strip("\"'“”‘’`").strip()
