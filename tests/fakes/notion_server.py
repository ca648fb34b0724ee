"""A fake Notion API (`/v1`, version 2026-03-11) on loopback, editable by tests.

    async with FakeNotion() as notion:
        seeded = seed(notion)                 # a handbook, runbooks, a decisions database
        … notion.base_url …                   # http://127.0.0.1:PORT
        notion.edit_text(seeded.deploy_paragraph, "…")
        assert notion.children_served == […]

In Notion's shapes (the reference at developers.notion.com, and the generated types of
@notionhq/client): users (`/v1/users/me`, `/v1/users`, `/v1/users/{id}`), search (`POST
/v1/search`: pages and data sources shared with the integration, `sort` by
`last_edited_time`, `filter` by object and/or `in_trash` (as the SDK's v5.23.2 added), any other filter a 400), pages (`/v1/pages/{id}`, with
properties; a relation's property item list at `/v1/pages/{id}/properties/{property}`),
blocks (`/v1/blocks/{id}`, `/v1/blocks/{id}/children` with `has_children`), databases and
their data sources (`/v1/databases/{id}`, `/v1/data_sources/{id}`, `POST
/v1/data_sources/{id}/query` with timestamp sorts and a `last_edited_time` filter). Rich text
carries `plain_text`, `href` and `annotations`; mentions of pages and people carry their
titles and names as Notion's do. Lists are paginated with `start_cursor`, `next_cursor` and
`has_more`, `page_size` up to 100.

What the integration sees is what was shared with it: a page shared (`share`), and every page,
database and row under it; `unshare` hides them again (404 `object_not_found`, as Notion
answers), `trash` and `archive` take a page out of search. Every request needs the token
(401 `unauthorized`) and a `Notion-Version` (400 `missing_version`).

Scripts: `rate_limit(n)` answers the next n requests 429 `rate_limited` with `Retry-After`;
`fail(path, n)` answers a path 500. `children_served` lists the blocks (and pages) whose
children went out; `requests` records everything.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from aiohttp import web

from .api_fake import ApiFake, ApiRequest

Json = dict[str, Any]
TOKEN = "ntn_4815162342SECRETsecretSECRETsecretSECRETwxyz"
VERSION = "2026-03-11"
MAX_PAGE_SIZE = 100
BOT_ID = "a1b2c3d4-0000-4000-8000-000000000b07"
WORKSPACE = "Acme"


def iso(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"


def new_id() -> str:
    return str(uuid.uuid4())


def text(content: str, *, link: str | None = None, **annotations: bool) -> Json:
    """A rich text object of type `text`."""
    marks = {"bold": False, "italic": False, "strikethrough": False, "underline": False, "code": False}
    return {
        "type": "text",
        "text": {"content": content, "link": {"url": link} if link else None},
        "annotations": {**marks, **annotations, "color": "default"},
        "plain_text": content,
        "href": link,
    }


def equation(expression: str) -> Json:
    marks = {"bold": False, "italic": False, "strikethrough": False, "underline": False, "code": False}
    return {
        "type": "equation",
        "equation": {"expression": expression},
        "annotations": {**marks, "color": "default"},
        "plain_text": expression,
        "href": None,
    }


@dataclass
class FakeUser:
    id: str
    name: str
    email: str
    bot: bool = False


@dataclass
class FakeBlock:
    id: str
    type: str
    data: Json
    """The block's own part (`block[type]`), rich text given as plain strings or objects."""
    children: list[FakeBlock] = field(default_factory=list)
    parent: tuple[str, str] = ("page_id", "")
    edited: datetime = field(default_factory=lambda: datetime.now(UTC))


@dataclass
class FakePage:
    id: str
    title: str
    parent: tuple[str, str]
    """(`page_id` | `block_id` | `data_source_id` | `workspace`, id)."""
    blocks: list[FakeBlock] = field(default_factory=list)
    properties: dict[str, Json] = field(default_factory=dict)
    """A row's property values besides its title, in Notion's shapes without their ids."""
    title_property: str = "title"
    created: datetime = field(default_factory=lambda: datetime.now(UTC))
    edited: datetime = field(default_factory=lambda: datetime.now(UTC))
    created_by: str = ""
    edited_by: str = ""
    shared: bool = False
    in_trash: bool = False
    archived: bool = False


