"""The chat commands: a message to Lore is one of these commands or a question.

Each command is declared once (`Declaration`): its grammar, what it does, examples of how
people say it, and who may use it. `parse()` tries the declarations in order; `help`, the
README's command table and the grammar tests are generated from them. Phrasings are
natural, case-insensitive, tolerant of punctuation, with or without "please" and "can you".
`parse()` never fails: whatever is not a command is a `Question`.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable
from dataclasses import dataclass

from knowledge.sources.connectors.registry import CONNECTORS

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

    thread_too: bool = False
    """Said without naming documents (“remember this”): in a thread, the thread is saved too."""


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


@dataclass(frozen=True)
class DocumentsOnly:
    """“make the handbook index documents only” / “let the handbook index use general knowledge”."""

    name: str
    on: bool = True


@dataclass(frozen=True)
class ShowFeedback:
    """“show feedback” (optionally “… for the eng index”): answers that did not help and
    questions Lore could not answer, for the indexes the asker looks after."""

    index: str | None = None


@dataclass(frozen=True)
class SaveThread:
    """“remember this thread”: the thread's messages, as one document."""


@dataclass(frozen=True)
class RequireMentions:
    """“require mentions here” / “answer follow-ups without a mention”."""

    required: bool


@dataclass(frozen=True)
class LearnChannel:
    """“learn this channel”: read its history into its index and keep it fresh."""


@dataclass(frozen=True)
class ForgetChannelHistory:
    """“forget this channel's history”."""


@dataclass(frozen=True)
class LockSettings:
    """“lock this channel's settings” / “unlock …”: only admins change them while locked."""

    locked: bool


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
    | LockSettings
    | DocumentsOnly
    | StopIndexing
    | Refresh
    | ConnectSource
    | ListSpaces
    | AttachSpace
    | ShowFeedback
    | SaveThread
    | RequireMentions
    | LearnChannel
    | ForgetChannelHistory
)

_MEMORY = r"(?:(?:to|into|in)\s+(?:(?:your|the|my|our)\s+)?(?:memory|knowledge(?:\s+base)?|index|brain|kb))"
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
    r"^(?:connect|link|set up|setup|hook up|integrate)(?: (?:to|with|up|our|the|a|my))* "
    rf"(?P<kind>{'|'.join(map(re.escape, CONNECTORS))})"
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


_DOCUMENTS_ONLY = (
    re.compile(rf"^(?:make|set|keep|lock) {_INDEX} (?:to )?(?:documents?|docs|rag)[ -]only$", re.I),
    re.compile(rf"^(?:answer|use) (?:only )?(?:from )?{_INDEX_WORD} (?:documents|docs) only$", re.I),
)
_GENERAL_KNOWLEDGE = (
    re.compile(
        rf"^(?:let|allow) {_INDEX} (?:to )?use (?:general|the model's|model) knowledge(?: again)?$", re.I
    ),
    re.compile(rf"^unlock {_INDEX_WORD}$", re.I),
)
_LOCK = re.compile(
    r"^(?P<verb>lock|unlock) (?:the |this |our )?(?:channel(?:'s)? |conversation(?:'s)? )?settings(?: here| (?:of|for|in) this channel)?$",
    re.I,
)


def _regex(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.I)


