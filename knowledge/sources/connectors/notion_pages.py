"""Reading the Notion pages a listing found changed: each page's blocks, followed down every
block that has children (toggles, lists, columns, tables, synced blocks read from their
source), turned into Markdown; a database row's properties first, as `name: value` lines,
with people and related pages by name; its heading path from `notion_tree.Tree`.

A page that fails is `Skipped` (tried again at the next sync); five in a row, or a refused
token, stop the sync: that is Notion failing, not one page.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from yarl import URL

from knowledge.sources.connectors.base import (
    ConnectorError,
    Item,
    NoAccess,
    Skipped,
    parse_time,
)
from knowledge.sources.connectors.failures import FailureStreak
from knowledge.sources.connectors.notion_markdown import (
    CHILDREN,
    Renderer,
    content,
    property_lines,
    title_of,
)
from knowledge.sources.connectors.notion_tree import Tree
from knowledge.sources.connectors.notion_values import Json, NotFound, is_gone, normal_id, parent_of

if TYPE_CHECKING:
    from knowledge.sources.connectors.notion_api import NotionApi

MAX_DEPTH = 12
"""Blocks nested deeper than this are not read (Notion's editor rarely goes past 6)."""
MAX_BLOCKS = 10_000
"""Blocks read for one page at most; the rest of a longer page is left out, and said so."""
NOT_FOLLOWED = {"child_page", "child_database"}
"""Blocks whose children are documents of their own (a child page) or rows (a database)."""


class Reader:
    """Reads pages into `Item`s; `listed` holds the page JSON the listing already has."""

    def __init__(self, api: NotionApi, tree: Tree, listed: dict[str, Json]) -> None:
        self._api = api
        self._tree = tree
        self._listed = listed
        self._failures = FailureStreak("pages")
        self._synced: dict[str, list[Json]] = {}
        """Children of synced blocks' sources, read once per sync however many pages show them."""
        self._users: dict[str, str] | None = None
        self._titles: dict[str, str | None] = {}

    async def fetch(self, ids: Sequence[str]) -> list[Item | Skipped]:
        found: list[Item | Skipped] = []
        for page_id in ids:
            title = self._tree.title(page_id) or page_id
            try:
                item = await self._page(page_id)
            except NotFound:
                continue  # gone since the listing
            except ConnectorError as exc:
                self._failures.failed(exc)
                found.append(Skipped(page_id, title, str(exc)))
                continue
            self._failures.succeeded()
            if item is not None:
                found.append(item)
        return found

    async def _page(self, page_id: str) -> Item | None:
        page = self._listed.get(page_id) or await self._api.get(f"/v1/pages/{page_id}")
        if is_gone(page):
            return None
        self._tree.learn(page)
        title = title_of(page.get("properties")) or "Untitled"
        counted = [0]
        blocks = await self._children(page_id, 0, counted)
        parts = []
        parent_kind, parent = parent_of(page)
        row = parent_kind in ("data_source", "database")
        if row:
            parts.append("\n".join(await self._properties(page)))
        parts.append(self._renderer(page).markdown(blocks))
        if counted[0] >= MAX_BLOCKS:
            parts.append(f"(Lore read the first {MAX_BLOCKS} blocks of this page only.)")
        text = "\n\n".join(p.strip() for p in parts if p.strip()) or title
        modified_by = await self._user_name(page.get("last_edited_by"))
        return Item(
            id=page_id,
            title=title,
            url=str(page.get("url") or self._page_url(page_id)),
            version=str(page.get("last_edited_time") or ""),
            text=text + "\n",
            folder="notion",
            author=await self._user_name(page.get("created_by")),
            modified_by=modified_by,
            modified=parse_time(page.get("last_edited_time")),
            path=await self._tree.path(page_id, self._api),
            key=self._page_url(page_id),
            facts=_facts(
                page_id=page_id,
                item_type="database row" if row else "page",
                parent_id=parent,
                data_source=self._tree.title(parent) if row else None,
                modified_by=modified_by,
                shared_via=await self._tree.shared_root(page_id, self._api),
                public_url=str(page.get("public_url") or "") or None,
            ),
        )

    def _page_url(self, page_id: str) -> str:
        """The page's address in the API: what identifies its document (it survives renames)."""
        return f"{self._api.base_url}/v1/pages/{page_id}"

    # -- blocks ----------------------------------------------------------------------------

    async def _children(self, block_id: str, depth: int, counted: list[int]) -> list[Json]:
        """The block's children, each with its own children under `CHILDREN`."""
        found: list[Json] = []
        async for block in self._api.results(f"/v1/blocks/{block_id}/children"):
            if counted[0] >= MAX_BLOCKS:
                break
            counted[0] += 1
            found.append(await self._with_children(block, depth + 1, counted))
        return found

    async def _with_children(self, block: Json, depth: int, counted: list[int]) -> Json:
        kind = str(block.get("type") or "")
        if kind == "synced_block":
            source = (content(block).get("synced_from") or {}).get("block_id")
            if source:
                return {**block, CHILDREN: await self._synced_source(normal_id(str(source)), depth, counted)}
        if not block.get("has_children") or kind in NOT_FOLLOWED or depth > MAX_DEPTH:
            return block
        return {**block, CHILDREN: await self._children(str(block.get("id")), depth, counted)}

    async def _synced_source(self, source: str, depth: int, counted: list[int]) -> list[Json]:
        """What a synced block shows: its original's children (read once per sync)."""
        if source not in self._synced:
            try:
                self._synced[source] = await self._children(source, depth, counted)
            except (NotFound, NoAccess):
                await self._api.say(f"a synced block's original ({source}) is not shared with Lore; left out")
                self._synced[source] = []
        return self._synced[source]

    def _renderer(self, page: Json) -> Renderer:
        """A renderer linking child pages where Notion shows them (the page's own site)."""
        url = URL(str(page.get("url") or ""))
        site = str(url.parent) if url.is_absolute() else None  # Notion's site (and workspace path)

        def link(child_id: str) -> str | None:
            listed = self._listed.get(normal_id(child_id))
            if listed and listed.get("url"):
                return str(listed["url"])
            return f"{site.rstrip('/')}/{child_id.replace('-', '')}" if site else None

        return Renderer(link)

    # -- properties ------------------------------------------------------------------------

    async def _properties(self, page: Json) -> list[str]:
        properties = dict(page.get("properties") or {})
        for name, value in properties.items():
            if isinstance(value, dict) and value.get("type") == "relation" and value.get("has_more"):
                properties[name] = await self._relation(str(page.get("id")), value)
        people = {}
        for value in properties.values():
            for user in _people(value):
                user_id = str(user.get("id") or "")
                if user_id and not user.get("name"):
                    people[user_id] = await self._user_name(user) or ""
        pages = {}
        for value in properties.values():
            if isinstance(value, dict) and value.get("type") == "relation":
                for related in value.get("relation") or []:
                    related_id = normal_id(str((related or {}).get("id") or ""))
                    pages[related_id] = await self._page_title(related_id)
        return property_lines(
            properties, lambda i: people.get(i) or None, lambda i: pages.get(normal_id(i)) or None
        )

    async def _relation(self, page_id: str, value: Json) -> Json:
        """All of a relation's pages: a page's JSON names 25 at most (`has_more`)."""
        path = f"/v1/pages/{page_id}/properties/{value.get('id')}"
        related = [
            item["relation"]
            async for item in self._api.results(path)
            if isinstance(item, dict) and isinstance(item.get("relation"), dict)
        ]
        return {**value, "relation": related, "has_more": False}

    async def _page_title(self, page_id: str) -> str | None:
        known = self._tree.title(page_id)
        if known:
            return known
        if page_id not in self._titles:
            try:
                related = await self._api.get(f"/v1/pages/{page_id}")
            except (NotFound, NoAccess):  # a page in a database not shared with Lore
                related = {}
            self._titles[page_id] = title_of(related.get("properties")) or None
        return self._titles[page_id]

    async def _user_name(self, user: object) -> str | None:
        if not isinstance(user, dict):
            return None
        if user.get("name"):
            return str(user["name"])
        if self._users is None:
            self._users = await self._directory()
        return self._users.get(str(user.get("id") or ""))

    async def _directory(self) -> dict[str, str]:
        """Everyone's names (`GET /v1/users`), once; none without the user-information capability."""
        names: dict[str, str] = {}
        try:
            async for user in self._api.results("/v1/users"):
                if user.get("id") and user.get("name"):
                    names[str(user["id"])] = str(user["name"])
        except (NoAccess, NotFound):
            await self._api.say(
                "Notion gave no names of people (the integration can't read user information)"
            )
        return names


def _people(value: object) -> list[Json]:
    if not isinstance(value, dict):
        return []
    kind = value.get("type")
    data = value.get(str(kind))
    if kind == "people" and isinstance(data, list):
        return [u for u in data if isinstance(u, dict)]
    if kind in ("created_by", "last_edited_by") and isinstance(data, dict):
        return [data]
    return []


def _facts(**values: str | None) -> dict[str, str | int | bool]:
    return {k: v for k, v in values.items() if v}
