"""A fake Confluence (Cloud-shaped REST API under `/wiki`) on loopback, editable by tests.

    async with FakeConfluence() as confluence:
        seed(confluence)                       # spaces ENG and OPS with page trees
        connector = … confluence.base_url …    # http://127.0.0.1:PORT/wiki
        confluence.edit_page(DEPLOY, "<p>new</p>")
        assert confluence.bodies_served == […]

Endpoints, in the real shapes: `/rest/api/user/current`, `/rest/api/space`,
`/rest/api/content/search` (CQL: `type`, `space`, `id`, `ancestor` with `=` and `in`,
`lastmodified >=`, `and`/`or`/parentheses, `order by`), with the `expand`s Lore asks for
(`version`, `body.storage`, `ancestors`, `metadata.labels`, `space`, `history`),
`/rest/api/content/{id}/child/attachment`, and attachment downloads. Listings are paginated
with `_links.next` (relative to `_links.base`), at most `page_size` results a page.

Permissions, in Cloud's shapes and Data Center's: a space's read permission (`/rest/api/space/
{key}?expand=permissions` on Cloud, `/rest/api/space/{key}/permissions` on Data Center 9.1+),
anonymous or for users and groups; a page's view restriction (`expand=restrictions.read.
restrictions.user,…` on listings, `/rest/api/content/{id}/restriction/byOperation[/read]`);
groups and their members (`/rest/api/group/by-name`, `/rest/api/group/{id}/membersByGroupId`
on Cloud, `/rest/api/group/{name}/member` on Data Center); people by id (`/rest/api/user?
accountId=` or `?key=`), with their email unless their profile hides it. `fail_permissions`
answers 500 to every request about permissions or groups (listings still come, restrictions
and all).

Every request needs the account's email and API token (HTTP basic) or, when the fake has
one, a personal access token (bearer); anything else is a 401. `rate_limit(n)` answers the
next n requests 429 with Retry-After. With `media_host`, downloads redirect there (another
origin, as Cloud's media service is), and the redirected request must carry no credentials.
"""

from __future__ import annotations

import base64
import itertools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote, urlencode

from aiohttp import web

from .api_fake import ApiFake, ApiRequest

Json = dict[str, Any]
CONTEXT = "/wiki"
EMAIL = "ada@example.com"
TOKEN = "cloud-api-token-0123456789-SECRET-wxyz"
SEEDED_AT = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)


@dataclass
class FakeSpace:
    key: str
    name: str
    type: str = "global"
    anonymous: bool = True
    """Anonymous users may view it (then it is public)."""
    viewers: list[str] = field(default_factory=list)
    """Who else may view it: `user:ACCOUNT` and `group:NAME`."""


@dataclass
class FakeUser:
    account_id: str
    email: str
    name: str
    email_visible: bool = True
    """Their profile shows their email (Cloud's privacy setting)."""

    @property
    def username(self) -> str:
        return self.email.split("@")[0]

    def cloud(self) -> Json:
        return {
            "type": "known", "accountId": self.account_id, "accountType": "atlassian",
            "email": self.email if self.email_visible else "", "publicName": self.name,
            "displayName": self.name,
        }  # fmt: skip

    def center(self) -> Json:
        """Data Center's shape: a user key and a username (the account id is the user key)."""
        return {
            "type": "known", "username": self.username, "userKey": self.account_id,
            "displayName": self.name, **({"email": self.email} if self.email_visible else {}),
        }  # fmt: skip


@dataclass
class FakeGroup:
    name: str
    id: str
    members: list[str] = field(default_factory=list)


@dataclass
class FakeAttachment:
    id: str
    page_id: str
    title: str
    data: bytes
    media_type: str
    version: int = 1
    download_link: str | None = None
    """An absolute `_links.download` to use instead of the usual relative one (another
    origin, say, to check where credentials go)."""


@dataclass
class FakePage:
    id: str
    space: str
    title: str
    body: str
    parent: str | None = None
    version: int = 1
    when: datetime = SEEDED_AT
    labels: list[str] = field(default_factory=list)
    author: str = "Ada Lovelace"
    editor: str = "Ada Lovelace"
    readers: list[str] = field(default_factory=list)
    """Its view restriction: `user:ACCOUNT` and `group:NAME` (empty: none)."""


