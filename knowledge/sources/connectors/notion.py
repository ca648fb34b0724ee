"""The Notion connector: every page and database row shared with an internal integration, or
one page tree, or one database, as Markdown documents cited by their Notion links.

Folders are `workspace` (everything shared with the integration, new pages included), a page
(it and the pages under it) or a database (its rows), named by their Notion link or id. Items
are pages, by id; a page's version is its `last_edited_time`, so a listing tells changed pages
from unchanged ones without reading a block (`notion_listing.py`), and only changed pages are
read (`notion_pages.py`). Child pages are documents of their own, linked from their parent's
text; each document's heading path is the titles of the pages above it (`notion_tree.py`).

Who may read what: Notion's API tells an integration nothing about who may open a page, so a
connection's documents are readable by whoever may read the index they are attached to
(items carry no access of their own); the person connecting chose what to share with the
integration. What the API does tell is kept in each document's facts for a permission model
to use: `shared_via`, the highest page or database above it that the integration may read
(the one shared with it), and `public_url` when the page is published to the web.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from yarl import URL

from knowledge.sources.connectors.base import (
    ApiOptions,
    AttachmentRef,
    ConnectorError,
    ConnectorKind,
    Folder,
    FolderSpec,
    Item,
    Listed,
    Skipped,
    State,
)
from knowledge.sources.connectors.credentials import Credentials
from knowledge.sources.connectors.notion_listing import WORKSPACE, Lister
from knowledge.sources.connectors.notion_pages import Reader
from knowledge.sources.connectors.notion_tree import Tree
from knowledge.sources.connectors.notion_values import Json, normal_id

if TYPE_CHECKING:
    from knowledge.sources.connectors.notion_api import NotionApi
    from knowledge.sources.fetch import FetchSession

KIND = "notion"
DEFAULT_URL = "https://api.notion.com"
FETCH_BATCH = 10  # changed pages handed to one fetch; Notion's 3 requests a second pace them anyway
REQUESTS_PER_SECOND = 3.0
"""Notion's documented average rate limit per integration."""
_ID = re.compile(r"([0-9a-f]{32})(?![0-9a-f])", re.I)
_WORKSPACE = re.compile(r"^(?:the )?(?:whole )?(?:workspace|all|everything|notion)$", re.I)
NOTION_SITES = ("notion.so", "www.notion.so", "notion.site", "www.notion.com", "notion.com")


def parse_folder(text: str) -> FolderSpec:
    """`workspace`, or a page or database: its Notion link, or its id (with or without dashes)."""
    cleaned = text.strip().strip("<>")
    if _WORKSPACE.match(cleaned):
        return FolderSpec(WORKSPACE)
    path = URL(cleaned).path if "://" in cleaned else cleaned
    found = _ID.findall(path.replace("-", ""))
    if len(found) == 0 or len(path.replace("-", "")) > 2048:
        raise ValueError(f"“{text}” is not a Notion page or database (its link or id), nor “workspace”")
    return FolderSpec(normal_id(found[-1]))


def api_root(url: str) -> str:
    """notion.so (the site people know) means api.notion.com; anything else is taken as given."""
    host = (URL(url).host or "").lower()
    return DEFAULT_URL if host in NOTION_SITES or host.endswith(".notion.site") else url


class NotionConnector:
    def __init__(self, api: NotionApi) -> None:
        self._api = api
        self._tree = Tree()
        self._listed: dict[str, Json] = {}
        self._state: State = {}
        self._lister = Lister(api, self._tree, self._listed)
        self._reader = Reader(api, self._tree, self._listed)

    @property
    def base_url(self) -> str:
        return self._api.base_url

    @property
    def requests(self) -> int:
        """Requests sent so far: what a sync cost."""
        return self._api.requests

    async def account(self) -> str:
        me = await self._api.get("/v1/users/me")
        name = str(me.get("name") or "the integration")
        workspace = (me.get("bot") or {}).get("workspace_name")
        return f"{name} in {workspace}" if workspace else name

    async def folders(self) -> list[Folder]:
        return await self._lister.folders()

    def changed_since(
        self,
        folders: Sequence[FolderSpec],
        since: datetime | None,
        *,
        options: Mapping[str, Any] | None = None,
        state: State | None = None,
    ) -> AsyncIterator[Listed]:
        self._state = state if state is not None else {}
        return self._lister.listing(folders, since, self._state)

    async def fetch(self, ids: Sequence[str]) -> list[Item | Skipped]:
        found = await self._reader.fetch(ids)
        self._tree.save(self._state)  # what reading learnt of the pages' ancestors
        return found

    async def attachments(self, item_id: str) -> list[AttachmentRef]:
        return []  # files in pages are Notion-hosted links that expire within the hour: not read

    async def download(self, attachment: AttachmentRef, max_bytes: int) -> bytes:
        raise ConnectorError("Notion pages have no attachments Lore reads")


def open_notion(
    session: FetchSession, base_url: str, credentials: Credentials, options: ApiOptions
) -> NotionConnector:
    # Imported here: the registry lists this kind for the command grammar and every surface,
    # and the client brings aiohttp with it, which only a connection's work needs.
    from knowledge.sources.connectors.notion_api import NotionApi

    api = NotionApi(session, base_url, credentials, options)
    return NotionConnector(api)


NOTION = ConnectorKind(
    kind=KIND,
    label="Notion",
    fetch_batch=FETCH_BATCH,
    open=open_notion,
    parse_folder=parse_folder,
    folder_noun="page or database",
    folders_noun="pages and databases",
    default_url=DEFAULT_URL,
    api_root=api_root,
    requests_per_second=REQUESTS_PER_SECOND,
    credential_label="integration token",
)