@dataclass
class FakeDatabase:
    id: str
    title: str
    parent: tuple[str, str]
    source_id: str
    schema: dict[str, str]
    """Property name → type; the title property first."""
    created: datetime = field(default_factory=lambda: datetime.now(UTC))
    edited: datetime = field(default_factory=lambda: datetime.now(UTC))
    shared: bool = False
    in_trash: bool = False


class FakeNotion(ApiFake[tuple[int, str]]):
    def __init__(self, *, token: str = TOKEN) -> None:
        super().__init__()
        self.token = token
        self.users: dict[str, FakeUser] = {BOT_ID: FakeUser(BOT_ID, "Lore", "", bot=True)}
        self.pages: dict[str, FakePage] = {}
        self.databases: dict[str, FakeDatabase] = {}
        self.blocks: dict[str, FakeBlock] = {}
        self.incomplete_search = False
        """Answer searches with `request_status: incomplete` (Notion stopped before the end)."""
        self.user_capability = True
        """Whether the integration may read user information (else `/v1/users` is 403)."""
        self.children_served: list[str] = []
        """Ids of the blocks and pages whose children went out, in order."""
        self._clock = datetime.now(UTC) - timedelta(days=1)
        self.redirects: dict[str, str] = {}
        """Paths answered with a 307 to another address (a hostile or misconfigured proxy)."""

    # -- what tests use ------------------------------------------------------------------

    @property
    def web_url(self) -> str:
        """Where the pages' `url`s point (Notion's site, here the fake's own origin)."""
        return f"http://127.0.0.1:{self.port}/acme"

    def now(self) -> datetime:
        """The fake's clock: real time, strictly increasing from one edit to the next."""
        self._clock = max(datetime.now(UTC), self._clock + timedelta(milliseconds=1))
        return self._clock

    def add_user(self, name: str, email: str) -> FakeUser:
        user = FakeUser(new_id(), name, email)
        self.users[user.id] = user
        return user

    def add_page(
        self,
        title: str,
        *,
        parent: str | None = None,
        in_block: str | None = None,
        shared: bool = False,
        by: str = "",
        blocks: Iterable[FakeBlock] = (),
    ) -> FakePage:
        """A page at the top of the workspace, under a page, or inside a block (a toggle or a
        column); a child page also appears as a `child_page` block of its parent."""
        blocks = list(blocks)
        where = ("block_id", in_block) if in_block else ("page_id", parent) if parent else ("workspace", "")
        when = self.now()
        page = FakePage(
            new_id(), title, where, shared=shared, created=when, edited=when, created_by=by, edited_by=by
        )
        self.pages[page.id] = page
        self._place(page.id, blocks)
        page.blocks = blocks
        container = in_block or parent
        if container:
            self._append(container, FakeBlock(page.id, "child_page", {"title": title}))
        return page

    def add_database(
        self, title: str, schema: Mapping[str, str], *, parent: str | None = None, shared: bool = False
    ) -> FakeDatabase:
        """A database (with one data source) whose rows have these properties (name → type;
        the `title` one is the rows' titles); inline in a page when `parent` is given."""
        where = ("page_id", parent) if parent else ("workspace", "")
        when = self.now()
        database = FakeDatabase(new_id(), title, where, new_id(), dict(schema), when, when, shared)
        self.databases[database.id] = database
        if parent:
            self._append(parent, FakeBlock(database.id, "child_database", {"title": title}))
        return database

    def add_row(
        self,
        database: FakeDatabase,
        title: str,
        properties: Mapping[str, Json] | None = None,
        *,
        by: str = "",
        blocks: Iterable[FakeBlock] = (),
    ) -> FakePage:
        blocks = list(blocks)
        when = self.now()
        title_name = next(n for n, kind in database.schema.items() if kind == "title")
        row = FakePage(
            new_id(),
            title,
            ("data_source_id", database.source_id),
            properties=dict(properties or {}),
            title_property=title_name,
            created=when,
            edited=when,
            created_by=by,
            edited_by=by,
        )
        self.pages[row.id] = row
        self._place(row.id, blocks)
        row.blocks = blocks
        return row

    def block(self, kind: str, data: Json | str = "", *children: FakeBlock) -> FakeBlock:
        """A block of `kind`: `data` is its own part, or its text for text blocks."""
        own = {"rich_text": [text(data)] if data else []} if isinstance(data, str) else dict(data)
        return FakeBlock(new_id(), kind, own, list(children))

    def share(self, page_or_database: str) -> None:
        self._shareable(page_or_database).shared = True

    def unshare(self, page_or_database: str) -> None:
        self._shareable(page_or_database).shared = False

    def edit_text(self, block_id: str, content: str) -> None:
        """A text block's new text; its page's `last_edited_time` moves on."""
        block = self.blocks[block_id]
        block.data["rich_text"] = [text(content)]
        block.edited = self.now()
        self._touch(block.parent)

    def edit_property(self, row: FakePage, name: str, value: Json) -> None:
        row.properties[name] = value
        row.edited = self.now()

    def rename(self, page: FakePage, title: str) -> None:
        page.title = title
        page.edited = self.now()

    def trash(self, page: FakePage) -> None:
        page.in_trash = True
        page.edited = self.now()

    def archive(self, page: FakePage) -> None:
        page.archived = True
        page.edited = self.now()

    def rate_limit(self, times: int = 1, retry_after: str = "1") -> None:
        self.script((429, retry_after), times)

    def api_requests(self) -> list[ApiRequest]:
        return [r for r in self.requests.snapshot() if r.path.startswith("/v1/")]

    # -- visibility ----------------------------------------------------------------------

    def _shareable(self, item_id: str) -> FakePage | FakeDatabase:
        return self.pages.get(item_id) or self.databases[item_id]

    def _place(self, page_id: str, blocks: list[FakeBlock]) -> None:
        for block in blocks:
            block.parent = ("page_id", page_id)
            self._index(block)

    def _index(self, block: FakeBlock) -> None:
        self.blocks[block.id] = block
        for child in block.children:
            child.parent = ("block_id", block.id)
            self._index(child)

    def _append(self, container: str, block: FakeBlock) -> None:
        if container in self.pages:
            self.pages[container].blocks.append(block)
            block.parent = ("page_id", container)
        else:
            self.blocks[container].children.append(block)
            block.parent = ("block_id", container)
        self.blocks[block.id] = block

    def _touch(self, parent: tuple[str, str]) -> None:
        kind, item = parent
        while kind == "block_id":
            kind, item = self.blocks[item].parent
        if kind == "page_id" and item in self.pages:
            self.pages[item].edited = self.now()

    def _ancestor_ids(self, kind: str, item: str) -> list[str]:
        """The ids above a thing (pages, blocks, data sources, databases), nearest first."""
        found: list[str] = []
        while kind != "workspace" and item and len(found) < 100:
            found.append(item)
            if kind == "page_id" and item in self.pages:
                kind, item = self.pages[item].parent
            elif kind == "block_id" and item in self.blocks:
                kind, item = self.blocks[item].parent
            elif kind == "data_source_id":
                database = self._database_of(item)
                kind, item = ("database_id", database.id) if database else ("workspace", "")
            elif kind == "database_id" and item in self.databases:
                kind, item = self.databases[item].parent
            else:
                break
        return found

    def _database_of(self, source_id: str) -> FakeDatabase | None:
        return next((d for d in self.databases.values() if d.source_id == source_id), None)

    def _shared(self, ids: Iterable[str]) -> bool:
        return any(
            (
                self.pages[i].shared
                if i in self.pages
                else self.databases[i].shared
                if i in self.databases
                else False
            )
            for i in ids
        )

    def visible_page(self, page: FakePage) -> bool:
        return self._shared([page.id, *self._ancestor_ids(*page.parent)])

    def visible_database(self, database: FakeDatabase) -> bool:
        return self._shared([database.id, *self._ancestor_ids(*database.parent)])

    def _block_page(self, block: FakeBlock) -> FakePage | None:
        kind, item = block.parent
        while kind == "block_id" and item in self.blocks:
            kind, item = self.blocks[item].parent
        return self.pages.get(item) if kind == "page_id" else None

    def visible_block(self, block: FakeBlock) -> bool:
        page = self._block_page(block)
        return page is not None and self.visible_page(page) and not page.in_trash

    # -- the app -------------------------------------------------------------------------

    def build_app(self) -> web.Application:
        app = web.Application(middlewares=[self._record])
        get, post = app.router.add_get, app.router.add_post
        get("/v1/users/me", self._me)
        get("/v1/users", self._users)
        get("/v1/users/{id}", self._user)
        post("/v1/search", self._search)
        get("/v1/pages/{id}", self._page)
        get("/v1/pages/{id}/properties/{property}", self._property)
        get("/v1/blocks/{id}", self._block)
        get("/v1/blocks/{id}/children", self._children)
        get("/v1/databases/{id}", self._database)
        get("/v1/data_sources/{id}", self._data_source)
        post("/v1/data_sources/{id}/query", self._query)
        return app

    async def _guarded(self, request: web.Request, handler: Any) -> web.StreamResponse:
        script = self.scripted()
        if script is not None:
            status, retry_after = script
            return error(
                status,
                "rate_limited",
                "You have been rate limited. Please try again in a few minutes.",
                {"Retry-After": retry_after},
            )
        if request.path in self.redirects:
            return web.Response(status=307, headers={"Location": self.redirects[request.path]})
        if self.failing(request.path):
            return error(500, "internal_server_error", "Unexpected error occurred.")
        scheme, _, token = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() != "bearer" or token != self.token:
            return error(401, "unauthorized", "API token is invalid.")
        if not request.headers.get("Notion-Version"):
            return error(
                400,
                "missing_version",
                "Notion-Version header failed validation: Notion-Version header should be defined, instead was `undefined`.",
            )
        response: web.StreamResponse = await handler(request)
        return response

    # -- users ---------------------------------------------------------------------------

    def user_json(self, user: FakeUser) -> Json:
        if user.bot:
            owner = {"type": "workspace", "workspace": True}
            return {
                "object": "user",
                "id": user.id,
                "type": "bot",
                "name": user.name,
                "avatar_url": None,
                "bot": {
                    "owner": owner,
                    "workspace_name": WORKSPACE,
                    "workspace_limits": {"max_file_upload_size_in_bytes": 5368709120},
                },
            }
        return {
            "object": "user",
            "id": user.id,
            "type": "person",
            "name": user.name,
            "avatar_url": None,
            "person": {"email": user.email},
        }

    async def _me(self, request: web.Request) -> web.Response:
        return web.json_response(self.user_json(self.users[BOT_ID]))

    async def _users(self, request: web.Request) -> web.Response:
        if not self.user_capability:
            return error(403, "restricted_resource", "Insufficient permissions for this endpoint.")
        users = [self.user_json(u) for u in self.users.values()]
        return self._paged(request.query, users, "user")

    async def _user(self, request: web.Request) -> web.Response:
        user = self.users.get(request.match_info["id"])
        if user is None or not self.user_capability:
            return not_found("user", request.match_info["id"])
        return web.json_response(self.user_json(user))

    def _partial_user(self, user_id: str) -> Json:
        return {"object": "user", "id": user_id or BOT_ID}

    # -- pages ---------------------------------------------------------------------------

    def page_url(self, page: FakePage) -> str:
        slug = re.sub(r"[^A-Za-z0-9]+", "-", page.title).strip("-")
        return f"{self.web_url}/{slug + '-' if slug else ''}{page.id.replace('-', '')}"

    def _parent_json(self, parent: tuple[str, str]) -> Json:
        kind, item = parent
        if kind == "workspace":
            return {"type": "workspace", "workspace": True}
        if kind == "data_source_id":
            database = self._database_of(item)
            return {"type": kind, kind: item, "database_id": database.id if database else ""}
        return {"type": kind, kind: item}

    def page_json(self, page: FakePage) -> Json:
        title = {"id": "title", "type": "title", "title": [text(page.title)] if page.title else []}
        properties: Json = {page.title_property: title}
        for name, value in page.properties.items():
            kind = next(iter(k for k in value if k != "has_more"))
            properties[name] = {"id": _property_id(name), "type": kind, **self._property_value(value)}
        return {
            "object": "page",
            "id": page.id,
            "created_time": iso(page.created),
            "last_edited_time": iso(page.edited),
            "created_by": self._partial_user(page.created_by),
            "last_edited_by": self._partial_user(page.edited_by),
            "cover": None,
            "icon": None,
            "parent": self._parent_json(page.parent),
            "in_trash": page.in_trash,
            "is_archived": page.archived,
            "is_locked": False,
            "properties": properties,
            "url": self.page_url(page),
            "public_url": None,
        }

    def _property_value(self, value: Json) -> Json:
        """A property value as a page shows it: people with their names (when the integration
        may read them), relations capped at 25 with `has_more`, rich text filled in."""
        kind = next(iter(k for k in value if k != "has_more"))
        data = value[kind]
        if kind == "people":
            data = [
                self.user_json(self.users[u]) if self.user_capability else self._partial_user(u) for u in data
            ]
        elif kind == "relation":
            return {"relation": [{"id": r} for r in data[:25]], "has_more": len(data) > 25}
        elif kind in ("rich_text", "title"):
            data = [text(d) if isinstance(d, str) else d for d in data]
        return {kind: data}

    def _page_or_404(self, page_id: str) -> FakePage:
        page = self.pages.get(page_id)
        if page is None or not self.visible_page(page):
            raise not_found_error("page", page_id)
        return page

    async def _page(self, request: web.Request) -> web.Response:
        return web.json_response(self.page_json(self._page_or_404(request.match_info["id"])))

    async def _property(self, request: web.Request) -> web.Response:
        page = self._page_or_404(request.match_info["id"])
        wanted = request.match_info["property"]
        for name, value in page.properties.items():
            if _property_id(name) == wanted and "relation" in value:
                items = [
                    {"object": "property_item", "id": wanted, "type": "relation", "relation": {"id": r}}
                    for r in value["relation"]
                ]
                answer = self._paged(request.query, items, "property_item")
                return answer
        return not_found("property", wanted)

    # -- blocks --------------------------------------------------------------------------

    def block_json(self, block: FakeBlock) -> Json:
        own = dict(block.data)
        for key in ("rich_text", "caption"):
            if key in own:
                own[key] = [text(t) if isinstance(t, str) else t for t in own[key]]
        if block.type == "table_row":
            own["cells"] = [
                [text(c) if isinstance(c, str) else c for c in cell] for cell in own.get("cells", [])
            ]
        children = block.children
        if block.type == "child_page":
            children = self.pages[block.id].blocks if block.id in self.pages else []
        if block.type == "child_database":
            children = []
        has_children = (
            bool(children)
            or block.type == "child_database"
            or (block.type == "synced_block" and bool(own.get("synced_from")))
        )
        return {
            "object": "block",
            "id": block.id,
            "parent": self._parent_json(block.parent),
            "created_time": iso(block.edited),
            "last_edited_time": iso(block.edited),
            "created_by": self._partial_user(""),
            "last_edited_by": self._partial_user(""),
            "has_children": has_children,
            "in_trash": False,
            "type": block.type,
            block.type: own,
        }

    async def _block(self, request: web.Request) -> web.Response:
        block = self.blocks.get(request.match_info["id"])
        if block is None or not self.visible_block(block):
            return not_found("block", request.match_info["id"])
        return web.json_response(self.block_json(block))

    async def _children(self, request: web.Request) -> web.Response:
        item = request.match_info["id"]
        page = self.pages.get(item)
        if page is not None:
            if not self.visible_page(page):
                return not_found("block", item)
            children = page.blocks
        else:
            block = self.blocks.get(item)
            if block is None or not self.visible_block(block):
                return not_found("block", item)
            children = block.children
        self.children_served.append(item)
        return self._paged(request.query, [self.block_json(b) for b in children], "block")

    # -- databases and data sources --------------------------------------------------------

    def _source_json(self, database: FakeDatabase) -> Json:
        schema = {
            name: {"id": _property_id(name), "name": name, "type": kind, kind: {}}
            for name, kind in database.schema.items()
        }
        return {
            "object": "data_source",
            "id": database.source_id,
            "created_time": iso(database.created),
            "last_edited_time": iso(database.edited),
            "created_by": self._partial_user(""),
            "last_edited_by": self._partial_user(""),
            "title": [text(database.title)],
            "description": [],
            "icon": None,
            "cover": None,
            "properties": schema,
            "parent": {"type": "database_id", "database_id": database.id},
            "database_parent": self._parent_json(database.parent),
            "is_inline": database.parent[0] != "workspace",
            "in_trash": database.in_trash,
            "url": f"{self.web_url}/{database.id.replace('-', '')}",
            "public_url": None,
        }

    def _database_or_404(self, database_id: str) -> FakeDatabase:
        database = self.databases.get(database_id)
        if database is None or not self.visible_database(database):
            raise not_found_error("database", database_id)
        return database

    async def _database(self, request: web.Request) -> web.Response:
        database = self._database_or_404(request.match_info["id"])
        return web.json_response(
            {
                "object": "database",
                "id": database.id,
                "title": [text(database.title)],
                "description": [],
                "parent": self._parent_json(database.parent),
                "is_inline": database.parent[0] != "workspace",
                "in_trash": database.in_trash,
                "is_locked": False,
                "created_time": iso(database.created),
                "last_edited_time": iso(database.edited),
                "data_sources": [{"id": database.source_id, "name": database.title}],
                "icon": None,
                "cover": None,
                "url": f"{self.web_url}/{database.id.replace('-', '')}",
                "public_url": None,
            }
        )

    def _source_or_404(self, source_id: str) -> FakeDatabase:
        database = self._database_of(source_id)
        if database is None or not self.visible_database(database):
            raise not_found_error("data_source", source_id)
        return database

    async def _data_source(self, request: web.Request) -> web.Response:
        return web.json_response(self._source_json(self._source_or_404(request.match_info["id"])))

    async def _query(self, request: web.Request) -> web.Response:
        database = self._source_or_404(request.match_info["id"])
        body = await _body(request)
        rows = [
            p
            for p in self.pages.values()
            if p.parent == ("data_source_id", database.source_id) and p.in_trash == bool(body.get("in_trash"))
        ]
        since = ((body.get("filter") or {}).get("last_edited_time") or {}).get("on_or_after")
        if since:
            rows = [r for r in rows if r.edited >= _parse(since)]
        descending = any(s.get("direction") == "descending" for s in body.get("sorts") or [])
        rows.sort(key=lambda r: r.edited, reverse=descending)
        return self._paged(body, [self.page_json(r) for r in rows], "page_or_data_source")

    # -- search --------------------------------------------------------------------------

    async def _search(self, request: web.Request) -> web.Response:
        body = await _body(request)
        wanted = body.get("filter") or {}
        if not _search_filter(wanted):
            return error(
                400, "validation_error", "body failed validation: body.filter should be an object filter."
            )
        trashed = bool(wanted.get("in_trash"))
        found: list[tuple[datetime, Json]] = []
        if wanted.get("value") in (None, "page"):
            found += [
                (p.edited, self.page_json(p))
                for p in self.pages.values()
                if p.in_trash == trashed and self.visible_page(p) and _matches(body, p.title)
            ]
        if wanted.get("value") in (None, "data_source"):
            found += [
                (d.edited, self._source_json(d))
                for d in self.databases.values()
                if d.in_trash == trashed and self.visible_database(d) and _matches(body, d.title)
            ]
        sort = body.get("sort") or {}
        found.sort(key=lambda pair: pair[0], reverse=sort.get("direction", "descending") == "descending")
        answer = self._paged(body, [item for _, item in found], "page_or_data_source")
        if self.incomplete_search:
            payload = json.loads(answer.body)  # type: ignore[arg-type]
            payload["request_status"] = {
                "type": "incomplete",
                "incomplete_reason": "query_result_limit_reached",
            }
            return web.json_response(payload)
        return answer

    # -- lists ---------------------------------------------------------------------------

    def _paged(self, asked: Mapping[str, Any], items: list[Json], kind: str) -> web.Response:
        """A page of a list: `start_cursor` is the id of its first item (as Notion's are ids)."""
        try:
            size = int(asked.get("page_size") or MAX_PAGE_SIZE)
        except ValueError:
            size = 0
        if not 1 <= size <= MAX_PAGE_SIZE:
            return error(
                400,
                "validation_error",
                f"body failed validation: body.page_size should be ≤ `100`, instead was `{size}`.",
            )
        start = 0
        cursor = asked.get("start_cursor")
        if cursor:
            ids = [str(i.get("id")) for i in items]
            if cursor not in ids:
                return error(400, "validation_error", f"start_cursor provided is invalid: {cursor}")
            start = ids.index(cursor)
        page = items[start : start + size]
        following = items[start + size]["id"] if start + size < len(items) else None
        return web.json_response(
            {
                "object": "list",
                "results": page,
                "next_cursor": following,
                "has_more": following is not None,
                "type": kind,
                kind: {},
            }
        )


