"""The phrasings of connectors: connect Confluence, GitHub, Google Drive or Notion, list
what they offer, attach a space, repository, folder or page to an index."""

from __future__ import annotations

import re

from bot.chat.grammar.reading import Said
from bot.chat.intents import (
    AttachDriveFolder,
    AttachNotion,
    AttachRepository,
    AttachSpace,
    Command,
    ConnectSource,
    ListDriveFolders,
    ListRepositories,
)
from knowledge import CONNECTORS

__all__ = [
    "DRIVE_FOLDERS",
    "NOTION_PAGES",
    "REPOSITORIES",
    "SPACES",
    "attach_drive_folder",
    "attach_notion",
    "attach_repository",
    "attach_space",
    "connect",
    "drive_folders",
    "repositories",
]


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
