"""The Confluence connector: spaces, pages found with CQL, page bodies in storage format
turned into Markdown-flavoured text, and page attachments (Cloud and Data Center alike).

Listings ask only for versions (`expand=version`), so telling changed pages from unchanged
ones costs no body; bodies are then fetched for the changed pages only, a batch at a time
(`id in (…)`), with everything their documents carry (space, ancestors, labels, authors).
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from yarl import URL

from knowledge.sources.connectors.base import (
    ApiOptions,
    AttachmentRef,
    BadCredentials,
    Complete,
    ConnectorError,
    ConnectorKind,
    Folder,
    FolderSpec,
    Item,
    ItemRef,
    Listed,
    State,
    parse_time,
)
from knowledge.sources.connectors.confluence_access import RESTRICTION_EXPAND, ConfluenceAccess
from knowledge.sources.connectors.credentials import Credentials
from knowledge.sources.connectors.permissions import SourceAccess, SourceUser
from knowledge.sources.connectors.storage_format import storage_to_markdown

if TYPE_CHECKING:
    from knowledge.sources.connectors.confluence_api import ConfluenceApi, Json
    from knowledge.sources.fetch import FetchSession

KIND = "confluence"
PAGE_SIZE = 50  # results per listing request: few requests, each quick for the server
FETCH_BATCH = 25  # pages one request fetches with their bodies (`id in (…)`): a few MB at most
LISTING_EXPAND = "version"
FETCH_EXPAND = f"body.storage,version,ancestors,metadata.labels,space,history,{RESTRICTION_EXPAND}"
CQL_TIME = "%Y-%m-%d %H:%M"
TIME_ZONE_MARGIN = timedelta(hours=12)
"""CQL reads dates in the Confluence account's time zone, which Lore does not know: an
incremental listing reaches back this much more (the most negative UTC offset)."""
_FOLDER = re.compile(r"^(?P<space>~?[A-Za-z0-9_.-]{1,255})(?:/(?P<page>\d{1,20}))?$")


def parse_space(text: str) -> FolderSpec:
    """A space key, optionally `/page id` (a page and its descendants); ValueError otherwise."""
    match = _FOLDER.match(text.strip())
    if match is None:
        raise ValueError(f"“{text}” is not a space key (or SPACE/page id)")
    return FolderSpec(match["space"], match["page"])


def api_root(url: str) -> str:
    """A bare Cloud site (`https://x.atlassian.net`) means its `/wiki`."""
    parsed = URL(url)
    if parsed.path in ("", "/") and (parsed.host or "").endswith(".atlassian.net"):
        return str(parsed.with_path("/wiki"))
    return url


def cql_string(value: str) -> str:
    """A CQL string literal."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def listing_cql(folders: Sequence[FolderSpec], since: datetime | None) -> str:
    """Pages in the folders (spaces, or page trees: the root and its descendants), modified
    at or after `since`, oldest first, so a listing interrupted half way resumes cheaply."""
    wanted = []
    for folder in folders:
        if folder.within:
            tree = f"(id = {folder.within} or ancestor = {folder.within})"
            wanted.append(f"(space = {cql_string(folder.key)} and {tree})")
        else:
            wanted.append(f"space = {cql_string(folder.key)}")
    cql = f"type = page and ({' or '.join(wanted)})"
    if since is not None:
        cql += f" and lastmodified >= {cql_string(since.astimezone(UTC).strftime(CQL_TIME))}"
    return cql + " order by lastmodified asc"


def _get(data: Any, *path: str) -> Any:
    for key in path:
        data = data.get(key) if isinstance(data, dict) else None
    return data


def _name(user: Any) -> str | None:
    name = _get(user, "displayName") or _get(user, "publicName") or _get(user, "username")
    return str(name) if name else None