def error(status: int, code: str, message: str, headers: Mapping[str, str] | None = None) -> web.Response:
    body = {"object": "error", "status": status, "code": code, "message": message, "request_id": new_id()}
    return web.json_response(body, status=status, headers=headers)


def not_found(kind: str, item: str) -> web.Response:
    return error(
        404,
        "object_not_found",
        f"Could not find {kind} with ID: {item}. Make sure the relevant pages and databases are shared with your integration.",
    )


def not_found_error(kind: str, item: str) -> web.HTTPNotFound:
    response = not_found(kind, item)
    return web.HTTPNotFound(text=response.text, content_type="application/json")


def _search_filter(wanted: object) -> bool:
    """A filter search accepts: by object (`{"property": "object", "value": "page"}`), by
    trash (`{"in_trash": true}`), or both; nothing else (Notion's search filters no property)."""
    if not isinstance(wanted, dict) or set(wanted) - {"property", "value", "in_trash"}:
        return False
    if "property" in wanted or "value" in wanted:
        return wanted.get("property") == "object" and wanted.get("value") in ("page", "data_source")
    return not wanted or isinstance(wanted.get("in_trash"), bool)


def _property_id(name: str) -> str:
    return "".join(f"{ord(c):x}" for c in name)[:8] or "x"


def _matches(body: Mapping[str, Any], title: str) -> bool:
    query = str(body.get("query") or "").lower()
    return query in title.lower()


