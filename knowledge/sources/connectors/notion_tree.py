"""Where each Notion page sits: its parent, and its parent's parent, up to the workspace.

Notion gives each page, data source and block its `parent` (a page, a data source with its
database, a database, a block, or the workspace), never its ancestors. Listings learn the
parents of what they list; the rest is asked for once (`GET /v1/blocks/{id}` for a page
inside a toggle or a column, a page or database not listed this time) and kept between syncs
in the attachment's state, so that an incremental sync knows where a changed page lives
without reading its ancestors again. An ancestor the integration may not read (404) is where
the path starts.

The titles of the ancestors (pages and data sources: a database row sits under its data
source's title) are a document's heading path; the ids say which attached page tree or
database a page is in.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from knowledge.sources.connectors.notion_markdown import rich_text, title_of
from knowledge.sources.connectors.notion_values import Json, NotFound, normal_id, parent_of

if TYPE_CHECKING:
    from knowledge.sources.connectors.notion_api import NotionApi

MAX_DEPTH = 64  # a page's ancestors followed at most: a loop guard, far deeper than real trees
UNREADABLE = "unreadable"
"""The kind of an ancestor the integration may not read (404): where what is shared begins."""
TITLED = ("page", "data_source")
"""Kinds of ancestor whose title is part of a heading path (a database row's path names its
data source; blocks and database containers have none of their own)."""
ENDPOINTS = {
    "page": "/v1/pages/{}",
    "block": "/v1/blocks/{}",
    "database": "/v1/databases/{}",
    "data_source": "/v1/data_sources/{}",
}


@dataclass(frozen=True)
class Node:
    kind: str
    title: str
    parent_kind: str
    """"page", "block", "database", "data_source", or "" at the top (the workspace, or an
    ancestor the integration may not read)."""
    parent: str

    def as_list(self) -> list[str]:
        return [self.kind, self.title, self.parent_kind, self.parent]


def object_title(data: Json) -> str:
    """The title of a page (its title property), a data source or a database (its title text)."""
    if data.get("object") == "page":
        return title_of(data.get("properties"))
    return rich_text(data.get("title"), marks=False).strip()


class Tree:
    """The parents Lore knows, kept in an attachment's state (`state["nodes"]`)."""

    def __init__(self) -> None:
        self._nodes: dict[str, Node] = {}

    def load(self, state: MutableMapping[str, Any]) -> None:
        """What the last successful sync knew, added to what this one learnt already."""
        stored = state.get("nodes")
        if isinstance(stored, dict):
            for key, value in stored.items():
                if isinstance(value, list) and len(value) == 4 and key not in self._nodes:
                    self._nodes[str(key)] = Node(*(str(v) for v in value))

    def save(self, state: MutableMapping[str, Any]) -> None:
        state["nodes"] = {key: node.as_list() for key, node in self._nodes.items()}

    def forget(self, *, keep_blocks: bool = True) -> None:
        """Drop what a complete listing will learn again (blocks rarely move: kept)."""
        self._nodes = {k: n for k, n in self._nodes.items() if keep_blocks and n.kind == "block"}

    def discard(self, item_id: str) -> None:
        self._nodes.pop(item_id, None)

    def get(self, item_id: str) -> Node | None:
        return self._nodes.get(item_id)

    def learn(self, data: Json) -> str:
        """Remember a page, data source, database or block from its JSON; its id."""
        kind = str(data.get("object") or "")
        item_id = normal_id(str(data.get("id") or ""))
        parent_kind, parent = parent_of(data)
        if kind == "data_source" and parent_kind == "database":
            top_kind, top = parent_of({"parent": data.get("database_parent")})
            known = self._nodes.get(parent)
            self._nodes[parent] = Node("database", known.title if known else "", top_kind, top)
        if kind == "page" and parent_kind == "data_source":
            database = (data.get("parent") or {}).get("database_id")
            if database and parent not in self._nodes:
                self._nodes[parent] = Node("data_source", "", "database", normal_id(str(database)))
        title = "" if kind == "block" else object_title(data)
        self._nodes[item_id] = Node(kind, title, parent_kind, parent)
        return item_id

    def title(self, item_id: str) -> str | None:
        node = self._nodes.get(item_id)
        return node.title if node is not None and node.title else None

    async def ancestors(self, item_id: str, api: NotionApi) -> list[tuple[str, Node]]:
        """The ancestors of a known item, nearest first, those not known asked for."""
        found: list[tuple[str, Node]] = []
        node = self._nodes.get(item_id)
        seen = {item_id}
        while node is not None and node.parent and node.parent not in seen and len(found) < MAX_DEPTH:
            seen.add(node.parent)
            parent = self._nodes.get(node.parent) or await self._ask(node.parent_kind, node.parent, api)
            if parent is None:
                break
            found.append((node.parent, parent))
            node = parent
        return found

    async def _ask(self, kind: str, item_id: str, api: NotionApi) -> Node | None:
        endpoint = ENDPOINTS.get(kind)
        if endpoint is None:
            return None
        try:
            data = await api.get(endpoint.format(item_id))
        except NotFound:  # not shared with the integration: the path starts below it
            self._nodes[item_id] = Node(UNREADABLE, "", "", "")
            return self._nodes[item_id]
        if kind == "database" and not data.get("object"):
            data = {**data, "object": "database"}
        self.learn(data)
        return self._nodes.get(item_id)

    async def path(self, item_id: str, api: NotionApi) -> tuple[str, ...]:
        """The titles of an item's ancestors, root first: its heading path."""
        ancestors = await self.ancestors(item_id, api)
        titles = [n.title for _, n in reversed(ancestors) if n.kind in TITLED and n.title]
        return tuple(titles)

    async def shared_root(self, item_id: str, api: NotionApi) -> str:
        """The highest page, database or data source above the item (or the item itself) that
        the integration may read: the one someone shared with it, as near as Notion's API lets
        an integration tell (it names no one who may read a page)."""
        root = item_id
        for key, node in await self.ancestors(item_id, api):
            if node.kind == UNREADABLE:
                break
            if node.kind in ("page", "database", "data_source"):
                root = key
        return root

    async def within(self, item_id: str, folder: str, api: NotionApi) -> bool:
        """Whether the item is `folder` (a page, a database, a data source) or under it."""
        if item_id == folder:
            return True
        return any(key == folder for key, _ in await self.ancestors(item_id, api))