class CqlError(ValueError):
    pass


class FakeConfluence(ApiFake[str]):
    def __init__(
        self,
        *,
        email: str = EMAIL,
        token: str = TOKEN,
        pat: str | None = None,
        page_size: int = 3,
        media_host: str | None = None,
    ) -> None:
        super().__init__()
        self.email, self.token, self.pat = email, token, pat
        self.page_size = page_size
        self.media_host = media_host
        self.spaces: dict[str, FakeSpace] = {}
        self.pages: dict[str, FakePage] = {}
        self.attachments: dict[str, FakeAttachment] = {}
        self.bodies_served: list[str] = []
        """Ids of the pages whose body went out, in order (one entry per page per answer)."""
        self.downloads: list[str] = []
        self.users: dict[str, FakeUser] = {}
        self.groups: dict[str, FakeGroup] = {}
        self.fail_permissions = False
        self._ids = itertools.count(1001)

    # -- what tests use ------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        return self.base_url_at("127.0.0.1")

    def base_url_at(self, host: str) -> str:
        return f"http://{host}:{self.port}{CONTEXT}"

    def add_space(self, key: str, name: str, *, anonymous: bool = True, viewers: Iterable[str] = ()) -> None:
        self.spaces[key] = FakeSpace(key, name, anonymous=anonymous, viewers=list(viewers))

    def add_user(self, account_id: str, email: str, name: str, *, email_visible: bool = True) -> FakeUser:
        self.users[account_id] = FakeUser(account_id, email, name, email_visible)
        return self.users[account_id]

    def add_group(self, name: str, members: Iterable[str] = ()) -> FakeGroup:
        group = FakeGroup(name, f"g-{len(self.groups) + 1:04d}-{name}", list(members))
        self.groups[name] = group
        return group

    def restrict(self, page_id: str, *readers: str) -> None:
        """Set the page's view restriction (`user:ACCOUNT`, `group:NAME`); none lifts it.
        Like Confluence, changing restrictions does not change the page's version."""
        self.pages[page_id].readers = list(readers)

    def add_page(
        self,
        space: str,
        title: str,
        body: str,
        *,
        parent: str | None = None,
        labels: Iterable[str] = (),
        when: datetime | None = None,
    ) -> str:
        page_id = str(next(self._ids))
        at = when or SEEDED_AT + timedelta(minutes=len(self.pages))
        self.pages[page_id] = FakePage(page_id, space, title, body, parent, when=at, labels=list(labels))
        return page_id

    def edit_page(self, page_id: str, body: str | None = None, *, title: str | None = None) -> None:
        page = self.pages[page_id]
        page.body = body if body is not None else page.body
        page.title = title or page.title
        page.version += 1
        page.when = datetime.now(UTC)
        page.editor = "Grace Hopper"

    def delete_page(self, page_id: str) -> None:
        """Gone to the trash: no listing shows it (its children go with it)."""
        for child in [p.id for p in self.pages.values() if p.parent == page_id]:
            self.delete_page(child)
        del self.pages[page_id]

    def move_page(self, page_id: str, parent: str | None) -> None:
        """Moved under another parent; like Confluence, the page's version does not change."""
        self.pages[page_id].parent = parent

    def add_attachment(self, page_id: str, title: str, data: bytes, media_type: str) -> str:
        attachment_id = f"att{next(self._ids)}"
        self.attachments[attachment_id] = FakeAttachment(attachment_id, page_id, title, data, media_type)
        return attachment_id

    def rate_limit(self, times: int = 1, retry_after: str = "1") -> None:
        """Answer the next `times` requests 429 with this Retry-After."""
        self.script(retry_after, times)

    def searches(self) -> list[ApiRequest]:
        return [r for r in self.requests.snapshot() if r.path.endswith("/rest/api/content/search")]

    # -- the app -------------------------------------------------------------------------

    def build_app(self) -> web.Application:
        app = web.Application(middlewares=[self._record])
        api = f"{CONTEXT}/rest/api"
        app.router.add_get(f"{api}/user/current", self._current_user)
        app.router.add_get(f"{api}/space", self._spaces)
        app.router.add_get(api + r"/space/{key}", self._space)
        app.router.add_get(api + r"/space/{key}/permissions", self._space_permissions)
        app.router.add_get(api + r"/content/{page_id:\d+}/restriction/byOperation", self._restrictions)
        app.router.add_get(
            api + r"/content/{page_id:\d+}/restriction/byOperation/{operation}", self._restriction
        )
        app.router.add_get(f"{api}/group/by-name", self._group_by_name)
        app.router.add_get(api + r"/group/{group_id}/membersByGroupId", self._members_by_id)
        app.router.add_get(api + r"/group/{name}/member", self._members_by_name)
        app.router.add_get(f"{api}/user", self._user)
        app.router.add_get(f"{api}/content/search", self._search)
        app.router.add_get(api + r"/content/{page_id:\d+}/child/attachment", self._attachments)
        app.router.add_get(CONTEXT + r"/download/attachments/{page_id:\d+}/{name}", self._download)
        app.router.add_get(r"/media/{attachment_id}", self._media)
        return app

    async def _guarded(self, request: web.Request, handler: Any) -> web.StreamResponse:
        retry_after = self.scripted()
        if retry_after is not None:
            return _error(429, "Rate limit exceeded", {"Retry-After": retry_after})
        if not request.path.startswith("/media/") and not self._authorised(
            request.headers.get("Authorization", "")
        ):
            return _error(
                401, "Basic authentication with passwords is deprecated or the credentials are wrong"
            )
        if self.fail_permissions and _asks_permissions(request):
            return _error(500, "Internal server error")
        try:
            result: web.StreamResponse = await handler(request)
        except CqlError as exc:
            return _error(400, f"Could not parse cql : {exc}")
        return result

    def _authorised(self, header: str) -> bool:
        scheme, _, value = header.partition(" ")
        if scheme == "Bearer":
            return self.pat is not None and value == self.pat
        if scheme != "Basic":
            return False
        try:
            email, _, token = base64.b64decode(value).decode().partition(":")
        except ValueError:
            return False
        return (email, token) == (self.email, self.token)

    def _links(self, request: web.Request, start: int, limit: int, total: int) -> Json:
        links: Json = {"base": f"http://{request.host}{CONTEXT}", "context": CONTEXT}
        if start + limit < total:
            query = {k: v for k, v in request.query.items() if k not in ("start", "cursor")}
            query.update(
                start=str(start + limit), cursor=base64.b64encode(f"s{start + limit}".encode()).decode()
            )
            path = request.path.removeprefix(CONTEXT)
            links["next"] = f"{path}?{urlencode(query, quote_via=quote)}"
        return links

    def _paged(self, request: web.Request, items: list[Json], total: int | None = None) -> web.Response:
        """One page of results: `items` from `start` (or, with `total`, `items` is that page
        already, of `total` results)."""
        start = int(request.query.get("start", "0"))
        limit = min(int(request.query.get("limit", "25")), self.page_size)
        page = items[start : start + limit] if total is None else items
        body = {
            "results": page,
            "start": start,
            "limit": limit,
            "size": len(page),
            "_links": self._links(request, start, limit, len(items) if total is None else total),
        }
        return web.json_response(body)

    async def _current_user(self, request: web.Request) -> web.Response:
        return web.json_response(
            {
                "type": "known",
                "accountId": "5b10ac8d82e05b22cc7d4ef5",
                "email": self.email,
                "displayName": "Ada Lovelace",
            }
        )

    async def _spaces(self, request: web.Request) -> web.Response:
        items = [
            {"id": n, "key": s.key, "name": s.name, "type": s.type, "_links": {"webui": f"/spaces/{s.key}"}}
            for n, s in enumerate(self.spaces.values(), 1)
        ]
        return self._paged(request, items)

    async def _search(self, request: web.Request) -> web.Response:
        query = parse_cql(request.query.get("cql", ""))
        found = [p for p in self.pages.values() if query.matches(p, self)]
        found.sort(key=lambda p: (p.when, int(p.id)) if query.order == "lastmodified" else (int(p.id),))
        expand = set(filter(None, request.query.get("expand", "").split(",")))
        start = int(request.query.get("start", "0"))
        limit = min(int(request.query.get("limit", "25")), self.page_size)
        shown = found[start : start + limit]
        for page in shown:
            if "body.storage" in expand:
                self.bodies_served.append(page.id)
        return self._paged(request, [self._content(p, expand, request) for p in shown], total=len(found))

    def ancestors(self, page: FakePage) -> list[FakePage]:
        chain = []
        parent = page.parent
        while parent is not None and parent in self.pages:
            chain.append(self.pages[parent])
            parent = self.pages[parent].parent
        return list(reversed(chain))

    def _content(self, page: FakePage, expand: set[str], request: web.Request) -> Json:
        content: Json = {
            "id": page.id,
            "type": "page",
            "status": "current",
            "title": page.title,
            "_links": {
                "webui": f"/spaces/{page.space}/pages/{page.id}/{quote(page.title.replace(' ', '+'), safe='+')}"
            },
        }
        when = page.when.isoformat(timespec="milliseconds").replace("+00:00", "Z")
        if "version" in expand:
            content["version"] = {"by": {"displayName": page.editor}, "when": when, "number": page.version}
        if "body.storage" in expand:
            content["body"] = {"storage": {"value": page.body, "representation": "storage"}}
        if "ancestors" in expand:
            content["ancestors"] = [
                {"id": a.id, "type": "page", "title": a.title} for a in self.ancestors(page)
            ]
        if "space" in expand:
            space = self.spaces[page.space]
            content["space"] = {"key": space.key, "name": space.name, "type": space.type}
        if "history" in expand:
            content["history"] = {"latest": True, "createdBy": {"type": "known", "displayName": page.author}}
        if (
            "restrictions.read.restrictions.user" in expand
            or "restrictions.read.restrictions.group" in expand
        ):
            content["restrictions"] = {"read": self._read_restriction(page, 0, 200, request)}
        if "metadata.labels" in expand:
            labels = [{"prefix": "global", "name": n, "id": str(i)} for i, n in enumerate(page.labels)]
            content["metadata"] = {
                "labels": {"results": labels, "start": 0, "limit": 200, "size": len(labels)}
            }
        return content

    # -- permissions ---------------------------------------------------------------------

    def _read_restriction(self, page: FakePage, start: int, limit: int, request: web.Request) -> Json:
        users = [
            self._person(r.removeprefix("user:"), request) for r in page.readers if r.startswith("user:")
        ]
        groups = [
            self._group(r.removeprefix("group:"), request) for r in page.readers if r.startswith("group:")
        ]
        return {
            "operation": "read",
            "restrictions": {
                "user": {
                    "results": users[start : start + limit],
                    "start": start,
                    "limit": limit,
                    "size": len(users),
                },
                "group": {
                    "results": groups[start : start + limit],
                    "start": start,
                    "limit": limit,
                    "size": len(groups),
                },
            },
            "_expandable": {"content": f"/rest/api/content/{page.id}"},
        }

    def _person(self, account: str, request: web.Request) -> Json:
        found = self.users.get(account) or FakeUser(account, f"{account}@unknown.example", account)
        return found.center() if _center(request) else found.cloud()

    def _group(self, name: str, request: web.Request) -> Json:
        found = self.groups.get(name)
        return {"type": "group", "name": name, **({"id": found.id} if found and not _center(request) else {})}

    async def _space(self, request: web.Request) -> web.Response:
        space = self.spaces.get(request.match_info["key"])
        if space is None:
            return _error(404, f"No space found with key : {request.match_info['key']}")
        body: Json = {"id": 1, "key": space.key, "name": space.name, "type": space.type}
        if "permissions" in request.query.get("expand", "").split(","):
            body["permissions"] = self._cloud_permissions(space, request)
        return web.json_response(body)

    def _cloud_permissions(self, space: FakeSpace, request: web.Request) -> list[Json]:
        read = {"operation": "read", "targetType": "space"}
        found: list[Json] = []
        if space.anonymous:
            found.append({"id": 1, "operation": read, "anonymousAccess": True, "unlicensedAccess": False})
        users = [
            self._person(v.removeprefix("user:"), request) for v in space.viewers if v.startswith("user:")
        ]
        groups = [
            self._group(v.removeprefix("group:"), request) for v in space.viewers if v.startswith("group:")
        ]
        if users or groups:
            found.append(
                {
                    "id": 2,
                    "operation": read,
                    "subjects": {
                        "user": {"results": users, "size": len(users)},
                        "group": {"results": groups, "size": len(groups)},
                    },
                    "anonymousAccess": False,
                    "unlicensedAccess": False,
                }
            )
        # Permissions that do not let anyone view it, as Confluence lists them too.
        found.append(
            {
                "id": 3,
                "operation": {"operation": "administer", "targetType": "space"},
                "subjects": {
                    "group": {"results": [self._group("confluence-administrators", request)], "size": 1}
                },
                "anonymousAccess": False,
                "unlicensedAccess": False,
            }
        )
        return found

    async def _space_permissions(self, request: web.Request) -> web.Response:
        """Data Center's shape: one entry per (operation, subject)."""
        space = self.spaces.get(request.match_info["key"])
        if space is None:
            return _error(404, f"No space found with key : {request.match_info['key']}")
        read = {"targetType": "space", "operationKey": "read"}
        found: list[Json] = [
            {"operation": {"targetType": "space", "operationKey": "administer"},
             "subject": {"type": "group", "name": "confluence-administrators"}, "spaceKey": space.key},
        ]  # fmt: skip
        if space.anonymous:
            found.append({"operation": read, "subject": {"type": "anonymous"}, "spaceKey": space.key})
        for viewer in space.viewers:
            kind, _, value = viewer.partition(":")
            subject = (
                {"type": "user", "userKey": value} if kind == "user" else {"type": "group", "name": value}
            )
            found.append({"operation": read, "subject": subject, "spaceKey": space.key})
        return web.json_response(found)

    async def _restrictions(self, request: web.Request) -> web.Response:
        page = self.pages.get(request.match_info["page_id"])
        if page is None:
            return _error(404, f"No content found with id: ContentId{{id={request.match_info['page_id']}}}")
        update: Json = {
            "operation": "update",
            "restrictions": {"user": {"results": [], "size": 0}, "group": {"results": [], "size": 0}},
        }
        return web.json_response({"read": self._read_restriction(page, 0, 200, request), "update": update})

    async def _restriction(self, request: web.Request) -> web.Response:
        page = self.pages.get(request.match_info["page_id"])
        if page is None:
            return _error(404, f"No content found with id: ContentId{{id={request.match_info['page_id']}}}")
        if request.match_info["operation"] != "read":
            return web.json_response({"operation": request.match_info["operation"], "restrictions": {}})
        start = int(request.query.get("start", "0"))
        limit = min(int(request.query.get("limit", "100")), 100)
        return web.json_response(self._read_restriction(page, start, limit, request))

    async def _group_by_name(self, request: web.Request) -> web.Response:
        group = self.groups.get(request.query.get("name", ""))
        if group is None:
            return _error(404, "Group not found")
        return web.json_response({"type": "group", "name": group.name, "id": group.id})

    async def _members_by_id(self, request: web.Request) -> web.Response:
        group = next((g for g in self.groups.values() if g.id == request.match_info["group_id"]), None)
        if group is None:
            return _error(404, "Group not found")
        return self._paged(request, [self._person(m, request) for m in group.members])

    async def _members_by_name(self, request: web.Request) -> web.Response:
        group = self.groups.get(request.match_info["name"])
        if group is None:
            return _error(404, "Group not found")
        return self._paged(request, [self._person(m, request) for m in group.members])

    async def _user(self, request: web.Request) -> web.Response:
        account = request.query.get("accountId") or request.query.get("key") or ""
        if account not in self.users:
            return _error(404, "No user found")
        return web.json_response(self._person(account, request))

    async def _attachments(self, request: web.Request) -> web.Response:
        page_id = request.match_info["page_id"]
        if page_id not in self.pages:
            return _error(404, f"No content found with id: ContentId{{id={page_id}}}")
        items = [
            {
                "id": a.id,
                "type": "attachment",
                "title": a.title,
                "metadata": {"mediaType": a.media_type},
                "extensions": {"mediaType": a.media_type, "fileSize": len(a.data)},
                "version": {"number": a.version},
                "_links": {
                    "download": a.download_link
                    or f"/download/attachments/{page_id}/{quote(a.title)}?version={a.version}&api=v2",
                    "webui": f"/pages/viewpageattachments.action?pageId={page_id}&preview={quote(a.title)}",
                },
            }
            for a in self.attachments.values()
            if a.page_id == page_id
        ]
        return self._paged(request, items)

    async def _download(self, request: web.Request) -> web.StreamResponse:
        page_id, name = request.match_info["page_id"], request.match_info["name"]
        attachment = next(
            (a for a in self.attachments.values() if a.page_id == page_id and a.title == name), None
        )
        if attachment is None:
            return _error(404, "not found")
        if self.media_host:
            raise web.HTTPFound(f"http://{self.media_host}:{self.port}/media/{attachment.id}")
        self.downloads.append(attachment.id)
        return web.Response(body=attachment.data, content_type=attachment.media_type)

    async def _media(self, request: web.Request) -> web.StreamResponse:
        attachment = self.attachments.get(request.match_info["attachment_id"])
        if attachment is None or "Authorization" in request.headers:
            return _error(400, "media links are signed; they take no credentials")
        self.downloads.append(attachment.id)
        return web.Response(body=attachment.data, content_type=attachment.media_type)


