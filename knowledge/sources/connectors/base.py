"""What every connector offers, and the values it hands out.

A connector reads one remote system (Confluence today) for the sync in
`knowledge.sources.connectors.sync`: the folders a user may choose from (spaces), the items changed
since a time (or all of them: the complete listing that prunes), the items themselves with
their text and facts, and their attachments.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from knowledge.errors import KnowledgeError

if TYPE_CHECKING:
    from knowledge.sources.connectors.credentials import Credentials
    from knowledge.sources.connectors.permissions import SourceAccess
    from knowledge.sources.fetch import FetchSession

_FOLDER = re.compile(r"^(?P<space>~?[A-Za-z0-9_.-]{1,255})(?:/(?P<page>\d{1,20}))?$")


class ConnectorError(KnowledgeError):
    """A connector could not do what was asked; the message says why and what to do."""


class BadCredentials(ConnectorError):
    """The remote system refused the credentials (401)."""


class NoAccess(ConnectorError):
    """The credentials are valid but may not read what was asked (403)."""


class ConnectorUnavailable(ConnectorError):
    """The remote system could not be reached, kept failing, or kept rate-limiting."""


class NotConfigured(ConnectorError):
    """Lore cannot store credentials (no LORE_SECRET_KEY) or read the stored ones."""


class NotConnected(ConnectorError):
    """No connection matches what the user named."""


class UnknownFolder(ConnectorError):
    """A space key or page the user named does not exist (or is not visible to the account)."""


@dataclass(frozen=True)
class FolderSpec:
    """A folder of an attachment as stored: a space (`ENG`) or a page tree in it (`ENG/12345`)."""

    space: str
    page_id: str | None = None

    @classmethod
    def parse(cls, text: str) -> FolderSpec:
        """Raises ValueError for anything that is not a space key, optionally `/page id`."""
        match = _FOLDER.match(text.strip())
        if match is None:
            raise ValueError(f"“{text}” is not a space key (or SPACE/page id)")
        return cls(match["space"], match["page"])

    def __str__(self) -> str:
        return f"{self.space}/{self.page_id}" if self.page_id else self.space


@dataclass(frozen=True)
class Folder:
    """A folder a user may attach: a Confluence space."""

    key: str
    name: str
    kind: str = "space"
    url: str | None = None


@dataclass(frozen=True)
class ItemRef:
    """An item as a listing shows it: enough to tell whether it changed, no body."""

    id: str
    title: str
    version: int
    modified: datetime | None = None


@dataclass(frozen=True)
class Item:
    """An item with its text (Markdown-flavoured) and the facts its document carries."""

    id: str
    title: str
    url: str
    version: int
    text: str
    folder: str
    folder_name: str = ""
    author: str | None = None
    modified_by: str | None = None
    modified: datetime | None = None
    labels: tuple[str, ...] = ()
    path: tuple[str, ...] = ()
    """Titles of its ancestors, root first: where it sits, used as its heading path."""
    access: SourceAccess | None = None
    """Who may read it, from a connector that syncs permissions (None: one that does not,
    whose documents the index alone governs)."""


@dataclass(frozen=True)
class AttachmentRef:
    id: str
    title: str
    media_type: str | None
    version: int
    download_url: str
    url: str
    size: int | None = None


@dataclass(frozen=True)
class ApiOptions:
    """How a connector's client behaves: retries of rate-limited calls, the longest wait,
    how to sleep (tests pass a fake), and who hears of waits."""

    retries: int
    max_wait: float
    sleep: Callable[[float], Awaitable[object]]
    note: Callable[[str], Awaitable[None]] | None = None


@dataclass(frozen=True)
class ConnectorKind:
    """One kind of connector, as the registry (`knowledge.sources.connectors.registry`) lists
    it: its name in commands and rows, how people call it, how many items to fetch at once,
    and how to open a client over an address-checked HTTP session."""

    kind: str
    label: str
    fetch_batch: int
    open: Callable[[FetchSession, str, Credentials, ApiOptions], Connector]
    syncs_permissions: bool = False
    """Its clients are `AccessReader`s too (`knowledge.sources.connectors.permissions`): who
    may read each item is synced (permission sync), and who is in each group (group sync)."""


class Connector(Protocol):
    async def account(self) -> str:
        """Check the credentials: the account's display name. Raises `BadCredentials`,
        `NoAccess` or `ConnectorUnavailable`."""

    async def folders(self) -> list[Folder]:
        """Every folder the account can read, by key."""

    def changed_since(self, folders: Sequence[FolderSpec], since: datetime | None) -> AsyncIterator[ItemRef]:
        """Items under `folders` modified at or after `since` (UTC), followed to the last page
        of results; with `since` None, every item: the complete listing."""

    async def fetch(self, ids: Sequence[str]) -> list[Item]:
        """The items with these ids, with their text (missing ones are left out)."""

    async def attachments(self, item_id: str) -> list[AttachmentRef]:
        """The item's attachments, every page of them."""

    async def download(self, attachment: AttachmentRef, max_bytes: int) -> bytes:
        """The attachment's bytes (`ConnectorError` when over `max_bytes`)."""
