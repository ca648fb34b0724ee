"""The chat commands: a message to Lore is one of these commands or a question.

Each command is declared once (`Declaration`): its grammar (a matcher from
`bot.chat.grammar`), what it does, examples of how people say it, and who may use it.
`parse()` tries the declarations in order; `help`, the docs' command table and the
grammar tests are generated from them. Phrasings are natural, case-insensitive, tolerant
of punctuation, with or without "please" and "can you". `parse()` never fails: whatever is
not a command is a `Question`. The command values themselves are `bot.chat.intents`,
re-exported here.
"""

from __future__ import annotations

import difflib
import enum
from collections.abc import Callable
from dataclasses import dataclass

from bot.chat import grammar as g
from bot.chat.grammar import Said, question, read
from bot.chat.intents import (
    AddFiles,
    AddUrls,
    AttachDriveFolder,
    AttachNotion,
    AttachRepository,
    AttachSpace,
    Command,
    ConnectSource,
    CreateIndex,
    DeleteIndex,
    DisableIndex,
    DocumentsOnly,
    EnableIndex,
    ExplainAccess,
    Forget,
    ForgetChannelHistory,
    Help,
    HelpChannel,
    LearnChannel,
    ListDocs,
    ListDriveFolders,
    ListIndexes,
    ListMappings,
    ListNotion,
    ListRepositories,
    ListSpaces,
    ListVerified,
    LockSettings,
    MakeDefault,
    MapAccount,
    Question,
    Refresh,
    RefreshPermissions,
    RequireMentions,
    RestrictSource,
    SaveThread,
    SetExperts,
    SetMode,
    SetStrategy,
    ShowFeedback,
    Status,
    StopIndexing,
    Teach,
    UnmapAccount,
)

__all__ = [
    "DECLARATIONS",
    "AddFiles",
    "AddUrls",
    "AttachDriveFolder",
    "AttachNotion",
    "AttachRepository",
    "AttachSpace",
    "Command",
    "ConnectSource",
    "CreateIndex",
    "Declaration",
    "DeleteIndex",
    "DisableIndex",
    "DocumentsOnly",
    "EnableIndex",
    "ExplainAccess",
    "Forget",
    "ForgetChannelHistory",
    "Help",
    "HelpChannel",
    "LearnChannel",
    "ListDocs",
    "ListDriveFolders",
    "ListIndexes",
    "ListMappings",
    "ListNotion",
    "ListRepositories",
    "ListSpaces",
    "ListVerified",
    "LockSettings",
    "MakeDefault",
    "MapAccount",
    "Question",
    "Refresh",
    "RefreshPermissions",
    "RequireMentions",
    "RestrictSource",
    "Said",
    "SaveThread",
    "Section",
    "SetExperts",
    "SetMode",
    "SetStrategy",
    "ShowFeedback",
    "Status",
    "StopIndexing",
    "Teach",
    "UnmapAccount",
    "is_command",
    "parse",
]


class Section(enum.StrEnum):
    DOCUMENTS = "Documents"
    SITES = "Sites"
    INDEXES = "Indexes"
    HISTORY = "Slack threads and channels"
    HELP = "Help channels and verified answers"
    ANSWERS = "Answers"
    CONFLUENCE = "Confluence"
    GITHUB = "GitHub"
    GOOGLE_DRIVE = "Google Drive"
    NOTION = "Notion"
    LORE = "Lore"


@dataclass(frozen=True)
class Declaration:
    """One command: how it is recognised, what it does, how people say it, who may."""

    command: type
    summary: str
    examples: tuple[str, ...]
    who: str
    section: Section
    match: Callable[[Said], Command | None]


ANYONE = "anyone here"
SETTINGS = "in a DM, you; in a channel, its members (admins only once an admin locks the channel's settings)"
ADMINS = "in a DM, you; in a channel, workspace admins"
KEEPERS = "channel indexes: their channel's members; shared indexes: their creator, whoever added it, admins"
CONNECTOR_ADMINS = "workspace admins and LORE_CONNECTOR_ADMINS"
LEARNERS = "the channel's members, from the channel (never partners); only into the channel's own index"

MEMBERS = "the channel's members (never partners), in the channel"