_SAVE_THREAD = _regex(
    rf"^(?:remember|save|store|keep|memori[sz]e|add|index) (?:this|the|that|our) (?:whole )?(?:thread|conversation|discussion)\s*{_MEMORY}?$"
)
_REQUIRE_MENTIONS = _regex(
    r"^(?:require|need) (?:an? )?(?:@?mentions?|@lore)(?: here| in this (?:channel|conversation))?$"
    r"|^(?:only )?(?:answer|reply|respond)(?: only)? when (?:i )?(?:@?mentioned|mention you|you(?:['’]re| are) mentioned)(?: here)?$"
)
_NO_MENTIONS = _regex(
    r"^(?:don['’]?t|do not|stop|no longer) (?:require|requiring|need|needing) (?:an? )?(?:@?mentions?|@lore)(?: here| in this (?:channel|conversation))?$"
    r"|^(?:answer|reply to|respond to) follow[- ]?ups(?: here)?(?: without (?:an? )?@?mentions?)?$"
)
_LEARN_CHANNEL = _regex(
    r"^(?:learn|read|index|remember|ingest)(?: from)? (?:this|the) channel(?:['’]s)?(?: (?:history|messages|conversations?))?$"
    r"|^(?:learn|read|index) (?:the )?(?:history|messages) of this channel$"
)
_FORGET_HISTORY = _regex(
    r"^(?:forget|remove|delete|unlearn) (?:this|the) channel(?:['’]s)?(?: (?:history|messages))?$"
    r"|^(?:forget|remove|delete) (?:the )?(?:history|messages) of this channel$"
    r"|^stop learning (?:this|the) channel$"
)


def _require_mentions(said: Said) -> Command | None:
    if _REQUIRE_MENTIONS.match(said.text):
        return RequireMentions(True)
    return RequireMentions(False) if _NO_MENTIONS.match(said.text) else None


_HELP = _regex(r"^(?:help|what can you do|how do (?:i|you) use (?:you|this|lore))$")
_STATUS = _regex(r"^(?:status|indexing status|(?:what(?:'s| is) )?the status|show (?:the )?jobs)$")
_LIST_INDEXES = _regex(
    r"^(?:list|show)(?: (?:me|all|the|your|my))* (?:indexes|indices|indexs|knowledge indexes|memories)$|^which indexes can i use$|^what do you know(?: about)?$|^what indexes (?:are there|do (?:you|i) have)$"
)
_LIST_DOCS = _regex(
    r"^(?:what(?:'s| is) in your memory|what do you remember|list (?:the |all |your )?(?:docs|documents|files)|show (?:me )?(?:the |all |your )?(?:docs|documents|files))$"
)
_ENABLE = (
    _regex(rf"^(?:enable|turn on|activate) {_INDEX}$"),
    _regex(rf"^(?:use|add|search|check) {_INDEX_WORD}(?: (?:too|as well|here))?$"),
)
_DISABLE = (
    _regex(rf"^(?:disable|turn off|deactivate) {_INDEX}$"),
    _regex(rf"^(?:stop using|remove) {_INDEX_WORD}$"),
)
_DEFAULT = (
    _regex(rf"^(?:make|set) {_INDEX} (?:as )?(?:the |my |your )?default(?: index)?$"),
    _regex(rf"^(?:set|change) (?:the )?default(?: index)? to {_INDEX}$"),
)
_CREATE = _regex(
    rf"^(?:create|make|new)(?: an?| the)?(?: new)?(?: shared)? (?:index|knowledge index|memory)(?: (?:called|named))? {_INDEX}$"
)
_DELETE = _regex(rf"^(?:delete|destroy|drop) {_INDEX_WORD}$")


class Section(enum.StrEnum):
    DOCUMENTS = "Documents"
    SITES = "Sites"
    INDEXES = "Indexes"
    HISTORY = "Slack threads and channels"
    ANSWERS = "Answers"
    CONFLUENCE = "Confluence"
    LORE = "Lore"


@dataclass(frozen=True)
class Said:
    """A message as the grammar reads it: as typed (`raw`), tidied (`text`), its links."""

    raw: str
    text: str
    urls: tuple[str, ...]


@dataclass(frozen=True)
class Declaration:
    """One command: how it is recognised, what it does, how people say it, who may."""

    command: type
    summary: str
    examples: tuple[str, ...]
    who: str
    section: Section
    match: Callable[[Said], Command | None]


def _named(
    patterns: tuple[re.Pattern[str], ...], build: Callable[[str], Command]
) -> Callable[[Said], Command | None]:
    def match(said: Said) -> Command | None:
        for pattern in patterns:
            if found := pattern.match(said.text):
                return build(found.group("name").strip())
        return None

    return match