class ConfluenceConnector:
    """A `Connector` and an `AccessReader` (`knowledge.sources.connectors.permissions`):
    Cloud when it signs in with an email and API token, Data Center with a personal access
    token; the two differ only in where they keep space permissions, groups and people."""

    def __init__(self, api: ConfluenceApi, *, cloud: bool = True) -> None:
        self._api = api
        self._access = ConfluenceAccess(api, cloud=cloud)

    @property
    def base_url(self) -> str:
        return self._api.base_url

    async def account(self) -> str:
        user = await self._api.get_json("/rest/api/user/current")
        if user.get("type") == "anonymous":
            raise BadCredentials(
                f"Confluence at {self._api.host} treated Lore as an anonymous user; check the credentials"
            )
        return _name(user) or str(user.get("email") or "the account")

    async def folders(self) -> list[Folder]:
        found = []
        async for space in self._api.results("/rest/api/space", {"limit": PAGE_SIZE}):
            key = str(space.get("key") or "")
            if key:
                webui = _get(space, "_links", "webui")
                url = self._api.url(webui) if isinstance(webui, str) else None
                found.append(
                    Folder(key, str(space.get("name") or key), str(space.get("type") or "space"), url)
                )
        return found

    async def changed_since(
        self,
        folders: Sequence[FolderSpec],
        since: datetime | None,
        *,
        options: Mapping[str, Any] | None = None,
        state: State | None = None,
    ) -> AsyncIterator[Listed]:
        params: dict[str, str | int] = {
            "cql": listing_cql(folders, since),
            "limit": PAGE_SIZE,
            "expand": LISTING_EXPAND,
        }
        async for content in self._api.results("/rest/api/content/search", params):
            yield ItemRef(
                id=str(content.get("id")),
                title=str(content.get("title") or ""),
                version=int(_get(content, "version", "number") or 0),
                modified=parse_time(_get(content, "version", "when")),
            )
        if since is None:
            yield Complete()

    async def fetch(self, ids: Sequence[str]) -> list[Item]:
        items: list[Item] = []
        for start in range(0, len(ids), FETCH_BATCH):
            batch = [i for i in ids[start : start + FETCH_BATCH] if i.isdigit()]
            if not batch:
                continue
            params: dict[str, str | int] = {
                "cql": f"id in ({','.join(batch)})",
                "limit": FETCH_BATCH,
                "expand": FETCH_EXPAND,
            }
            async for content in self._api.results("/rest/api/content/search", params):
                self._access.remember(content)
                item = self._item(content)
                items.append(replace(item, access=await self._page_access(content)))
        return items

    async def _page_access(self, content: Json) -> SourceAccess:
        """Who may read the page; nobody when Confluence can't say (fail closed)."""
        ancestors = [
            str(a.get("id")) for a in content.get("ancestors") or [] if isinstance(a, dict) and a.get("id")
        ]
        try:
            return await self._access.page_access(
                str(_get(content, "space", "key") or ""), str(content.get("id")), ancestors
            )
        except ConnectorError:
            return SourceAccess.nobody()

    def item_access(
        self, folders: Sequence[FolderSpec], options: Mapping[str, Any] | None = None
    ) -> AsyncIterator[tuple[str, SourceAccess]]:
        return self._access.item_access(listing_cql(folders, None))

    async def group_members(self, name: str) -> list[SourceUser]:
        return await self._access.group_members(name)

    async def people(self, account_ids: Sequence[str]) -> list[SourceUser]:
        return await self._access.people(account_ids)

    def _item(self, content: Json) -> Item:
        page_id = str(content.get("id"))
        webui = _get(content, "_links", "webui")
        url = self._api.url(webui) if isinstance(webui, str) else self.page_url(page_id)
        labels = _get(content, "metadata", "labels", "results") or []
        ancestors = content.get("ancestors") or []
        return Item(
            id=page_id,
            title=str(content.get("title") or page_id),
            url=url,
            version=int(_get(content, "version", "number") or 0),
            text=storage_to_markdown(str(_get(content, "body", "storage", "value") or "")),
            folder=str(_get(content, "space", "key") or ""),
            folder_name=str(_get(content, "space", "name") or ""),
            author=_name(_get(content, "history", "createdBy")),
            modified_by=_name(_get(content, "version", "by")),
            modified=parse_time(_get(content, "version", "when")),
            labels=tuple(
                str(label.get("name")) for label in labels if isinstance(label, dict) and label.get("name")
            ),
            path=tuple(str(a.get("title")) for a in ancestors if isinstance(a, dict) and a.get("title")),
            key=self.page_url(page_id),
            facts=_facts(
                space=str(_get(content, "space", "key") or ""),
                space_name=str(_get(content, "space", "name") or ""),
                modified_by=_name(_get(content, "version", "by")),
            ),
        )

    def page_url(self, page_id: str) -> str:
        """A page's address that survives renames: what identifies its document."""
        return f"{self._api.base_url}/pages/viewpage.action?pageId={page_id}"

    async def attachments(self, item_id: str) -> list[AttachmentRef]:
        found = []
        path = f"/rest/api/content/{item_id}/child/attachment"
        async for attachment in self._api.results(path, {"limit": PAGE_SIZE, "expand": "version"}):
            download = _get(attachment, "_links", "download")
            if not isinstance(download, str):
                continue
            webui = _get(attachment, "_links", "webui")
            size = _get(attachment, "extensions", "fileSize")
            found.append(
                AttachmentRef(
                    id=str(attachment.get("id")),
                    title=str(attachment.get("title") or ""),
                    media_type=_get(attachment, "metadata", "mediaType")
                    or _get(attachment, "extensions", "mediaType"),
                    version=int(_get(attachment, "version", "number") or 0),
                    download_url=self._api.url(download),
                    url=self._api.url(webui) if isinstance(webui, str) else self._api.url(download),
                    size=int(size) if isinstance(size, int | float) else None,
                )
            )
        return found

    async def download(self, attachment: AttachmentRef, max_bytes: int) -> bytes:
        return await self._api.download(attachment.download_url, max_bytes)


def open_confluence(
    session: FetchSession, base_url: str, credentials: Credentials, options: ApiOptions
) -> ConfluenceConnector:
    # Imported here: the registry lists this kind for the command grammar and every surface,
    # and the client brings aiohttp with it, which only a connection's work needs.
    from knowledge.sources.connectors.confluence_api import ConfluenceApi

    api = ConfluenceApi(session, base_url, credentials, options)
    return ConfluenceConnector(api, cloud=credentials.email is not None)


def _facts(**values: str | None) -> dict[str, str | int | bool]:
    return {k: v for k, v in values.items() if v}


CONFLUENCE = ConnectorKind(
    kind=KIND,
    label="Confluence",
    fetch_batch=FETCH_BATCH,
    open=open_confluence,
    parse_folder=parse_space,
    api_root=api_root,
    since_margin=TIME_ZONE_MARGIN,
    syncs_permissions=True,
)