DECLARATIONS: tuple[Declaration, ...] = (  # tried in this order
    Declaration(  # before AddUrls: a Notion link names a page to sync, not one to fetch
        AttachNotion,
        "Index what is shared with a connected Notion (every page and database, new ones included), or "
        "one page tree or database, into an index, with progress here",
        (
            "add our Notion to the handbook index",
            "add the notion page https://www.notion.so/acme/Runbooks-1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f to the ops index",
        ),
        CONNECTOR_ADMINS,
        Section.NOTION,
        g.attach_notion,
    ),
    Declaration(
        Teach,
        "Keep your answer to a question as this channel's verified answer: I answer with it first "
        "when someone asks that again (a reply in a thread can be marked with the message shortcut "
        "“Save as the answer”, or ✅ from the asker or an expert)",
        ("the answer to “how do I roll back?” is: switch the load balancer back",),
        MEMBERS,
        Section.HELP,
        g.teach,
    ),
    Declaration(
        AddUrls,
        "Add web pages, or crawl a whole site (with progress here) and keep it fresh",
        (
            "add https://docs.example.com/page to your memory",
            "add these docs to your memory: https://docs.example.com/api/",
        ),
        "where documents may be added (see who may see what)",
        Section.SITES,
        g.add_urls,
    ),
    Declaration(
        ConnectSource,
        "Connect Confluence, GitHub, Google Drive or Notion (credentials go into a private form)",
        ("connect confluence", "connect github", "connect google drive", "connect notion"),
        CONNECTOR_ADMINS,
        Section.CONFLUENCE,
        g.connect,
    ),
    Declaration(
        ListSpaces,
        "The spaces a connected Confluence offers",
        ("list confluence spaces",),
        CONNECTOR_ADMINS,
        Section.CONFLUENCE,
        g.fixed(g.SPACES, ListSpaces),
    ),
    Declaration(
        AttachSpace,
        "Index a Confluence space (or a page tree) into an index, with progress here",
        ("add the ENG space to the confluence index", "add the ENG space from page 12345 to the docs index"),
        CONNECTOR_ADMINS,
        Section.CONFLUENCE,
        g.attach_space,
    ),
    Declaration(
        ListRepositories,
        "The repositories a connected GitHub offers (and their owners, to index all of an owner's)",
        ("list github repositories",),
        CONNECTOR_ADMINS,
        Section.GITHUB,
        g.repositories,
    ),
    Declaration(
        AttachRepository,
        "Index a GitHub repository (docs, issues and pull requests, discussions), or every repository of an "
        "owner, into an index, with progress here",
        (
            "add the acme/payments repository to the eng index",
            "add all repositories of acme to the eng index",
        ),
        CONNECTOR_ADMINS,
        Section.GITHUB,
        g.attach_repository,
    ),
    Declaration(
        ListDriveFolders,
        "The folders and shared drives a connected Google Drive offers",
        ("list google drive folders",),
        CONNECTOR_ADMINS,
        Section.GOOGLE_DRIVE,
        g.drive_folders,
    ),
    Declaration(
        AttachDriveFolder,
        "Index a Google Drive folder (and everything under it: Docs, Sheets, Slides, PDFs and Office files), "
        "a shared drive, My Drive or the files shared with Lore's account, with progress here",
        (
            "add the Handbook folder to the handbook index",
            "add the folder https://drive.google.com/drive/folders/1AbC… to the handbook index",
        ),
        CONNECTOR_ADMINS,
        Section.GOOGLE_DRIVE,
        g.attach_drive_folder,
    ),
    Declaration(
        RefreshPermissions,
        "Sync now who may read what in the connected sources (page restrictions, space permissions) and who is in their groups",
        ("refresh permissions",),
        CONNECTOR_ADMINS,
        Section.CONFLUENCE,
        g.fixed(g.REFRESH_PERMISSIONS, RefreshPermissions),
    ),
    Declaration(
        ExplainAccess,
        "Whether someone may read a document and why (its source's permissions, their accounts and groups), never its text",
        ("explain access for U0123ABCD to Payroll 2026",),
        "workspace admins",
        Section.CONFLUENCE,
        g.explain_access,
    ),
    Declaration(
        MapAccount,
        "Say who someone is in a connected source that syncs permissions (a GitHub login, an Atlassian "
        "account id), for people it gives no confirmed email: they read in private what that account may",
        ("map @alice to github octocat", "map @alice to 5b10ac8d82e05b22cc7d4ef5 on confluence"),
        "workspace admins",
        Section.GITHUB,
        g.map_account,
    ),
    Declaration(
        UnmapAccount,
        "Take back someone's mapping to an account of a connected source",
        ("unmap @alice from github",),
        "workspace admins",
        Section.GITHUB,
        g.unmap_account,
    ),
    Declaration(
        ListMappings,
        "Who is mapped to which account of the connected sources",
        ("list account mappings",),
        "workspace admins",
        Section.GITHUB,
        g.fixed(g.MAPPINGS, ListMappings),
    ),
    Declaration(
        RestrictSource,
        "Let only a Slack channel's or user group's members read what a connector attachment brings "
        "(Notion says nobody's permissions), in private and in that channel; “unrestrict …” lifts it",
        (
            "restrict the notion attachment to #eng",
            "restrict notion in the handbook index to @eng-team",
            "unrestrict the notion attachment",
        ),
        CONNECTOR_ADMINS,
        Section.NOTION,
        g.restrict_source,
    ),
    Declaration(
        ListNotion,
        "The pages and databases shared with a connected Notion (what can be indexed alone)",
        ("list notion pages",),
        CONNECTOR_ADMINS,
        Section.NOTION,
        g.fixed(g.NOTION_PAGES, ListNotion),
    ),
    Declaration(
        SetMode,
        "How answers use documents and the model: rag only, llm only, hybrid, smart fallback, rag priority, llm priority",
        ("use rag only mode here", "switch to hybrid"),
        ADMINS,
        Section.ANSWERS,
        g.mode,
    ),
    Declaration(
        SetStrategy,
        "When to search: always, confidence, smart, function",
        ("use the strategy smart",),
        ADMINS,
        Section.ANSWERS,
        g.strategy,
    ),
    Declaration(
        RequireMentions,
        "Whether Lore answers follow-ups in threads it answered in without a mention (the default), or only when mentioned",
        ("require mentions here", "answer follow-ups without a mention"),
        ADMINS,
        Section.ANSWERS,
        g.require_mentions,
    ),
    Declaration(
        HelpChannel,
        "Make this a help channel: I answer questions posted here without a mention when I'm sure "
        "enough (the default, or the share you say), and stay quiet otherwise; or stop",
        ("answer questions here", "answer questions here when 80% sure", "stop answering questions here"),
        ADMINS,
        Section.HELP,
        g.help_channel,
    ),
    Declaration(
        SetExperts,
        "The people (or user groups) I ask when I can't answer here (“Ask an expert”), who can also "
        "verify my answers",
        ("experts here are @ana @ben", "no experts here"),
        ADMINS,
        Section.HELP,
        g.experts,
    ),
    Declaration(
        ListVerified,
        "The verified answers this channel keeps (experts edit them from my Home tab)",
        ("list verified answers",),
        ANYONE,
        Section.HELP,
        g.fixed(g.LIST_VERIFIED, ListVerified),
    ),
    Declaration(
        LockSettings,
        "Lock (or unlock) this channel's settings so only admins change them",
        ("lock this channel's settings", "unlock settings"),
        ADMINS,
        Section.ANSWERS,
        g.lock,
    ),
    Declaration(
        DocumentsOnly,
        "Answers that draw on an index use its documents alone (rag only, wherever it is enabled), or may use general knowledge again",
        ("make the handbook index documents only", "let the handbook index use general knowledge"),
        "its owner; a channel's index: an admin, from that channel; admins",
        Section.ANSWERS,
        g.documents_only,
    ),
    Declaration(
        ShowFeedback,
        "Answers people found unhelpful and questions I couldn't answer, with their comments",
        ("show feedback", "show feedback for the handbook index"),
        "an index's keepers: its channel's members, a shared index's creator, your own "
        "personal index; workspace admins",
        Section.ANSWERS,
        g.feedback,
    ),
    Declaration(
        SaveThread,
        "Save this thread (every message, who said it and when, its link) to this conversation's default index, with its files; saving again updates it (“remember this” in a thread does too)",
        ("remember this thread", "save this thread"),
        "where documents may be added (see who may see what)",
        Section.HISTORY,
        g.fixed(g.SAVE_THREAD, SaveThread),
    ),
    Declaration(
        LearnChannel,
        "Read this channel's history into its own index (with progress here) and keep it up to date as people write, edit and delete, "
        "keeping the newest `LORE_LEARN_MAX_MESSAGES` messages",
        ("learn this channel",),
        LEARNERS,
        Section.HISTORY,
        g.fixed(g.LEARN_CHANNEL, LearnChannel),
    ),
    Declaration(
        ForgetChannelHistory,
        "Stop learning this channel and remove its history from its index",
        ("forget this channel's history",),
        "the channel's members, from the channel (never partners)",
        Section.HISTORY,
        g.fixed(g.FORGET_HISTORY, ForgetChannelHistory),
    ),
    Declaration(
        AddFiles,
        "Add the files on this message (or on the thread's parent) to this conversation's default index; in a DM, just drop files",
        ("add this doc to your memory", "remember this"),
        "where documents may be added (see who may see what)",
        Section.DOCUMENTS,
        g.add_files,
    ),
    Declaration(Help, "What Lore can do", ("help",), ANYONE, Section.LORE, g.fixed(g.HELP, Help)),
    Declaration(
        Status,
        "Indexing jobs and attached sources here",
        ("status",),
        ANYONE,
        Section.SITES,
        g.fixed(g.STATUS, Status),
    ),
    Declaration(
        ListIndexes,
        "The indexes you may use here: enabled, default, sizes",
        ("list indexes", "which indexes can I use"),
        ANYONE,
        Section.INDEXES,
        g.fixed(g.LIST_INDEXES, ListIndexes),
    ),
    Declaration(
        ListDocs,
        "The default index's documents",
        ("what's in your memory",),
        ANYONE,
        Section.DOCUMENTS,
        g.fixed(g.LIST_DOCS, ListDocs),
    ),
    Declaration(
        EnableIndex,
        "Search another index here too",
        ("enable the handbook index", "use the handbook index too"),
        SETTINGS,
        Section.INDEXES,
        g.named(g.ENABLE, EnableIndex),
    ),
    Declaration(
        DisableIndex,
        "Stop searching an index here",
        ("disable the handbook index",),
        SETTINGS,
        Section.INDEXES,
        g.named(g.DISABLE, DisableIndex),
    ),
    Declaration(
        MakeDefault,
        "Where new documents go in this conversation",
        ("make handbook the default",),
        SETTINGS,
        Section.INDEXES,
        g.named(g.DEFAULT, MakeDefault),
    ),
    Declaration(
        CreateIndex,
        "A new shared index, enabled here",
        ("create an index called handbook",),
        "anyone in the workspace (not partners)",
        Section.INDEXES,
        g.named((g.CREATE,), CreateIndex),
    ),
    Declaration(
        DeleteIndex,
        "Delete an index and everything in it (asks to confirm)",
        ("delete the handbook index",),
        "shared: its creator or an admin; a channel's: an admin, from that channel",
        Section.INDEXES,
        g.named((g.DELETE,), DeleteIndex),
    ),
    Declaration(
        StopIndexing,
        "Stop a running crawl or sync",
        ("stop indexing docs.example.com",),
        KEEPERS + "; Confluence, GitHub, Notion: " + CONNECTOR_ADMINS,
        Section.SITES,
        g.stop,
    ),
    Declaration(
        Refresh,
        "Crawl a site (or sync Confluence, GitHub or Notion) again now, or change how often: hourly, daily, weekly, every 6 hours, never",
        ("refresh docs.example.com", "refresh docs.example.com weekly", "refresh acme/payments"),
        KEEPERS + "; Confluence, GitHub, Notion: " + CONNECTOR_ADMINS,
        Section.SITES,
        g.refresh,
    ),
    Declaration(
        Forget,
        "Remove a document (by name, URL, id or part of its name; words that name several remove "
        "none and list them), or a site, a Confluence space, a GitHub repository or a Notion page with all it brought",
        ("forget report.pdf", "forget docs.example.com"),
        KEEPERS + "; Confluence, GitHub, Notion: " + CONNECTOR_ADMINS,
        Section.DOCUMENTS,
        g.forget,
    ),
)