def _fixed(pattern: re.Pattern[str], build: Callable[[], Command]) -> Callable[[Said], Command | None]:
    return lambda said: build() if pattern.match(said.text) else None


def _add_urls(said: Said) -> Command | None:
    if said.urls and re.match(r"^(?:add|save|store|index|ingest|remember|crawl|learn)\b", said.text, re.I):
        whole = bool(_SITE_WORDS.search(said.text)) or "these docs" in said.text.lower()
        return AddUrls(said.urls, whole_site=whole)
    return None


_DOCUMENT_WORDS = re.compile(r"\b(?:docs?|documents?|files?|attachments?|pdf)\b", re.I)


def _add_files(said: Said) -> Command | None:
    if not _ADD_FILES.match(said.text):
        return None
    return AddFiles(thread_too=not _DOCUMENT_WORDS.search(said.text))


def _connect(said: Said) -> Command | None:
    return ConnectSource(found.group("kind").lower()) if (found := _CONNECT.match(said.text)) else None


def _attach_space(said: Said) -> Command | None:
    if not (found := _ATTACH_SPACE.match(said.text)):
        return None
    space = found.group("space") or found.group("space2")
    return AttachSpace(
        space.upper() if not space.startswith("~") else space,
        found.group("index").strip(),
        found.group("page"),
    )


def _mode(said: Said) -> Command | None:
    return (
        SetMode(re.sub(r"[ _-]+", "_", found.group("mode")).upper())
        if (found := _MODE.match(said.text))
        else None
    )


def _strategy(said: Said) -> Command | None:
    if not (found := _STRATEGY.match(said.text)):
        return None
    return SetStrategy((found.group("s") or found.group("s2")).lower())


_FEEDBACK = re.compile(
    rf"^(?:show|list|see|review|what(?:'s| is)(?: the)?)(?: me)?(?: the| all| any)?"
    rf" (?:feedback|unhelpful answers|unanswered questions)(?: (?:for|on|about|of) {_INDEX})?$",
    re.I,
)


def _feedback(said: Said) -> Command | None:
    if not (found := _FEEDBACK.match(said.text)):
        return None
    return ShowFeedback(found.group("name").strip() if found.group("name") else None)


def _lock(said: Said) -> Command | None:
    return LockSettings(found.group("verb").lower() == "lock") if (found := _LOCK.match(said.text)) else None


def _documents_only(said: Said) -> Command | None:
    for pattern in _DOCUMENTS_ONLY:
        if found := pattern.match(said.text):
            return DocumentsOnly(found.group("name").strip(), True)
    for pattern in _GENERAL_KNOWLEDGE:
        if found := pattern.match(said.text):
            return DocumentsOnly(found.group("name").strip(), False)
    return None


def _stop(said: Said) -> Command | None:
    return StopIndexing(_reference(said, found.group("ref"))) if (found := _STOP.match(said.text)) else None


def _refresh(said: Said) -> Command | None:
    return Refresh(_reference(said, found.group("ref"))) if (found := _REFRESH.match(said.text)) else None


def _forget(said: Said) -> Command | None:
    found = _FORGET.match(said.text)
    if found and (said.urls or _DOCUMENT_LIKE.search(said.text) or _FILE_NAME.match(found.group("ref"))):
        return Forget(_reference(said, found.group("ref")))
    return None


ANYONE = "anyone here"
SETTINGS = "in a DM, you; in a channel, its members (admins only once an admin locks the channel's settings)"
ADMINS = "in a DM, you; in a channel, workspace admins"
KEEPERS = "channel indexes: their channel's members; shared indexes: their creator, whoever added it, admins"
CONNECTOR_ADMINS = "workspace admins and LORE_CONNECTOR_ADMINS"
LEARNERS = "the channel's members, from the channel (never partners); only into the channel's own index"

