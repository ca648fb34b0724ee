"""What every connector offers, and the values it hands out.

A connector reads one remote system (Confluence, GitHub) for the sync in
`knowledge.sources.connectors.sync`: the folders a user may choose from (a Confluence space,
a GitHub repository or a whole owner), the items in them with a version that tells changed
from unchanged (a listing carries no bodies), the items themselves with their text and
facts, and their attachments. A listing also says which parts it covered completely
(`Complete`): what was indexed there before and is no longer listed is gone.

Each kind of connector is one module that declares a `ConnectorKind` (its name, its label,
how its folders are written, how to open a client) and one line in `registry.py`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Protocol

from knowledge.errors import KnowledgeError

if TYPE_CHECKING:
    from knowledge.sources.connectors.credentials import Credentials
    from knowledge.sources.connectors.permissions import SourceAccess
    from knowledge.sources.fetch import FetchSession

Version = int | str
"""What tells an item's versions apart: Confluence's version number, a git blob's SHA, an
issue's last update."""
Facts = Mapping[str, str | int | bool]


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
    """A folder the user named does not exist (or is not visible to the account)."""


@dataclass(frozen=True)
class FolderSpec:
    """A folder of an attachment as stored: what the connector offers as a folder (`key`: a
    space key `ENG`, a repository `acme/payments`, an owner `acme`) and, optionally, a part
    of it (`within`: a page tree, `ENG/12345`). Each kind parses its own spelling
    (`ConnectorKind.parse_folder`)."""

    key: str
    within: str | None = None

    def __str__(self) -> str:
        return f"{self.key}/{self.within}" if self.within else self.key


@dataclass(frozen=True)
class Folder:
    """A folder a user may attach: a Confluence space, a GitHub repository or owner."""

    key: str
    name: str
    kind: str = "space"
    url: str | None = None


@dataclass(frozen=True)
class ItemRef:
    """An item as a listing shows it: enough to tell whether it changed, no body."""

    id: str
    title: str
    version: Version
    modified: datetime | None = None
    access: SourceAccess | None = None
    """Who may read it now, when the listing says (Google Drive's change feed: a file shared
    anew is listed as changed though its content is not); an unchanged item's documents take it."""


@dataclass(frozen=True)
class Complete:
    """In a listing: every item whose id starts with `prefix` has been listed, so the ones
    indexed before and not listed now are gone (deleted, renamed, moved out). `""`: all."""

    prefix: str = ""


@dataclass(frozen=True)
class Gone:
    """In a listing of changes: an item the source says is gone (deleted, trashed, moved out
    of what is attached, or no longer shared with the account); removed if it was indexed."""

    id: str


@dataclass(frozen=True)
class Skipped:
    """An item that could not be fetched this time (`reason` says why); it stays as indexed
    and is tried again at the next sync."""

    id: str
    title: str
    reason: str


@dataclass(frozen=True)
class Item:
    """An item with its text and the facts its document carries."""

    id: str
    title: str
    url: str
    version: Version
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
    key: str = ""
    """Its document's identity in the index (what replaces it when it changes); the URL by
    default. Must survive what the item's URL does not (a Confluence page's rename)."""
    mime_type: str = "text/markdown"
    """The type of `text`: Markdown, or what a file's name says (reST, AsciiDoc, plain text)."""
    facts: Facts = field(default_factory=dict)
    """What the connector knows besides (a space, a repository and its visibility, an issue's
    state), kept in the document's metadata for filters and for permission syncs."""
    anchors: Mapping[str, str] = field(default_factory=dict)
    """Links to parts of the item by their heading (an issue's comments): a passage under
    such a heading is cited with that link."""
    data: bytes | None = None
    """A stored file's bytes (a PDF, a Word file, a deck), read by Lore's extractors as
    `mime_type` says; `text` is then empty."""


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
    requests_per_second: float = 0.0
    """The average rate the client keeps to (0: as fast as answers come; a 429 is honoured
    either way)."""


Listed = ItemRef | Complete | Gone
State = MutableMapping[str, Any]
"""What a connector keeps between syncs of one attachment (validators of listings, cursors);
saved only when a sync succeeds."""