def parse(message: str) -> Command:
    """The command `message` asks for, or a `Question`."""
    said = read(message)
    for declaration in DECLARATIONS:
        if (command := declaration.match(said)) is not None:
            return command
    return question(said)


def near_misses(message: str, limit: int = 3) -> list[str] | None:
    """For a line that starts like a command (a command's first word, not a question) yet
    is none: the examples of the commands it is closest to. None for anything else (a
    question, or a command)."""
    said = " ".join(message.split())
    words = said.lower().split()
    if not words or said.endswith("?"):
        return None
    if words[0] not in _COMMAND_WORDS and not difflib.get_close_matches(words[0], _COMMAND_WORDS, 1, 0.75):
        return None
    if not isinstance(parse(said), Question):
        return None
    examples = [e for d in DECLARATIONS for e in d.examples]
    ranked = sorted(examples, key=lambda e: -_likeness(said.lower(), e.lower()))
    return ranked[:limit]


def _likeness(said: str, example: str) -> float:
    """How alike two lines are: their first words first, then their words, then their letters."""
    first = difflib.SequenceMatcher(None, said.split()[0], example.split()[0]).ratio()
    shared = len(set(said.split()) & set(example.split())) / max(len(set(example.split())), 1)
    return 2 * first + shared + difflib.SequenceMatcher(None, said, example).ratio()


_COMMAND_WORDS = frozenset(e.split()[0].lower() for d in DECLARATIONS for e in d.examples) - {
    "what's",
    "which",
}


def is_command(message: str) -> bool:
    """Whether `message` asks Lore to do something rather than asks it a question."""
    return not isinstance(parse(message), Question)