DECLARATIONS: tuple[Declaration, ...] = (  # tried in this order
    Declaration(
        AddUrls,
        "Add web pages, or crawl a whole site (with progress here) and keep it fresh",
        (
            "add https://docs.example.com/page to your memory",
            "add these docs to your memory: https://docs.example.com/api/",
        ),
        "where documents may be added (see who may see what)",
        Section.SITES,
        _add_urls,
    ),
    Declaration(
        ConnectSource,
        "Connect Confluence (credentials go into a private form)",
        ("connect confluence",),
        CONNECTOR_ADMINS,
        Section.CONFLUENCE,
        _connect,
    ),
    Declaration(
        ListSpaces,
        "The spaces a connected Confluence offers",
        ("list confluence spaces",),
        CONNECTOR_ADMINS,
        Section.CONFLUENCE,
        _fixed(_SPACES, ListSpaces),
    ),
    Declaration(
        AttachSpace,
        "Index a Confluence space (or a page tree) into an index, with progress here",
        ("add the ENG space to the confluence index", "add the ENG space from page 12345 to the docs index"),
        CONNECTOR_ADMINS,
        Section.CONFLUENCE,
        _attach_space,
    ),
    Declaration(
        SetMode,
        "How answers use documents and the model: rag only, llm only, hybrid, smart fallback, rag priority, llm priority",
        ("use rag only mode here", "switch to hybrid"),
        ADMINS,
        Section.ANSWERS,
        _mode,
    ),
    Declaration(
        SetStrategy,
        "When to search: always, confidence, smart, function",
        ("use the strategy smart",),
        ADMINS,
        Section.ANSWERS,
        _strategy,
    ),
    Declaration(
        RequireMentions,
        "Whether Lore answers follow-ups in threads it answered in without a mention (the default), or only when mentioned",
        ("require mentions here", "answer follow-ups without a mention"),
        ADMINS,
        Section.ANSWERS,
        _require_mentions,
    ),
    Declaration(
        LockSettings,
        "Lock (or unlock) this channel's settings so only admins change them",
        ("lock this channel's settings", "unlock settings"),
        ADMINS,
        Section.ANSWERS,
        _lock,
    ),
    Declaration(
        DocumentsOnly,
        "Answers that draw on an index use its documents alone (rag only, wherever it is enabled), or may use general knowledge again",
        ("make the handbook index documents only", "let the handbook index use general knowledge"),
        "its owner; a channel's index: an admin, from that channel; admins",
        Section.ANSWERS,
        _documents_only,
    ),
    Declaration(
        ShowFeedback,
        "Answers people found unhelpful and questions I couldn't answer, with their comments",
        ("show feedback", "show feedback for the handbook index"),
        "an index's keepers: its channel's members, a shared index's creator, your own "
        "personal index; workspace admins",
        Section.ANSWERS,
        _feedback,
    ),
    Declaration(
        SaveThread,
        "Save this thread (every message, who said it and when, its link) to this conversation's default index, with its files; saving again updates it (“remember this” in a thread does too)",
        ("remember this thread", "save this thread"),
        "where documents may be added (see who may see what)",
        Section.HISTORY,
        _fixed(_SAVE_THREAD, SaveThread),
    ),
    Declaration(
        LearnChannel,
        "Read this channel's history into its own index (with progress here) and keep it up to date as people write, edit and delete",
        ("learn this channel",),
        LEARNERS,
        Section.HISTORY,
        _fixed(_LEARN_CHANNEL, LearnChannel),
    ),
    Declaration(
        ForgetChannelHistory,
        "Stop learning this channel and remove its history from its index",
        ("forget this channel's history",),
        "the channel's members, from the channel (never partners)",
        Section.HISTORY,
        _fixed(_FORGET_HISTORY, ForgetChannelHistory),
    ),
    Declaration(
        AddFiles,
        "Add the files on this message (or on the thread's parent) to this conversation's default index; in a DM, just drop files",
        ("add this doc to your memory", "remember this"),
        "where documents may be added (see who may see what)",
        Section.DOCUMENTS,
        _add_files,
    ),
    Declaration(Help, "What Lore can do", ("help",), ANYONE, Section.LORE, _fixed(_HELP, Help)),
    Declaration(
        Status,
        "Indexing jobs and attached sources here",
        ("status",),
        ANYONE,
        Section.SITES,
        _fixed(_STATUS, Status),
    ),
    Declaration(
        ListIndexes,
        "The indexes you may use here: enabled, default, sizes",
        ("list indexes", "which indexes can I use"),
        ANYONE,
        Section.INDEXES,
        _fixed(_LIST_INDEXES, ListIndexes),
    ),
    Declaration(
        ListDocs,
        "The default index's documents",
        ("what's in your memory",),
        ANYONE,
        Section.DOCUMENTS,
        _fixed(_LIST_DOCS, ListDocs),
    ),
    Declaration(
        EnableIndex,
        "Search another index here too",
        ("enable the handbook index", "use the handbook index too"),
        SETTINGS,
        Section.INDEXES,
        _named(_ENABLE, EnableIndex),
    ),
    Declaration(
        DisableIndex,
        "Stop searching an index here",
        ("disable the handbook index",),
        SETTINGS,
        Section.INDEXES,
        _named(_DISABLE, DisableIndex),
    ),
    Declaration(
        MakeDefault,
        "Where new documents go in this conversation",
        ("make handbook the default",),
        SETTINGS,
        Section.INDEXES,
        _named(_DEFAULT, MakeDefault),
    ),
    Declaration(
        CreateIndex,
        "A new shared index, enabled here",
        ("create an index called handbook",),
        "anyone in the workspace (not partners)",
        Section.INDEXES,
        _named((_CREATE,), CreateIndex),
    ),
    Declaration(
        DeleteIndex,
        "Delete an index and everything in it (asks to confirm)",
        ("delete the handbook index",),
        "shared: its creator or an admin; a channel's: an admin, from that channel",
        Section.INDEXES,
        _named((_DELETE,), DeleteIndex),
    ),
    Declaration(
        StopIndexing,
        "Stop a running crawl or sync",
        ("stop indexing docs.example.com",),
        KEEPERS + "; Confluence: " + CONNECTOR_ADMINS,
        Section.SITES,
        _stop,
    ),
    Declaration(
        Refresh,
        "Crawl a site (or sync Confluence) again now, or change how often: hourly, daily, weekly, every 6 hours, never",
        ("refresh docs.example.com", "refresh docs.example.com weekly"),
        KEEPERS + "; Confluence: " + CONNECTOR_ADMINS,
        Section.SITES,
        _refresh,
    ),
    Declaration(
        Forget,
        "Remove a document (by name, URL or id), or a site or Confluence with all its pages",
        ("forget report.pdf", "forget docs.example.com"),
        KEEPERS + "; Confluence: " + CONNECTOR_ADMINS,
        Section.DOCUMENTS,
        _forget,
    ),
)


def parse(message: str) -> Command:
    """The command `message` asks for, or a `Question`."""
    raw = " ".join(message.split())
    urls = tuple(match.group(1).rstrip(".,;:!?") for match in URL.finditer(raw))  # "see https://x.io."
    said = Said(raw, _normalise(raw), urls)
    for declaration in DECLARATIONS:
        if (command := declaration.match(said)) is not None:
            return command
    return Question(_strip_mentions(raw))


def is_command(message: str) -> bool:
    """Whether `message` asks Lore to do something rather than asks it a question."""
    return not isinstance(parse(message), Question)


def _strip_mentions(text: str) -> str:
    """Mentions removed and Slack's channel links (`<#C123|eng>`) spelled `#eng`."""
    return " ".join(_CHANNEL.sub(r"#\1", _MENTION.sub(" ", text)).split())


def _normalise(text: str) -> str:
    """Mentions, greetings, "please" and trailing punctuation removed; case kept."""
    text = _strip_mentions(text)
    text = _POLITE.sub("", text)
    return _TRAILING.sub("", text).strip()


def _reference(said: Said, captured: str) -> str:
    if said.urls:
        return said.urls[0]
    return captured.strip().strip("\"'“”‘’`").strip()