def _center(request: web.Request) -> bool:
    """Answer in Data Center's shapes: the request signs in with a personal access token."""
    return request.headers.get("Authorization", "").startswith("Bearer ")


def _asks_permissions(request: web.Request) -> bool:
    """A request about who may read what, or who is in a group (not a content listing,
    even one that asks for restrictions on the side)."""
    path = request.path
    return (
        "/restriction/" in path
        or path.endswith("/permissions")
        or "/group/" in path
        or "permissions" in request.query.get("expand", "")
    )


def _error(status: int, message: str, headers: Mapping[str, str] | None = None) -> web.Response:
    return web.json_response({"statusCode": status, "message": message}, status=status, headers=headers)


# -- CQL, the part Lore speaks -----------------------------------------------------------

_TOKEN = re.compile(r'\s*(?:(?P<string>"(?:[^"\\]|\\.)*")|(?P<op>>=|<=|!=|=|>|<|\(|\)|,)|(?P<word>[\w.~-]+))')


@dataclass(frozen=True)
class _Clause:
    field: str
    op: str
    values: tuple[str, ...]

    def matches(self, page: FakePage, fake: FakeConfluence) -> bool:
        if self.field == "type":
            return "page" in self.values
        if self.field == "space":
            return page.space in self.values
        if self.field == "id":
            return page.id in self.values
        if self.field == "ancestor":
            return any(a.id in self.values for a in fake.ancestors(page))
        if self.field == "lastmodified":
            since = datetime.strptime(self.values[0], "%Y-%m-%d %H:%M").replace(tzinfo=UTC)
            return page.when >= since
        raise CqlError(f"unknown field {self.field}")