@dataclass(frozen=True)
class ConnectorKind:
    """One kind of connector, as the registry (`knowledge.sources.connectors.registry`) lists
    it: its name in commands and rows, how people call it and its folders, how folders are
    written, where its API is by default, and how to open a client over an address-checked
    HTTP session."""

    kind: str
    label: str
    fetch_batch: int
    open: Callable[[FetchSession, str, Credentials, ApiOptions], Connector]
    parse_folder: Callable[[str], FolderSpec]
    """A folder as a user or a stored attachment writes it; ValueError when it is not one."""
    folder_noun: str = "space"
    folders_noun: str = "spaces"
    default_url: str | None = None
    """The API root when the user names none (GitHub's); None: the user must say."""
    api_root: Callable[[str], str] = lambda url: url
    """The API root a user's address means (`https://x.atlassian.net` → its `/wiki`)."""
    since_margin: timedelta = timedelta(0)
    """Reached back further by incremental listings (Confluence's CQL reads dates in the
    account's unknown time zone)."""
    check_options: Callable[[Mapping[str, Any]], dict[str, Any]] = lambda options: {}
    """An attachment's options as given (what to index of a folder), validated and with
    defaults; ValueError with a sentence for a user when they are not valid."""
    aliases: tuple[str, ...] = ()
    """Other names people give it in chat ("google drive", "gdrive")."""
    read_credentials: Callable[[Mapping[str, str]], Credentials] | None = None
    """Credentials from what a user typed, field by field (Google Drive: a service account's
    `key` and `act_as`, or `client_id`, `client_secret`, `refresh_token` and `token_uri`);
    ValueError saying what is wrong. None: a token, an email, a GitHub App, read by surfaces."""
    folder_names: Callable[[Mapping[str, Any]], Mapping[str, str]] = lambda options: {}
    """An attachment's folders' names by key, from its options (what the connector kept at
    its last sync: a Drive folder's name for its id); a key without one is shown as is."""
    syncs_permissions: bool = False
    """Its clients are `AccessReader`s too (`knowledge.sources.connectors.permissions`): who
    may read each item is synced (permission sync), and who is in each group (group sync)."""
    access_key: Callable[[str, Mapping[str, Any]], str] = lambda external_id, meta: item_of(external_id, meta)
    """What a permission sync's listing names a document by, given the document's external
    id and facts: its item (Confluence: a page, an attachment its page), or what its access
    comes from (GitHub: the repository)."""
    account_key: Callable[[str], str] = lambda account: account
    """How Lore writes one of its people's account ids, as permissions name them and admins
    map people to them (GitHub: logins lower-cased, since GitHub ignores their case)."""
    credential_label: str = "personal access token"
    """What a bare token of this kind is called where it is shown back, masked."""
    requests_per_second: float = 0.0
    """The average rate its API allows (Notion's three a second), kept to unless the
    connections' limits say otherwise; 0: none published, 429s are honoured."""


def item_of(external_id: str, meta: Mapping[str, Any]) -> str:
    """The item a connector's document is of: its own, or an attachment's page's."""
    if external_id.startswith("attachment:"):
        return str(meta.get("page_id") or "")
    return external_id


class Connector(Protocol):
    async def account(self) -> str:
        """Check the credentials: the account's display name. Raises `BadCredentials`,
        `NoAccess` or `ConnectorUnavailable`."""

    async def folders(self) -> list[Folder]:
        """Every folder the account can read, by key."""

    def changed_since(
        self,
        folders: Sequence[FolderSpec],
        since: datetime | None,
        *,
        options: Mapping[str, Any] | None = None,
        state: State | None = None,
    ) -> AsyncIterator[Listed]:
        """Items under `folders` modified at or after `since` (UTC), followed to the last page
        of results, and `Complete` for each part listed completely; with `since` None, every
        item: the complete listing. `options` are the attachment's (`check_options`);
        `state` is what the connector kept at the last successful sync, updated in place."""

    async def fetch(self, ids: Sequence[str]) -> Sequence[Item | Skipped]:
        """The items with these ids, with their text (missing ones are left out)."""

    async def attachments(self, item_id: str) -> list[AttachmentRef]:
        """The item's attachments, every page of them."""

    async def download(self, attachment: AttachmentRef, max_bytes: int) -> bytes:
        """The attachment's bytes (`ConnectorError` when over `max_bytes`)."""


def parse_time(value: object) -> datetime | None:
    """An ISO 8601 time as the services' APIs write it (`Z` or an offset; none means UTC), or
    None for anything else."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
