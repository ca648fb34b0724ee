"""The phrasings of what Lore keeps and how it answers: documents, sites, indexes, a
conversation's settings, feedback, help."""

from __future__ import annotations

import re

from bot.chat.grammar.connectors import attach_drive_folder
from bot.chat.grammar.reading import INDEX, INDEX_WORD, MEMORY, Said, reference, regex
from bot.chat.intents import (
    AddFiles,
    AddUrls,
    Command,
    DocumentsOnly,
    Forget,
    LockSettings,
    Refresh,
    SetMode,
    SetStrategy,
    ShowFeedback,
    StopIndexing,
)

__all__ = [
    "CREATE",
    "DEFAULT",
    "DELETE",
    "DISABLE",
    "ENABLE",
    "HELP",
    "LIST_DOCS",
    "LIST_INDEXES",
    "STATUS",
    "add_files",
    "add_urls",
    "documents_only",
    "feedback",
    "forget",
    "lock",
    "mode",
    "refresh",
    "stop",
    "strategy",
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
    rf"^(?:add|save|store|put|index|ingest) (?:this|these|that|the|my|it|them)?\s*(?:doc|docs|document|documents|file|files|attachment|attachments|pdf|one)?\s*{MEMORY}?$|^(?:remember|memori[sz]e|learn) (?:this|these|that|it)(?: (?:doc|docs|document|documents|file|files))?$",
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
_SITE_WORDS = re.compile(r"\b(?:site|website|docs site|whole|all pages|crawl)\b", re.I)
_DOCUMENTS_ONLY = (
    re.compile(rf"^(?:make|set|keep|lock) {INDEX} (?:to )?(?:documents?|docs|rag)[ -]only$", re.I),
    re.compile(rf"^(?:answer|use) (?:only )?(?:from )?{INDEX_WORD} (?:documents|docs) only$", re.I),
)
_GENERAL_KNOWLEDGE = (
    re.compile(
        rf"^(?:let|allow) {INDEX} (?:to )?use (?:general|the model's|model) knowledge(?: again)?$", re.I
    ),
    re.compile(rf"^unlock {INDEX_WORD}$", re.I),
)
_LOCK = re.compile(
    r"^(?P<verb>lock|unlock) (?:the |this |our )?(?:channel(?:'s)? |conversation(?:'s)? )?settings(?: here| (?:of|for|in) this channel)?$",
    re.I,
)
HELP = regex(r"^(?:help|what can you do|how do (?:i|you) use (?:you|this|lore))$")
STATUS = regex(r"^(?:status|indexing status|(?:what(?:'s| is) )?the status|show (?:the )?jobs)$")
LIST_INDEXES = regex(
    r"^(?:list|show)(?: (?:me|all|the|your|my))* (?:indexes|indices|indexs|knowledge indexes|memories)$|^which indexes can i use$|^what do you know(?: about)?$|^what indexes (?:are there|do (?:you|i) have)$"
)
LIST_DOCS = regex(
    r"^(?:what(?:'s| is) in your memory|what do you remember|list (?:the |all |your )?(?:docs|documents|files)|show (?:me )?(?:the |all |your )?(?:docs|documents|files))$"
)
ENABLE = (
    regex(rf"^(?:enable|turn on|activate) {INDEX}$"),
    regex(rf"^(?:use|add|search|check) {INDEX_WORD}(?: (?:too|as well|here))?$"),
)
DISABLE = (
    regex(rf"^(?:disable|turn off|deactivate) {INDEX}$"),
    regex(rf"^(?:stop using|remove) {INDEX_WORD}$"),
)
DEFAULT = (
    regex(rf"^(?:make|set) {INDEX} (?:as )?(?:the |my |your )?default(?: index)?$"),
    regex(rf"^(?:set|change) (?:the )?default(?: index)? to {INDEX}$"),
)
CREATE = regex(
    rf"^(?:create|make|new)(?: an?| the)?(?: new)?(?: shared)? (?:index|knowledge index|memory)(?: (?:called|named))? {INDEX}$"
)
DELETE = regex(rf"^(?:delete|destroy|drop) {INDEX_WORD}$")


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
    rf" (?:feedback|unhelpful answers|unanswered questions)(?: (?:for|on|about|of) {INDEX})?$",
    re.I,
)


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
    return StopIndexing(reference(said, found.group("ref"))) if (found := _STOP.match(said.text)) else None


def refresh(said: Said) -> Command | None:
    return Refresh(reference(said, found.group("ref"))) if (found := _REFRESH.match(said.text)) else None


def forget(said: Said) -> Command | None:
    found = _FORGET.match(said.text)
    if found and (said.urls or _DOCUMENT_LIKE.search(said.text) or _FILE_NAME.match(found.group("ref"))):
        return Forget(reference(said, found.group("ref")))
    return None