@dataclass(frozen=True)
class _Bool:
    op: str
    parts: tuple[Any, ...]

    def matches(self, page: FakePage, fake: FakeConfluence) -> bool:
        results = (part.matches(page, fake) for part in self.parts)
        return all(results) if self.op == "and" else any(results)


@dataclass(frozen=True)
class Cql:
    where: Any
    order: str | None

    def matches(self, page: FakePage, fake: FakeConfluence) -> bool:
        return bool(self.where.matches(page, fake))


def parse_cql(text: str) -> Cql:
    tokens = _tokens(text)
    order = None
    lowered = [t.lower() for t in tokens]
    if "order" in lowered:
        at = lowered.index("order")
        if lowered[at + 1 : at + 2] != ["by"]:
            raise CqlError("expected BY after ORDER")
        order = lowered[at + 2] if len(lowered) > at + 2 else None
        tokens = tokens[:at]
    parser = _Parser(tokens)
    where = parser.or_()
    if parser.rest():
        raise CqlError(f"unexpected {parser.rest()[0]}")
    return Cql(where, order)


def _tokens(text: str) -> list[str]:
    tokens, at = [], 0
    while at < len(text.rstrip()):
        match = _TOKEN.match(text, at)
        if match is None:
            raise CqlError(f"unexpected character at {at}")
        tokens.append(match.group(match.lastgroup or ""))
        at = match.end()
    return tokens


