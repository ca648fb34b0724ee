"""Listing what changed in Notion, without reading any page's blocks.

- **The workspace, or a page tree**: search (`POST /v1/search`), everything shared with the
  integration, pages and data sources, sorted by `last_edited_time`, newest first: an
  incremental listing stops at the first result older than its `since`. A page tree keeps the
  pages under its root (`notion_tree.Tree` knows their ancestors).
- **A database**: its data sources (`GET /v1/databases/{id}`), each queried
  (`POST /v1/data_sources/{id}/query`) for rows edited since, newest first.
- **Gone**: trash and archive are noticed at once on an incremental listing (a search of the
  trash since then, `filter: {in_trash: true}`; an archived page in the results), each a
  `Complete` of that page alone; a complete listing (`since` None) ends with `Complete()`, so
  what it did not list (trashed, archived, no longer shared) goes, unless Notion said its
  results were incomplete.

Each listed page's JSON (properties, URL, parent) is kept for the reading that follows
(`notion_pages.Reader`), which then needs no `GET /v1/pages/{id}`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from knowledge.sources.connectors.base import (
    Complete,
    ConnectorError,
    Folder,
    FolderSpec,
    ItemRef,
    Listed,
    State,
    parse_time,
)
from knowledge.sources.connectors.notion_tree import Tree, object_title
from knowledge.sources.connectors.notion_values import Json, Listing, NotFound, is_gone, normal_id, parent_of

if TYPE_CHECKING:
    from knowledge.sources.connectors.notion_api import NotionApi

WORKSPACE = "workspace"
NEWEST_FIRST = {"timestamp": "last_edited_time", "direction": "descending"}


class Lister:
    def __init__(self, api: NotionApi, tree: Tree, listed: dict[str, Json]) -> None:
        self._api = api
        self._tree = tree
        self._listed = listed

    async def listing(
        self, folders: Sequence[FolderSpec], since: datetime | None, state: State
    ) -> AsyncIterator[Listed]:
        self._tree.load(state)
        if since is None:
            self._tree.forget()
        listing = Listing()
        seen: set[str] = set()
        searched: list[str] = []
        databases: list[str] = []
        for folder in folders:
            (databases if await self._is_database(folder.key) else searched).append(folder.key)
        if searched:
            async for listed in self._searched(searched, since, listing):
                if isinstance(listed, ItemRef):
                    seen.add(listed.id)
                yield listed
        for database in databases:
            async for ref in self._rows(database, since, listing):
                if ref.id not in seen:
                    seen.add(ref.id)
                    yield ref
        if since is None and listing.complete:
            yield Complete()
        self._tree.save(state)

    async def _is_database(self, key: str) -> bool:
        if key == WORKSPACE:
            return False
        known = self._tree.get(key)
        if known is not None and known.kind in ("page", "database"):
            return known.kind == "database"
        try:
            database = await self._api.get(f"/v1/databases/{key}")
        except ConnectorError as exc:
            if isinstance(exc, NotFound) or type(exc) is ConnectorError:  # 404, or 400: a page's id
                return False
            raise
        self._learn_database(database)
        return True

    def _learn_database(self, database: Json) -> None:
        self._tree.learn({**database, "object": "database"})
        for source in database.get("data_sources") or []:
            if isinstance(source, dict) and source.get("id"):
                self._tree.learn(
                    {
                        "object": "data_source",
                        "id": source["id"],
                        "title": [{"plain_text": str(source.get("name") or "")}],
                        "parent": {"type": "database_id", "database_id": database.get("id")},
                        "database_parent": database.get("parent"),
                    }
                )

    # -- search: the workspace, page trees ----------------------------------------------------

    async def search(self, since: datetime | None, listing: Listing) -> list[Json]:
        """Pages and data sources shared with the integration, edited at or after `since`
        (all with `since` None), newest first; each learnt for the paths."""
        found: list[Json] = []
        async for result in self._api.results("/v1/search", body={"sort": NEWEST_FIRST}, listing=listing):
            if _older(result, since):
                break
            if result.get("object") in ("page", "data_source"):
                self._tree.learn(result)
                found.append(result)
        return found

    async def _searched(
        self, roots: list[str], since: datetime | None, listing: Listing
    ) -> AsyncIterator[Listed]:
        for page in await self.search(since, listing):
            if page.get("object") != "page":
                continue
            page_id = normal_id(str(page.get("id") or ""))
            if is_gone(page):
                self._tree.discard(page_id)
                if since is not None:
                    yield Complete(page_id)  # archived since: it goes now
                continue
            if await self._wanted(page_id, roots):
                self._listed[page_id] = page
                yield _ref(page_id, page)
        if since is not None:
            async for page_id in self._trashed(since):
                yield Complete(page_id)

    async def _wanted(self, page_id: str, roots: list[str]) -> bool:
        for root in roots:
            if root == WORKSPACE or await self._tree.within(page_id, root, self._api):
                return True
        return False

    async def _trashed(self, since: datetime) -> AsyncIterator[str]:
        """Pages moved to the trash since `since` (search answers live pages only, unless asked)."""
        body = {"sort": NEWEST_FIRST, "filter": {"in_trash": True}}
        async for found in self._api.results("/v1/search", body=body):
            if _older(found, since):
                return
            if found.get("object") == "page":
                page_id = normal_id(str(found.get("id") or ""))
                self._tree.discard(page_id)
                yield page_id

    # -- databases ----------------------------------------------------------------------------

    async def _rows(self, database: str, since: datetime | None, listing: Listing) -> AsyncIterator[ItemRef]:
        found = await self._api.get(f"/v1/databases/{database}")
        self._learn_database(found)
        for source in found.get("data_sources") or []:
            if not isinstance(source, dict) or not source.get("id"):
                continue
            body: dict[str, Any] = {"sorts": [NEWEST_FIRST]}
            if since is not None:
                edited = {"on_or_after": since.astimezone(UTC).isoformat().replace("+00:00", "Z")}
                body["filter"] = {"timestamp": "last_edited_time", "last_edited_time": edited}
            path = f"/v1/data_sources/{normal_id(str(source['id']))}/query"
            async for row in self._api.results(path, body=body, listing=listing):
                if row.get("object") != "page" or is_gone(row):
                    continue
                page_id = self._tree.learn(row)
                self._listed[page_id] = row
                yield _ref(page_id, row)

    # -- what may be attached -----------------------------------------------------------------

    async def folders(self) -> list[Folder]:
        """The workspace, then pages and databases at the top of what is shared, then the rest."""
        databases: dict[str, Json] = {}
        pages = []
        for found in await self.search(None, Listing()):
            kind, database = parent_of(found)
            if found.get("object") == "page":
                pages.append(found)
            elif kind == "database":
                databases.setdefault(database, found)
        shared = {normal_id(str(p.get("id"))) for p in pages} | set(databases)
        top: list[Folder] = [Folder(WORKSPACE, "everything shared with the integration", WORKSPACE)]
        rest: list[Folder] = []
        for page in pages:
            if is_gone(page):
                continue
            kind, parent = parent_of(page)
            if kind in ("data_source", "database"):
                continue  # a database's row: its database is what one attaches
            page_id = normal_id(str(page.get("id")))
            at_top = kind in ("", "page") and parent not in shared
            folder = Folder(
                page_id, object_title(page) or "Untitled", "page", str(page.get("url") or "") or None
            )
            (top if at_top else rest).append(folder)
        for database, source in databases.items():
            name = object_title(source) or "Untitled database"
            kind, parent = parent_of({"parent": source.get("database_parent")})
            url = str(source.get("url") or "") or None
            (top if parent not in shared else rest).append(Folder(database, name, "database", url))
        return top + rest


def _ref(page_id: str, page: Json) -> ItemRef:
    return ItemRef(
        id=page_id,
        title=object_title(page) or "Untitled",
        version=str(page.get("last_edited_time") or ""),
        modified=parse_time(page.get("last_edited_time")),
    )


def _older(found: Json, since: datetime | None) -> bool:
    if since is None:
        return False
    edited = parse_time(found.get("last_edited_time"))
    return edited is not None and edited < since
