"""Reading a message: mentions, greetings, "please" and punctuation set aside, links found,
and the phrasings that name each command (a matcher per command, used by the declarations in
`bot.chat.commands`)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from bot.chat.intents import (
    AddFiles,
    AddUrls,
    AttachDriveFolder,
    AttachNotion,
    AttachRepository,
    AttachSpace,
    Command,
    ConnectSource,
    DocumentsOnly,
    ExplainAccess,
    Forget,
    HelpChannel,
    ListDriveFolders,
    ListRepositories,
    LockSettings,
    Question,
    Refresh,
    RequireMentions,
    SetExperts,
    SetMode,
    SetStrategy,
    ShowFeedback,
    StopIndexing,
    Teach,
)
from knowledge import CONNECTORS

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
_KIND_NAMES = {
    **{alias: kind.kind for kind in CONNECTORS.values() for alias in kind.aliases},
    **{kind: kind for kind in CONNECTORS},
}
"""What people call each connector (“google drive”, “gdrive”), longest first in the grammar."""
_CONNECT = re.compile(
    r"^(?:connect|link|set up|setup|hook up|integrate)(?: (?:to|with|up|our|the|a|my))* "
    rf"(?P<kind>{'|'.join(map(re.escape, sorted(_KIND_NAMES, key=len, reverse=True)))})"
    r"(?: (?:cloud|data center|site|wiki|instance|account))?(?: (?:to lore|here))?$",
    re.I,
)
SPACES = re.compile(
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
REPOSITORIES = re.compile(
    r"^(?:(?:list|show)(?: me)?(?: the| all| available| my| our)* (?:github )?(?:repositories|repos)(?: (?:in|on) github)?"
    r"|which (?:github )?(?:repositories|repos) (?:are there|can (?:i|you|we) (?:add|use|index)))$",
    re.I,
)
_OWNER_REPO = r"[A-Za-z0-9][A-Za-z0-9-]{0,38}/[A-Za-z0-9._-]{1,100}"
_OWNER = r"[A-Za-z0-9][A-Za-z0-9-]{0,38}"
_ATTACH_REPOSITORY = re.compile(
    r"^(?:add|sync|index|import|attach|pull in) (?:the )?(?:github )?"
    rf"(?:(?P<repo>{_OWNER_REPO}) (?:github )?(?:repository|repo)|(?:github )?(?:repository|repo) (?P<repo2>{_OWNER_REPO})"
    rf"|(?:all|every)(?: of)?(?: the)? (?:github )?(?:repositories|repos) of (?P<owner>{_OWNER})"
    rf"|(?P<owner2>{_OWNER})['’]s (?:github )?(?:repositories|repos))"
    r" (?:to|into|in) (?:the )?[\"'“‘`]?(?P<index>[#\w][\w .#/-]*?)[\"'”’`]?(?: (?:knowledge )?index)?$",
    re.I,
)
DRIVE_FOLDERS = re.compile(
    r"^(?:(?:list|show)(?: me)?(?: the| all| available| my| our)* (?:google )?(?:drive |gdrive )?"
    r"(?:folders|shared drives)(?: (?:in|on|from) (?:google )?drive)?"
    r"|which (?:google )?(?:drive )?folders (?:are there|can (?:i|you|we) (?:add|use|index)))$",
    re.I,
)
_INTO = r" (?:to|into|in) (?:the )?[\"'“‘`]?(?P<index>[#\w][\w .#/-]*?)[\"'”’`]?(?: (?:knowledge )?index)?$"
_ATTACH_DRIVE_FOLDER = re.compile(
    r"^(?:add|sync|index|import|attach|pull in) "
    r"(?:(?P<mine>my drive|(?:the )?files shared with me|(?:everything )?shared with me)"
    r"|(?:the )?(?:google )?(?:drive )?(?:folder|shared drive) (?P<link><?https://drive\.google\.com/\S+?>?|[\"“‘'`][^\"”’'`]+[\"”’'`]|[\w-]{10,})"
    r"|(?:the )?[\"“‘'`]?(?P<name>[^\"”’'`]+?)[\"”’'`]? (?:google )?(?:drive )?(?:folder|shared drive)(?: (?:from|in|on) (?:google )?drive)?)"
    + _INTO,
    re.I,
)
NOTION_PAGES = re.compile(
    r"^(?:(?:list|show)(?: me)?(?: the| all| available| my| our| shared)* notion (?:pages|databases)(?: and (?:pages|databases))?"
    r"|which notion pages(?: and databases)? (?:are there|can (?:i|you|we) (?:add|use|index)))$",
    re.I,
)
_ATTACH_NOTION = re.compile(
    r"^(?:add|sync|index|import|attach|pull in) "
    r"(?:(?:(?:all|everything)(?: of)?(?: in)? )?(?:our |the |my )?(?:whole )?notion(?: workspace)?"
    r"|(?:the |our )?(?:notion (?P<kind>page|database|db) <?(?P<ref>[^\s<>]+?)>?"
    r"|<?(?P<ref2>[^\s<>]+?)>? notion (?P<kind2>page|database|db)))" + _INTO,
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


SAVE_THREAD = _regex(
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
LEARN_CHANNEL = _regex(
    r"^(?:learn|read|index|remember|ingest)(?: from)? (?:this|the) channel(?:['’]s)?(?: (?:history|messages|conversations?))?$"
    r"|^(?:learn|read|index) (?:the )?(?:history|messages) of this channel$"
)
FORGET_HISTORY = _regex(
    r"^(?:forget|remove|delete|unlearn) (?:this|the) channel(?:['’]s)?(?: (?:history|messages))?$"
    r"|^(?:forget|remove|delete) (?:the )?(?:history|messages) of this channel$"
    r"|^stop learning (?:this|the) channel$"
)


_HERE = r"(?: here| in this channel)"
_HELP_ON = _regex(
    rf"^(?:answer|reply to|respond to) (?:the )?questions{_HERE}(?: without (?:a |being )?mention(?:s|ed)?)?"
    r"(?: (?:when|if) (?:you(?:['’]re| are) )?(?:at least )?(?P<pct>\d{1,3}) ?% (?:sure|confident))?$"
    r"|^make this (?:channel )?a help channel$|^(?:this|make this) (?:is )?a help channel$"
)
_HELP_OFF = _regex(
    rf"^(?:stop|don['’]?t|do not|no longer) (?:answering|answer) (?:the )?questions{_HERE}(?: unless mentioned)?$"
    r"|^this is(?: not|n['’]t) a help channel$|^make this channel not a help channel$"
)
_EXPERTS = _regex(
    r"^(?:the )?experts?(?: here| in this channel| for this channel)? (?:are|is)\b(?P<rest>.*)$"
)
_NO_EXPERTS = _regex(
    r"^(?:no experts?(?: here)?|remove (?:the|all) experts?(?: here)?|clear (?:the )?experts?)$"
)
_EXPERT_ID = re.compile(
    r"<@([UW][A-Z0-9]+)(?:\|[^>]*)?>|<!subteam\^([A-Z0-9]+)(?:\|[^>]*)?>|(?<![<\w])@([\w.-]+)"
)
_TEACH = (
    re.compile(
        r"^(?:the )?(?:right |correct )?answer to [\"“'‘](?P<q>[^\"”'’]+)[\"”'’]\s+is[:,]?\s+(?P<a>\S.*)$",
        re.I | re.S,
    ),
    re.compile(r"^(?:the )?(?:right |correct )?answer to (?P<q>.+?) is[:,]\s+(?P<a>\S.*)$", re.I | re.S),
    re.compile(r"^(?:the )?(?:right |correct )?answer to (?P<q>.+?\?) is\s+(?P<a>\S.*)$", re.I | re.S),
)
"""A question in quotes; else one ending with "is:" or with its question mark."""
LIST_VERIFIED = _regex(
    r"^(?:list|show)(?: me)?(?: the| all)? verified answers(?: here)?$|^what are the verified answers(?: here)?$"
)


def help_channel(said: Said) -> Command | None:
    if found := _HELP_ON.match(said.text):
        pct = found.group("pct")
        return HelpChannel(True, min(100, int(pct)) / 100 if pct else None)
    return HelpChannel(False) if _HELP_OFF.match(said.text) else None


def experts(said: Said) -> Command | None:
    """“experts here are @a @b”: people and user groups as Slack writes them (`<@U…>`,
    `<!subteam^S…>`), or plain `@names` (the shell's people)."""
    if _NO_EXPERTS.match(said.text):
        return SetExperts(())
    if not _EXPERTS.match(_strip_mentions_keep(said.raw)):
        return None
    found = tuple(dict.fromkeys(next(g for g in m.groups() if g) for m in _EXPERT_ID.finditer(said.raw)))
    found = tuple(f for f in found if f.lower() != "lore")
    return SetExperts(found) if found else None


def teach(said: Said) -> Command | None:
    text = _POLITE.sub("", _strip_mentions(said.raw))
    for pattern in _TEACH:
        if found := pattern.match(text):
            return Teach(found.group("q").strip().rstrip("?").strip() + "?", found.group("a").strip())
    return None


def _strip_mentions_keep(raw: str) -> str:
    """The message with a leading mention of Lore and greetings removed, other mentions kept
    (they are what “experts here are …” names)."""
    text = re.sub(r"^\s*(?:<@[A-Z0-9]+(?:\|[^>]*)?>|@lore\b)[,:]?\s*", "", raw, flags=re.I)
    return _POLITE.sub("", text).strip()


_ASKS = re.compile(
    r"\?\s*(?:[:;][\w-]+:\s*)*$"
    r"|^(?:how|what|what['’]s|whats|why|when|where|which|who|whom|whose|can|could|would|will|should|is|are|"
    r"do|does|did|has|have|may|might|any(?:one|body)|is there|are there)\b"
    r"|\b(?:does anyone know|anyone know|how (?:do|can|should) (?:i|we|you)|how to|i need to know|"
    r"wondering (?:how|what|why|whether|if)|any idea)\b",
    re.I,
)
ASKING_WORDS = 3
"""Fewer words do not ask the documents anything ("why?", "any news?")."""


def asks_something(message: str) -> bool:
    """Whether a message posted to nobody asks something (a question mark, or it opens as a
    question does), in a few words at least: Lore answers those alone in a help channel."""
    text = _strip_mentions(message)
    return len(text.split()) >= ASKING_WORDS and bool(_ASKS.search(text))


def require_mentions(said: Said) -> Command | None:
    if _REQUIRE_MENTIONS.match(said.text):
        return RequireMentions(True)
    return RequireMentions(False) if _NO_MENTIONS.match(said.text) else None


HELP = _regex(r"^(?:help|what can you do|how do (?:i|you) use (?:you|this|lore))$")
STATUS = _regex(r"^(?:status|indexing status|(?:what(?:'s| is) )?the status|show (?:the )?jobs)$")
LIST_INDEXES = _regex(
    r"^(?:list|show)(?: (?:me|all|the|your|my))* (?:indexes|indices|indexs|knowledge indexes|memories)$|^which indexes can i use$|^what do you know(?: about)?$|^what indexes (?:are there|do (?:you|i) have)$"
)
LIST_DOCS = _regex(
    r"^(?:what(?:'s| is) in your memory|what do you remember|list (?:the |all |your )?(?:docs|documents|files)|show (?:me )?(?:the |all |your )?(?:docs|documents|files))$"
)
ENABLE = (
    _regex(rf"^(?:enable|turn on|activate) {_INDEX}$"),
    _regex(rf"^(?:use|add|search|check) {_INDEX_WORD}(?: (?:too|as well|here))?$"),
)
DISABLE = (
    _regex(rf"^(?:disable|turn off|deactivate) {_INDEX}$"),
    _regex(rf"^(?:stop using|remove) {_INDEX_WORD}$"),
)
DEFAULT = (
    _regex(rf"^(?:make|set) {_INDEX} (?:as )?(?:the |my |your )?default(?: index)?$"),
    _regex(rf"^(?:set|change) (?:the )?default(?: index)? to {_INDEX}$"),
)
CREATE = _regex(
    rf"^(?:create|make|new)(?: an?| the)?(?: new)?(?: shared)? (?:index|knowledge index|memory)(?: (?:called|named))? {_INDEX}$"
)
DELETE = _regex(rf"^(?:delete|destroy|drop) {_INDEX_WORD}$")


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


def add_urls(said: Said) -> Command | None:
    if attach_drive_folder(said) is not None:
        return None  # a Drive folder's link is attached through the connector, not fetched as a page
    if said.urls and re.match(r"^(?:add|save|store|index|ingest|remember|crawl|learn)\b", said.text, re.I):
        whole = bool(_SITE_WORDS.search(said.text)) or "these docs" in said.text.lower()
        return AddUrls(said.urls, whole_site=whole)
    return None


_DOCUMENT_WORDS = re.compile(r"\b(?:docs?|documents?|files?|attachments?|pdf)\b", re.I)


def add_files(said: Said) -> Command | None:
    if not _ADD_FILES.match(said.text):
        return None
    return AddFiles(thread_too=not _DOCUMENT_WORDS.search(said.text))


def connect(said: Said) -> Command | None:
    found = _CONNECT.match(said.text)
    return ConnectSource(_KIND_NAMES[" ".join(found.group("kind").lower().split())]) if found else None


def attach_space(said: Said) -> Command | None:
    if not (found := _ATTACH_SPACE.match(said.text)):
        return None
    space = found.group("space") or found.group("space2")
    return AttachSpace(
        space.upper() if not space.startswith("~") else space,
        found.group("index").strip(),
        found.group("page"),
    )


def attach_drive_folder(said: Said) -> Command | None:
    if not (found := _ATTACH_DRIVE_FOLDER.match(said.text)):
        return None
    folder = found.group("mine") or found.group("name") or found.group("link").strip("<>\"“”‘’'`")
    links = [u for u in said.urls if "drive.google.com" in u]
    if links and "drive.google.com" in folder:
        folder = links[0]  # as Slack sent it (`<url|label>`), read by the grammar's URL rule
    index = found.group("index").strip()
    if index.lower() in ("memory", "your memory", "my memory"):
        return None  # “add the notes folder to memory”: files, not a Drive folder
    return AttachDriveFolder(folder.strip(), index)


def drive_folders(said: Said) -> Command | None:
    return ListDriveFolders() if DRIVE_FOLDERS.match(said.text) else None


def attach_repository(said: Said) -> Command | None:
    if not (found := _ATTACH_REPOSITORY.match(said.text)):
        return None
    folder = found.group("repo") or found.group("repo2") or found.group("owner") or found.group("owner2")
    return AttachRepository(folder, found.group("index").strip())


def attach_notion(said: Said) -> Command | None:
    """Everything shared with the integration, or one page tree or database by its link or id
    (Slack's `<link|label>` read as the link)."""
    if not (found := _ATTACH_NOTION.match(said.text)):
        return None
    reference = (found.group("ref") or found.group("ref2") or "").partition("|")[0]
    return AttachNotion(reference or "workspace", found.group("index").strip())


def repositories(said: Said) -> Command | None:
    return ListRepositories() if REPOSITORIES.match(said.text) else None


def mode(said: Said) -> Command | None:
    return (
        SetMode(re.sub(r"[ _-]+", "_", found.group("mode")).upper())
        if (found := _MODE.match(said.text))
        else None
    )


def strategy(said: Said) -> Command | None:
    if not (found := _STRATEGY.match(said.text)):
        return None
    return SetStrategy((found.group("s") or found.group("s2")).lower())


_FEEDBACK = re.compile(
    rf"^(?:show|list|see|review|what(?:'s| is)(?: the)?)(?: me)?(?: the| all| any)?"
    rf" (?:feedback|unhelpful answers|unanswered questions)(?: (?:for|on|about|of) {_INDEX})?$",
    re.I,
)


REFRESH_PERMISSIONS = re.compile(
    r"^(?:refresh|re-?sync|sync|update|re-?check)(?: the)? (?:permissions|access|restrictions)"
    r"(?: (?:now|of (?:the )?(?:connected )?sources|from (?:confluence|the sources)))?$",
    re.I,
)
_SOMEONE = r"(?:<@(?P<{0}>[UW][A-Z0-9]+)(?:\|[^>]*)?>|@?(?P<{0}_id>[UW][A-Z0-9]{{6,}}))"
"""A person: a Slack mention (`<@U…>`), or their user id as it is."""
_EXPLAIN_ACCESS = re.compile(
    r"^(?:<@[A-Z0-9]+(?:\|[^>]*)?>[\s,:]*)?(?i:please\s+)?"
    rf"(?:(?i:explain (?:the )?access (?:for|of)) {_SOMEONE.format('user')} (?i:to|on|for) "
    rf"|(?i:why can(?:'|’)?t) {_SOMEONE.format('other')} (?i:read|see) )"
    r"(?P<document>.+?)[\s?.!]*$",
)


def explain_access(said: Said) -> Command | None:
    """Read from the raw message: the user it names is a mention, which reading drops."""
    if not (found := _EXPLAIN_ACCESS.match(said.raw.strip())):
        return None
    document = found.group("document").strip().strip("\"'“”‘’`").strip()
    user = next(found.group(g) for g in ("user", "user_id", "other", "other_id") if found.group(g))
    return ExplainAccess(user, said.urls[0] if said.urls else document) if document else None


def feedback(said: Said) -> Command | None:
    if not (found := _FEEDBACK.match(said.text)):
        return None
    return ShowFeedback(found.group("name").strip() if found.group("name") else None)


def lock(said: Said) -> Command | None:
    return LockSettings(found.group("verb").lower() == "lock") if (found := _LOCK.match(said.text)) else None


def documents_only(said: Said) -> Command | None:
    for pattern in _DOCUMENTS_ONLY:
        if found := pattern.match(said.text):
            return DocumentsOnly(found.group("name").strip(), True)
    for pattern in _GENERAL_KNOWLEDGE:
        if found := pattern.match(said.text):
            return DocumentsOnly(found.group("name").strip(), False)
    return None


def stop(said: Said) -> Command | None:
    return StopIndexing(_reference(said, found.group("ref"))) if (found := _STOP.match(said.text)) else None


def refresh(said: Said) -> Command | None:
    return Refresh(_reference(said, found.group("ref"))) if (found := _REFRESH.match(said.text)) else None


def forget(said: Said) -> Command | None:
    found = _FORGET.match(said.text)
    if found and (said.urls or _DOCUMENT_LIKE.search(said.text) or _FILE_NAME.match(found.group("ref"))):
        return Forget(_reference(said, found.group("ref")))
    return None


def read(message: str) -> Said:
    """The message as the grammar reads it."""
    raw = " ".join(message.split())
    urls = tuple(match.group(1).rstrip(".,;:!?") for match in URL.finditer(raw))  # "see https://x.io."
    return Said(raw, _normalise(raw), urls)


def question(said: Said) -> Question:
    """The message as a question: its words, without the mentions."""
    return Question(_strip_mentions(said.raw))


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