class _Parser:
    def __init__(self, tokens: list[str]) -> None:
        self.tokens, self.at = tokens, 0

    def rest(self) -> list[str]:
        return self.tokens[self.at :]

    def take(self) -> str:
        if self.at >= len(self.tokens):
            raise CqlError("unexpected end of query")
        self.at += 1
        return self.tokens[self.at - 1]

    def peek(self) -> str:
        return self.tokens[self.at].lower() if self.at < len(self.tokens) else ""

    def or_(self) -> Any:
        parts = [self.and_()]
        while self.peek() == "or":
            self.take()
            parts.append(self.and_())
        return parts[0] if len(parts) == 1 else _Bool("or", tuple(parts))

    def and_(self) -> Any:
        parts = [self.atom()]
        while self.peek() == "and":
            self.take()
            parts.append(self.atom())
        return parts[0] if len(parts) == 1 else _Bool("and", tuple(parts))

    def atom(self) -> Any:
        if self.peek() == "(":
            self.take()
            inner = self.or_()
            if self.take() != ")":
                raise CqlError("expected )")
            return inner
        name, op = self.take().lower(), self.take().lower()
        if op == "in":
            if self.take() != "(":
                raise CqlError("expected ( after IN")
            values = [self.value()]
            while self.peek() == ",":
                self.take()
                values.append(self.value())
            if self.take() != ")":
                raise CqlError("expected )")
            return _Clause(name, op, tuple(values))
        if op not in ("=", ">="):
            raise CqlError(f"operator {op} is not supported here")
        return _Clause(name, op, (self.value(),))

    def value(self) -> str:
        token = self.take()
        if token.startswith('"'):
            return re.sub(r"\\(.)", r"\1", token[1:-1])
        return token