def _parse(value: str) -> datetime:
    parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


async def _body(request: web.Request) -> Json:
    raw = await request.read()  # cached: the recorder read it first
    try:
        data = json.loads(raw) if raw.strip() else {}
    except ValueError as exc:
        raise web.HTTPBadRequest(
            text=json.dumps(
                {
                    "object": "error",
                    "status": 400,
                    "code": "invalid_json",
                    "message": "Error parsing JSON body.",
                }
            ),
            content_type="application/json",
        ) from exc
    return data if isinstance(data, dict) else {}


# -- a seeded workspace -----------------------------------------------------------------------


@dataclass(frozen=True)
class Seeded:
    handbook: FakePage
    runbooks: FakePage
    payments_runbook: FakePage
    onboarding: FakePage
    decisions: FakeDatabase
    ledger_decision: FakePage
    queue_decision: FakePage
    deploy_paragraph: str
    """The id of the paragraph saying when deploys go out (edited by tests)."""
    synced_original: str
    scratch: FakePage
    """A page of its own, shared on its own (unshared by tests)."""
    old_notes: FakePage
    """Under the handbook (archived or trashed by tests)."""
    ada: FakeUser
    grace: FakeUser


def seed(fake: FakeNotion) -> Seeded:
    """Acme's handbook (shared with the integration): headings, nested lists, to-dos, a
    callout, a quote, a code block with the refund worker's timeout, a table, an equation, a
    synced block; a Runbooks page under it, whose Payments runbook hides the on-call handover
    inside a toggle; a Decisions database (Status, Owner, Decided, Related, Tags, Summary) whose
    ledger decision names its database in a property; an Onboarding page showing the synced
    block; Old notes (to archive); and a Scratchpad shared on its own (to unshare)."""
    ada = fake.add_user("Ada Lovelace", "ada@acme.test")
    grace = fake.add_user("Grace Hopper", "grace@acme.test")
    b = fake.block
    deploy = b("paragraph", "Production deploys of the payments API go out every Tuesday.")
    synced = b(
        "synced_block",
        {"synced_from": None},
        b("paragraph", "Security contact: security@acme.test, answered within 4 hours."),
    )
    code = b(
        "code",
        {
            "rich_text": [
                "REFUND_WORKER_TIMEOUT_SECONDS = 45  # the refund worker gives up after 45 seconds\n"
            ],
            "caption": ["settings.py"],
            "language": "python",
        },
    )
    table = b("table", {"table_width": 2, "has_column_header": True, "has_row_header": False},
              b("table_row", {"cells": [["Service"], ["Owner"]]}),
              b("table_row", {"cells": [["payments"], ["Ada Lovelace"]]}))  # fmt: skip
    bold = text("Never", bold=True)
    handbook = fake.add_page(
        "Engineering Handbook",
        shared=True,
        by=ada.id,
        blocks=[
            b("heading_1", "How we ship"),
            deploy,
            b("bulleted_list_item", "Before a deploy", b("bulleted_list_item", "freeze merges at noon"), b("to_do", {"rich_text": ["watch the canary"], "checked": True})),
            b("numbered_list_item", "Run make release"),
            b("numbered_list_item", "Announce it in #deploys"),
            b("callout", {"rich_text": [bold, text(" deploy on a Friday.")], "icon": {"type": "emoji", "emoji": "⚠️"}}),
            b("quote", "Move carefully and fix things."),
            code,
            table,
            b("equation", {"expression": "E = mc^2"}),
            synced,
        ],
    )  # fmt: skip
    runbooks = fake.add_page(
        "Runbooks", parent=handbook.id, by=ada.id, blocks=[b("paragraph", "Runbooks for every service.")]
    )
    toggle = b(
        "toggle",
        "On-call handover",
        b("paragraph", "The payments on-call rotation hands over at 09:30 on Mondays."),
    )
    payments = fake.add_page(
        "Payments runbook",
        parent=runbooks.id,
        by=grace.id,
        blocks=[
            b("heading_2", "When refunds fail"),
            b("paragraph", "Check the gateway dashboard first."),
            toggle,
        ],
    )
    decisions = fake.add_database(
        "Decisions",
        {"Name": "title", "Status": "select", "Owner": "people", "Decided": "date", "Related": "relation", "Tags": "multi_select", "Summary": "rich_text"},
        parent=handbook.id,
    )  # fmt: skip
    queue = fake.add_row(
        decisions,
        "Use SQS for the refund queue",
        {
            "Status": {"select": {"id": "s1", "name": "Accepted", "color": "green"}},
            "Owner": {"people": [grace.id]},
        },
        by=grace.id,
    )
    ledger = fake.add_row(
        decisions,
        "Ledger database",
        {
            "Status": {"select": {"id": "s1", "name": "Accepted", "color": "green"}},
            "Owner": {"people": [ada.id]},
            "Decided": {"date": {"start": "2024-03-14", "end": None, "time_zone": None}},
            "Related": {"relation": [queue.id]},
            "Tags": {"multi_select": [{"id": "t1", "name": "storage", "color": "blue"}, {"id": "t2", "name": "ledger", "color": "red"}]},
            "Summary": {"rich_text": ["The ledger runs on PostgreSQL 16 with synchronous replication."]},
        },
        by=ada.id,
        blocks=[b("paragraph", "We compared PostgreSQL and CockroachDB.")],
    )  # fmt: skip
    onboarding = fake.add_page(
        "Onboarding",
        parent=handbook.id,
        blocks=[
            b("paragraph", "Welcome aboard."),
            b("synced_block", {"synced_from": {"type": "block_id", "block_id": synced.id}}),
        ],
    )
    old = fake.add_page(
        "Old notes",
        parent=handbook.id,
        blocks=[b("paragraph", "The legacy billing cron ran at midnight UTC.")],
    )
    scratch = fake.add_page(
        "Scratchpad", shared=True, blocks=[b("paragraph", "Lunch on Thursdays is at the canal café.")]
    )
    return Seeded(
        handbook,
        runbooks,
        payments,
        onboarding,
        decisions,
        ledger,
        queue,
        deploy.id,
        synced.id,
        scratch,
        old,
        ada,
        grace,
    )