# -- a seeded site ----------------------------------------------------------------------

DEPLOY_BODY = """<h1>Deploying the API</h1>
<p>We deploy the <strong>payments API</strong> every Tuesday with the blue-green pipeline.</p>
<h2>Steps</h2>
<ol><li>Freeze merges</li><li>Run <code>make release</code></li></ol>
<ac:structured-macro ac:name="code"><ac:parameter ac:name="language">bash</ac:parameter><ac:plain-text-body><![CDATA[./deploy.sh --colour green]]></ac:plain-text-body></ac:structured-macro>
<table><tbody><tr><th>Environment</th><th>Approver</th></tr><tr><td>production</td><td>Grace</td></tr></tbody></table>"""


@dataclass(frozen=True)
class Seeded:
    home: str
    runbooks: str
    deploy: str
    rollback: str
    architecture: str
    gateway: str
    ops_home: str
    oncall: str
    checklist: str
    diagram: str


def seed(fake: FakeConfluence) -> Seeded:
    """Spaces ENG (a tree: Home > Runbooks > Deploy, Rollback; Home > Architecture > API
    Gateway) and OPS (Home > On-call); Deploy has a Markdown attachment and a picture."""
    fake.add_space("ENG", "Engineering")
    fake.add_space("OPS", "Operations")
    home = fake.add_page("ENG", "Engineering Home", "<p>Welcome to the engineering space.</p>")
    runbooks = fake.add_page(
        "ENG", "Runbooks", "<p>How we operate our services, step by step.</p>", parent=home
    )
    deploy = fake.add_page("ENG", "Deploy", DEPLOY_BODY, parent=runbooks, labels=["runbook", "deploy"])
    rollback = fake.add_page(
        "ENG",
        "Rollback",
        "<p>To roll back, switch the load balancer to the previous colour; it takes two minutes.</p>",
        parent=runbooks,
    )
    architecture = fake.add_page("ENG", "Architecture", "<p>How the services fit together.</p>", parent=home)
    gateway = fake.add_page(
        "ENG",
        "API Gateway",
        "<p>The gateway terminates TLS and routes requests by path prefix to each service.</p>",
        parent=architecture,
    )
    ops_home = fake.add_page("OPS", "Operations Home", "<p>Operations lives here.</p>")
    oncall = fake.add_page(
        "OPS", "On-call", "<p>The on-call engineer carries the pager for one week.</p>", parent=ops_home
    )
    checklist = fake.add_attachment(
        deploy,
        "checklist.md",
        b"# Release checklist\n\nConfirm the canary error rate stays under one percent.\n",
        "text/markdown",
    )
    diagram = fake.add_attachment(deploy, "diagram.png", b"\x89PNG\r\n\x1a\n", "image/png")
    return Seeded(
        home, runbooks, deploy, rollback, architecture, gateway, ops_home, oncall, checklist, diagram
    )
