"""A fake GitHub (REST v3 under `/api/v3`, GraphQL at `/api/graphql`, as Enterprise Server
lays them out) on loopback, editable by tests.

    async with FakeGitHub() as github:
        seeded = seed(github)                  # acme/payments (private), acme/website (public)
        … github.base_url …                    # http://127.0.0.1:PORT/api/v3
        github.write("acme/payments", "docs/deploy.md", "…")
        assert github.blobs_served == […]

REST, in the real shapes: `/user`, `/user/repos`, `/repos/{o}/{r}`, git trees (by branch or
SHA, `recursive`, `truncated` past `truncate_over` entries) and blobs (base64), issues with
pull requests among them (`state`, `sort`, `direction`, `since`, `per_page`, `page`), an
issue, its comments, a repository's comments (`since`), who may read a repository
(`/collaborators` by `affiliation`, `/teams`) and a team's members (`/orgs/{org}/teams/{slug}/members`),
and a GitHub App's `/app`,
`/app/installations/{id}`, `POST …/access_tokens` (the JWT checked with the app's public
key, RS256) and `/installation/repositories`. Listings are paginated with `Link` headers.
Every answer carries `X-RateLimit-*` headers and a weak ETag; `If-None-Match` that matches
gets a 304, which costs no rate limit.

GraphQL is executed for real (graphql-core) against a slice of GitHub's schema: a
repository's `discussions` (first/after, orderBy) and `discussion(number:)`, with comments,
replies, answers, categories, labels. Queries that GitHub would refuse are refused (a
connection without `first`/`last`, or more than 100).

Scripts: `secondary_limit(n)` answers the next n requests 403 (or 429) "You have exceeded a
secondary rate limit" with Retry-After; `primary_limit(n)` answers them 403 with
`X-RateLimit-Remaining: 0` and a reset; `fail(path, n)` answers a path 500.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import re
import secrets
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlencode

import graphql
import jwt
from aiohttp import web

from .api_fake import ApiFake, ApiRequest

Json = dict[str, Any]
API = "/api/v3"
GRAPHQL = "/api/graphql"
TOKEN = "github_pat_11ABCDEFG0123456789_SECRETsecretSECRETwxyz"
APP_ID = "4242"
INSTALLATION_ID = "77"
SEEDED_AT = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)
LIMIT = 5000
SECONDARY = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you "
    "reach out to GitHub Support for help, please include the request ID 0000:1111."
)
DOCS = "https://docs.github.com/rest"


def iso(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def blob_sha(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


@dataclass
class FakeComment:
    id: int
    author: str
    body: str
    created: datetime
    updated: datetime


@dataclass
class FakeIssue:
    number: int
    title: str
    body: str
    author: str
    labels: list[str] = field(default_factory=list)
    state: str = "open"
    pull: bool = False
    merged: bool = False
    created: datetime = SEEDED_AT
    updated: datetime = SEEDED_AT
    closed: datetime | None = None
    comments: list[FakeComment] = field(default_factory=list)


@dataclass
class FakeReply:
    id: int
    author: str
    body: str
    created: datetime
    updated: datetime
    replies: list[FakeReply] = field(default_factory=list)


@dataclass
class FakeDiscussion:
    number: int
    title: str
    body: str
    author: str
    category: str = "Q&A"
    labels: list[str] = field(default_factory=list)
    created: datetime = SEEDED_AT
    updated: datetime = SEEDED_AT
    comments: list[FakeReply] = field(default_factory=list)
    answer: int | None = None
    """The id of the comment marked as the answer."""


@dataclass
class FakeRepo:
    id: int
    owner: str
    name: str
    private: bool = True
    visibility: str = "private"
    default_branch: str = "main"
    description: str = ""
    has_discussions: bool = True
    files: dict[str, bytes] = field(default_factory=dict)
    numbers: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    """Issues, pull requests and discussions share one sequence of numbers."""
    issues: dict[int, FakeIssue] = field(default_factory=dict)
    discussions: dict[int, FakeDiscussion] = field(default_factory=dict)
    collaborators: dict[str, str] = field(default_factory=dict)
    """Direct collaborators (outside collaborators and members added to the repository), by
    login: their role (`read`, `triage`, `write`, `maintain`, `admin`)."""
    teams: dict[str, str] = field(default_factory=dict)
    """The organisation's teams given access, by slug: their role."""

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"


class FakeGitHub(ApiFake[tuple[str, int, str]]):
    """Scripted answers: (`secondary` | `primary`, status, Retry-After or seconds to the reset)."""

    def __init__(self, *, token: str = TOKEN, app_key: Any = None, token_lifetime: int = 3600) -> None:
        super().__init__()
        self.token = token
        self.app_public_key = app_key
        """The GitHub App's public key (cryptography), when the fake has an app."""
        self.token_lifetime = token_lifetime
        self.installation_tokens: dict[str, float] = {}
        self.repos: dict[str, FakeRepo] = {}
        self.truncate_over: int | None = None
        self.link_base: str | None = None
        """Where `Link` headers point instead of this server (another origin, to check that
        credentials never follow them)."""
        self.redirects: dict[str, str] = {}
        """API paths answered 301 to the given address (a renamed repository; elsewhere)."""
        self.blobs_served: list[str] = []
        """Paths of the blobs whose content went out."""
        self.issue_bodies_served: list[int] = []
        """Numbers of the issues whose JSON (body included) went out, once per answer."""
        self.teams: dict[tuple[str, str], list[str]] = {}
        """Members of each team, by (organisation, team slug)."""
        self.verified_emails: dict[tuple[str, str], list[str]] = {}
        """A member's emails on an organisation's verified domains, by (organisation, login):
        what GraphQL's `organizationVerifiedDomainEmails` answers (for mapping Slack users)."""
        self.remaining = {"core": LIMIT, "graphql": LIMIT}
        self.reset_at = int(time.time()) + 3600
        self._ids = itertools.count(1001)
        self._schema = graphql.build_schema(SCHEMA)

    # -- what tests use ------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}{API}"

    @property
    def web_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def add_repo(
        self, full_name: str, *, private: bool = True, description: str = "", **kwargs: Any
    ) -> FakeRepo:
        owner, name = full_name.split("/")
        repo = FakeRepo(
            next(self._ids),
            owner,
            name,
            private=private,
            visibility="private" if private else "public",
            description=description,
            **kwargs,
        )
        self.repos[full_name.lower()] = repo
        return repo

    def add_team(self, org: str, slug: str, members: Iterable[str]) -> None:
        self.teams[(org, slug)] = list(members)

    def share(
        self,
        full_name: str,
        *,
        users: Mapping[str, str] | None = None,
        teams: Mapping[str, str] | None = None,
    ) -> None:
        """Give people (login → role) and the owner's teams (slug → role) access to a repository."""
        repo = self.repo(full_name)
        repo.collaborators.update(users or {})
        repo.teams.update(teams or {})

    def unshare(self, full_name: str, *, users: Iterable[str] = (), teams: Iterable[str] = ()) -> None:
        repo = self.repo(full_name)
        for login in users:
            repo.collaborators.pop(login, None)
        for slug in teams:
            repo.teams.pop(slug, None)

    def repo(self, full_name: str) -> FakeRepo:
        return self.repos[full_name.lower()]

    def write(self, full_name: str, path: str, text: str | bytes) -> None:
        self.repo(full_name).files[path] = text.encode() if isinstance(text, str) else text

    def delete(self, full_name: str, path: str) -> None:
        del self.repo(full_name).files[path]

    def rename(self, full_name: str, old: str, new: str) -> None:
        files = self.repo(full_name).files
        files[new] = files.pop(old)

    def add_issue(
        self,
        full_name: str,
        title: str,
        body: str,
        *,
        author: str = "ada",
        labels: Iterable[str] = (),
        state: str = "open",
        pull: bool = False,
        created: datetime | None = None,
    ) -> FakeIssue:
        repo = self.repo(full_name)
        number = next(repo.numbers)
        at = created or SEEDED_AT + timedelta(minutes=number)
        issue = FakeIssue(number, title, body, author, list(labels), state, pull, created=at, updated=at)
        if state == "closed":
            issue.closed = at
        repo.issues[number] = issue
        return issue

    def comment(
        self, full_name: str, number: int, author: str, body: str, *, when: datetime | None = None
    ) -> FakeComment:
        issue = self.repo(full_name).issues[number]
        at = when or max(issue.updated, SEEDED_AT) + timedelta(minutes=1)
        comment = FakeComment(next(self._ids), author, body, at, at)
        issue.comments.append(comment)
        issue.updated = max(issue.updated, at)  # a new comment updates its issue
        return comment

    def edit_comment(self, full_name: str, number: int, comment_id: int, body: str) -> None:
        """Like GitHub: the comment's `updated_at` moves, its issue's does not."""
        for comment in self.repo(full_name).issues[number].comments:
            if comment.id == comment_id:
                comment.body, comment.updated = body, datetime.now(UTC)

    def delete_comment(self, full_name: str, number: int, comment_id: int) -> None:
        issue = self.repo(full_name).issues[number]
        issue.comments = [c for c in issue.comments if c.id != comment_id]

    def edit_issue(
        self, full_name: str, number: int, *, title: str | None = None, state: str | None = None
    ) -> None:
        issue = self.repo(full_name).issues[number]
        issue.title = title or issue.title
        if state:
            issue.state = state
            issue.closed = datetime.now(UTC) if state == "closed" else None
        issue.updated = datetime.now(UTC)

    def delete_issue(self, full_name: str, number: int) -> None:
        del self.repo(full_name).issues[number]

    def add_discussion(
        self, full_name: str, title: str, body: str, *, author: str = "ada", category: str = "Q&A"
    ) -> FakeDiscussion:
        repo = self.repo(full_name)
        number = next(repo.numbers)
        at = SEEDED_AT + timedelta(minutes=number)
        discussion = FakeDiscussion(number, title, body, author, category, created=at, updated=at)
        repo.discussions[number] = discussion
        return discussion

    def reply(
        self,
        full_name: str,
        number: int,
        author: str,
        body: str,
        *,
        to: int | None = None,
        answer: bool = False,
    ) -> FakeReply:
        discussion = self.repo(full_name).discussions[number]
        at = discussion.updated + timedelta(minutes=1)
        reply = FakeReply(next(self._ids), author, body, at, at)
        if to is None:
            discussion.comments.append(reply)
        else:
            next(c for c in discussion.comments if c.id == to).replies.append(reply)
        discussion.updated = at
        if answer:
            discussion.answer = reply.id
        return reply

    def edit_reply(self, full_name: str, number: int, reply_id: int, body: str) -> None:
        for comment in self.repo(full_name).discussions[number].comments:
            for reply in (comment, *comment.replies):
                if reply.id == reply_id:
                    reply.body, reply.updated = body, datetime.now(UTC)

    def delete_discussion(self, full_name: str, number: int) -> None:
        del self.repo(full_name).discussions[number]

    def secondary_limit(
        self, times: int = 1, retry_after: str = "3", status: int = 403, *, after: int = 0
    ) -> None:
        """The `times` requests after the next `after` ones answer a secondary rate limit."""
        self.script(("secondary", status, retry_after), times, after=after)

    def primary_limit(self, times: int = 1, reset_in: int = 30) -> None:
        self.script(("primary", 403, str(reset_in)), times)

    def fail(self, path: str, times: int = 1_000_000) -> None:
        """Answer requests to `path` (under /api/v3) 500."""
        super().fail(API + path, times)

    def revoke_installation_tokens(self) -> None:
        self.installation_tokens.clear()

    def api_requests(self) -> list[ApiRequest]:
        return [r for r in self.requests.snapshot() if r.path.startswith(("/api/",))]

    def counted(self) -> list[ApiRequest]:
        """Requests that cost rate limit (not 304s)."""
        return [r for r in self.api_requests() if r.status != 304]

    # -- the app -------------------------------------------------------------------------

    def build_app(self) -> web.Application:
        app = web.Application(middlewares=[self._record])
        get = app.router.add_get
        get(f"{API}/user", self._user)
        get(f"{API}/user/repos", self._user_repos)
        get(f"{API}/app", self._app)
        get(API + r"/app/installations/{id}", self._installation)
        app.router.add_post(API + r"/app/installations/{id}/access_tokens", self._access_token)
        get(f"{API}/installation/repositories", self._installation_repos)
        repo = API + r"/repos/{owner}/{name}"
        get(repo, self._repo)
        get(repo + r"/git/trees/{ref:.+}", self._tree)
        get(repo + r"/git/blobs/{sha}", self._blob)
        get(repo + "/issues", self._issues)
        get(repo + "/issues/comments", self._repo_comments)
        get(repo + r"/issues/{number:\d+}", self._issue)
        get(repo + r"/issues/{number:\d+}/comments", self._comments)
        get(repo + "/collaborators", self._collaborators)
        get(repo + "/teams", self._repo_teams)
        get(API + r"/orgs/{org}/teams/{slug}/members", self._team_members)
        app.router.add_post(GRAPHQL, self._graphql)
        return app

    async def _guarded(self, request: web.Request, handler: Any) -> web.StreamResponse:
        resource = "graphql" if request.path == GRAPHQL else "core"
        script = self.scripted()
        if script is not None:
            kind, status, value = script
            if kind == "secondary":
                return self._error(status, SECONDARY, resource, {"Retry-After": value})
            reset = int(time.time()) + int(value)
            headers = {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(reset)}
            return self._error(403, "API rate limit exceeded for user ID 1.", resource, headers)
        if request.path in self.redirects:
            return web.Response(status=301, headers={"Location": self.redirects[request.path]})
        if self.failing(request.path):
            return self._error(500, "Server Error", resource)
        if not self._authorised(request):
            return self._error(401, "Bad credentials", resource)
        response: web.StreamResponse = await handler(request)
        if not isinstance(response, web.Response) or response.status >= 300 or request.method != "GET":
            self._spend(resource, response)
            return response
        etag = 'W/"' + hashlib.sha256(response.body or b"").hexdigest() + '"'  # type: ignore[arg-type]
        response.headers["ETag"] = etag
        if request.headers.get("If-None-Match") == etag:
            not_modified = web.Response(status=304, headers={"ETag": etag})
            self._limit_headers(resource, not_modified)  # a 304 costs nothing
            return not_modified
        self._note_bodies(request, response)
        self._spend(resource, response)
        return response

    def _authorised(self, request: web.Request) -> bool:
        scheme, _, value = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() not in ("bearer", "token"):
            return False
        if request.path.startswith(f"{API}/app/installations/") or request.path == f"{API}/app":
            return self._jwt_ok(value)
        if value == self.token:
            return True
        expiry = self.installation_tokens.get(value)
        return expiry is not None and expiry > time.time()

    def _jwt_ok(self, token: str) -> bool:
        if self.app_public_key is None:
            return False
        try:
            claims = jwt.decode(
                token, self.app_public_key, algorithms=["RS256"], options={"require": ["iat", "exp", "iss"]}
            )
        except jwt.PyJWTError:
            return False
        return str(claims["iss"]) == APP_ID and claims["exp"] - time.time() <= 600

    def _spend(self, resource: str, response: web.StreamResponse) -> None:
        self.remaining[resource] = max(0, self.remaining[resource] - 1)
        self._limit_headers(resource, response)

    def _limit_headers(self, resource: str, response: web.StreamResponse) -> None:
        response.headers.update(
            {
                "X-RateLimit-Limit": str(LIMIT),
                "X-RateLimit-Remaining": str(self.remaining[resource]),
                "X-RateLimit-Used": str(LIMIT - self.remaining[resource]),
                "X-RateLimit-Reset": str(self.reset_at),
                "X-RateLimit-Resource": resource,
            }
        )

    def _error(
        self, status: int, message: str, resource: str, headers: Mapping[str, str] | None = None
    ) -> web.Response:
        response = web.json_response(
            {"message": message, "documentation_url": DOCS, "status": str(status)}, status=status
        )
        self._limit_headers(resource, response)
        response.headers.update(headers or {})
        return response

    def _note_bodies(self, request: web.Request, response: web.Response) -> None:
        path = request.path
        if "/git/blobs/" in path:
            repo, sha = self._found(request), request.match_info["sha"]
            self.blobs_served += [p for p, data in repo.files.items() if blob_sha(data) == sha][:1]
        elif re.search(r"/issues(?:/\d+)?$", path):
            data = json.loads(response.body or b"[]")  # type: ignore[arg-type]
            for issue in data if isinstance(data, list) else [data]:
                self.issue_bodies_served.append(int(issue["number"]))

    def _paged(self, request: web.Request, items: list[Json]) -> web.Response:
        per_page = max(1, min(int(request.query.get("per_page", "30")), 100))
        page = max(1, int(request.query.get("page", "1")))
        last = max(1, -(-len(items) // per_page))
        response = web.json_response(items[(page - 1) * per_page : page * per_page])
        links = []
        for rel, number in (("next", page + 1), ("last", last), ("prev", page - 1), ("first", 1)):
            if (rel in ("next", "last") and page < last) or (rel in ("prev", "first") and page > 1):
                query = {**request.query, "page": str(number)}
                base = self.link_base or f"http://{request.host}"
                links.append(f'<{base}{request.path}?{urlencode(query)}>; rel="{rel}"')
        if links:
            response.headers["Link"] = ", ".join(links)
        return response

    def _found(self, request: web.Request) -> FakeRepo:
        repo = self.repos.get(f"{request.match_info['owner']}/{request.match_info['name']}".lower())
        if repo is None:
            raise web.HTTPNotFound(
                text=json.dumps({"message": "Not Found", "documentation_url": DOCS, "status": "404"}),
                content_type="application/json",
            )
        return repo

    # -- REST ------------------------------------------------------------------------------

    def _user_json(self, login: str) -> Json:
        return {
            "login": login,
            "id": sum(map(ord, login)),
            "type": "User",
            "html_url": f"{self.web_url}/{login}",
        }

    def _repo_json(self, repo: FakeRepo) -> Json:
        api = f"{self.base_url}/repos/{repo.full_name}"
        return {
            "id": repo.id,
            "node_id": f"R_{repo.id}",
            "name": repo.name,
            "full_name": repo.full_name,
            "private": repo.private,
            "visibility": repo.visibility,
            "owner": {**self._user_json(repo.owner), "type": "Organization"},
            "html_url": f"{self.web_url}/{repo.full_name}",
            "description": repo.description or None,
            "fork": False,
            "url": api,
            "default_branch": repo.default_branch,
            "has_issues": True,
            "has_discussions": repo.has_discussions,
            "size": sum(len(d) for d in repo.files.values()) // 1024 + 1,
            "archived": False,
            "permissions": {"admin": False, "maintain": False, "push": False, "triage": False, "pull": True},
        }

    async def _user(self, request: web.Request) -> web.Response:
        if request.headers.get("Authorization", "").split(" ")[-1] != self.token:
            return self._error(403, "Resource not accessible by integration", "core")
        return web.json_response({**self._user_json("ada"), "name": "Ada Lovelace"})

    async def _user_repos(self, request: web.Request) -> web.Response:
        repos = sorted(self.repos.values(), key=lambda r: r.full_name.lower())
        return self._paged(request, [self._repo_json(r) for r in repos])

    async def _app(self, request: web.Request) -> web.Response:
        return web.json_response(
            {
                "id": int(APP_ID),
                "slug": "lore-reader",
                "name": "Lore Reader",
                "owner": self._user_json("acme"),
            }
        )

    async def _installation(self, request: web.Request) -> web.Response:
        if request.match_info["id"] != INSTALLATION_ID:
            return self._error(404, "Not Found", "core")
        return web.json_response(
            {
                "id": int(INSTALLATION_ID),
                "account": self._user_json("acme"),
                "app_id": int(APP_ID),
                "target_type": "Organization",
            }
        )

    async def _access_token(self, request: web.Request) -> web.Response:
        if request.match_info["id"] != INSTALLATION_ID:
            return self._error(404, "Not Found", "core")
        token = "ghs_" + secrets.token_hex(18)
        expires = time.time() + self.token_lifetime
        self.installation_tokens[token] = expires
        body = {
            "token": token,
            "expires_at": iso(datetime.fromtimestamp(expires, UTC)),
            "permissions": {"contents": "read", "issues": "read", "discussions": "read", "metadata": "read"},
            "repository_selection": "all",
        }
        return web.json_response(body, status=201)

    async def _installation_repos(self, request: web.Request) -> web.Response:
        repos = sorted(self.repos.values(), key=lambda r: r.full_name.lower())
        paged = self._paged(request, [self._repo_json(r) for r in repos])
        body = {"total_count": len(repos), "repositories": json.loads(paged.body or b"[]")}  # type: ignore[arg-type]
        response = web.json_response(body)
        if "Link" in paged.headers:
            response.headers["Link"] = paged.headers["Link"]
        return response

    async def _repo(self, request: web.Request) -> web.Response:
        return web.json_response(self._repo_json(self._found(request)))

    def _trees(self, repo: FakeRepo) -> tuple[str, dict[str, list[Json]]]:
        """The root tree's SHA, and every tree's entries by its SHA."""
        folders: dict[str, dict[str, Any]] = {"": {}}
        for path in repo.files:
            parts = path.split("/")
            for depth in range(1, len(parts)):
                folders.setdefault("/".join(parts[:depth]), {})
        by_sha: dict[str, list[Json]] = {}

        def build(prefix: str) -> str:
            entries = []
            children = sorted(
                {
                    p[len(prefix) :].split("/")[0]
                    for p in [*repo.files, *folders]
                    if p.startswith(prefix) and p != prefix.rstrip("/") and p[len(prefix) :]
                }
            )
            for name in children:
                path = prefix + name
                if path in repo.files:
                    data = repo.files[path]
                    entries.append(
                        {
                            "path": name,
                            "mode": "100644",
                            "type": "blob",
                            "sha": blob_sha(data),
                            "size": len(data),
                        }
                    )
                else:
                    entries.append({"path": name, "mode": "040000", "type": "tree", "sha": build(path + "/")})
            sha = hashlib.sha1(json.dumps(entries).encode(), usedforsecurity=False).hexdigest()
            by_sha[sha] = entries
            return sha

        return build(""), by_sha

    async def _tree(self, request: web.Request) -> web.Response:
        repo = self._found(request)
        ref = request.match_info["ref"]
        root, trees = self._trees(repo)
        sha = root if ref == repo.default_branch else ref
        if sha not in trees:
            return self._error(404, "Not Found", "core")
        entries = trees[sha]
        if request.query.get("recursive") not in (
            None,
            "",
        ):  # the limit GitHub truncates at: recursive listings
            entries = self._flatten(trees, sha, "")
        api = f"{self.base_url}/repos/{repo.full_name}/git"
        for entry in entries:
            kind = "blobs" if entry["type"] == "blob" else "trees"
            entry["url"] = f"{api}/{kind}/{entry['sha']}"
        recursive = request.query.get("recursive") not in (None, "")
        truncated = recursive and self.truncate_over is not None and len(entries) > self.truncate_over
        if truncated and self.truncate_over is not None:
            entries = entries[: self.truncate_over]
        return web.json_response(
            {"sha": sha, "url": f"{api}/trees/{sha}", "tree": entries, "truncated": truncated}
        )

    def _flatten(self, trees: dict[str, list[Json]], sha: str, prefix: str) -> list[Json]:
        found = []
        for entry in trees[sha]:
            found.append({**entry, "path": prefix + entry["path"]})
            if entry["type"] == "tree":
                found += self._flatten(trees, entry["sha"], prefix + entry["path"] + "/")
        return found

    async def _blob(self, request: web.Request) -> web.Response:
        repo = self._found(request)
        sha = request.match_info["sha"]
        for data in repo.files.values():
            if blob_sha(data) == sha:
                content = base64.encodebytes(data).decode()  # GitHub wraps it at 60 characters, we at 76
                body = {"sha": sha, "node_id": f"B_{sha[:8]}", "size": len(data), "url": str(request.url),
                        "content": content, "encoding": "base64"}  # fmt: skip
                return web.json_response(body)
        return self._error(404, "Not Found", "core")

    def _issue_json(self, repo: FakeRepo, issue: FakeIssue) -> Json:
        api = f"{self.base_url}/repos/{repo.full_name}/issues/{issue.number}"
        kind = "pull" if issue.pull else "issues"
        body: Json = {
            "url": api,
            "repository_url": f"{self.base_url}/repos/{repo.full_name}",
            "comments_url": f"{api}/comments",
            "html_url": f"{self.web_url}/{repo.full_name}/{kind}/{issue.number}",
            "id": 900000 + issue.number,
            "node_id": f"I_{issue.number}",
            "number": issue.number,
            "title": issue.title,
            "user": self._user_json(issue.author),
            "labels": [{"id": n, "name": name, "color": "ededed"} for n, name in enumerate(issue.labels)],
            "state": issue.state,
            "locked": False,
            "comments": len(issue.comments),
            "created_at": iso(issue.created),
            "updated_at": iso(issue.updated),
            "closed_at": iso(issue.closed) if issue.closed else None,
            "author_association": "MEMBER",
            "body": issue.body,
        }
        if issue.pull:
            body["pull_request"] = {
                "url": f"{self.base_url}/repos/{repo.full_name}/pulls/{issue.number}",
                "html_url": body["html_url"],
                "merged_at": iso(issue.updated) if issue.merged else None,
            }
        return body

    async def _issues(self, request: web.Request) -> web.Response:
        repo = self._found(request)
        query = request.query
        state = query.get("state", "open")
        found = [i for i in repo.issues.values() if state == "all" or i.state == state]
        if "since" in query:
            since = datetime.fromisoformat(query["since"].replace("Z", "+00:00"))
            found = [i for i in found if i.updated >= since]
        sort = query.get("sort", "created")
        found.sort(key=lambda i: (i.updated if sort == "updated" else i.created, i.number))
        if query.get("direction", "desc") == "desc":
            found.reverse()
        return self._paged(request, [self._issue_json(repo, i) for i in found])

    async def _issue(self, request: web.Request) -> web.Response:
        repo = self._found(request)
        issue = repo.issues.get(int(request.match_info["number"]))
        if issue is None:
            return self._error(404, "Not Found", "core")
        return web.json_response(self._issue_json(repo, issue))

    def _comment_json(self, repo: FakeRepo, issue: FakeIssue, comment: FakeComment) -> Json:
        issue_html = f"{self.web_url}/{repo.full_name}/{'pull' if issue.pull else 'issues'}/{issue.number}"
        return {
            "id": comment.id,
            "node_id": f"IC_{comment.id}",
            "url": f"{self.base_url}/repos/{repo.full_name}/issues/comments/{comment.id}",
            "html_url": f"{issue_html}#issuecomment-{comment.id}",
            "body": comment.body,
            "user": self._user_json(comment.author),
            "created_at": iso(comment.created),
            "updated_at": iso(comment.updated),
            "issue_url": f"{self.base_url}/repos/{repo.full_name}/issues/{issue.number}",
            "author_association": "MEMBER",
        }

    async def _comments(self, request: web.Request) -> web.Response:
        repo = self._found(request)
        issue = repo.issues.get(int(request.match_info["number"]))
        if issue is None:
            return self._error(404, "Not Found", "core")
        return self._paged(request, [self._comment_json(repo, issue, c) for c in issue.comments])

    async def _repo_comments(self, request: web.Request) -> web.Response:
        repo = self._found(request)
        found = [(i, c) for i in repo.issues.values() for c in i.comments]
        if "since" in request.query:
            since = datetime.fromisoformat(request.query["since"].replace("Z", "+00:00"))
            found = [(i, c) for i, c in found if c.updated >= since]
        by_updated = request.query.get("sort") == "updated"
        found.sort(key=lambda pair: pair[1].updated if by_updated else pair[1].created)
        if request.query.get("direction") == "desc":
            found.reverse()
        return self._paged(request, [self._comment_json(repo, i, c) for i, c in found])

    def _member_roles(self, repo: FakeRepo) -> dict[str, str]:
        """Everyone with access to the repository through its teams, with the best role."""
        found: dict[str, str] = {}
        for slug, role in repo.teams.items():
            for login in self.teams.get((repo.owner, slug), []):
                if login not in found or ROLES.index(role) > ROLES.index(found[login]):
                    found[login] = role
        return found

    async def _collaborators(self, request: web.Request) -> web.Response:
        """`affiliation`: `outside` (not members of the organisation), `direct` (given access to
        the repository itself), `all` (the default: through teams too)."""
        repo = self._found(request)
        affiliation = request.query.get("affiliation", "all")
        if affiliation not in ("outside", "direct", "all"):
            return self._error(422, "Validation Failed", "core")
        members = {login for (org, _), logins in self.teams.items() if org == repo.owner for login in logins}
        people = dict(repo.collaborators)
        if affiliation == "outside":
            people = {login: role for login, role in people.items() if login not in members}
        elif affiliation == "all":
            for login, role in self._member_roles(repo).items():
                if login not in people or ROLES.index(role) > ROLES.index(people[login]):
                    people[login] = role
        listed = [
            {
                **self._user_json(login),
                "site_admin": False,
                "permissions": _permissions(role),
                "role_name": role,
            }
            for login, role in sorted(people.items())
        ]
        return self._paged(request, listed)

    async def _repo_teams(self, request: web.Request) -> web.Response:
        repo = self._found(request)
        listed = []
        for slug, role in sorted(repo.teams.items()):
            url = f"{self.base_url}/orgs/{repo.owner}/teams/{slug}"
            listed.append(
                {
                    "id": sum(map(ord, slug)),
                    "node_id": f"T_{slug}",
                    "url": url,
                    "html_url": f"{self.web_url}/orgs/{repo.owner}/teams/{slug}",
                    "name": slug.replace("-", " ").title(),
                    "slug": slug,
                    "description": None,
                    "privacy": "closed",
                    "notification_setting": "notifications_enabled",
                    "permission": LEGACY_PERMISSION[role],
                    "permissions": _permissions(role),
                    "members_url": url + "/members{/member}",
                    "repositories_url": url + "/repos",
                    "parent": None,
                }
            )
        return self._paged(request, listed)

    async def _team_members(self, request: web.Request) -> web.Response:
        members = self.teams.get((request.match_info["org"], request.match_info["slug"]))
        if members is None:
            raise web.HTTPNotFound(
                text=json.dumps({"message": "Not Found", "documentation_url": DOCS, "status": "404"}),
                content_type="application/json",
            )
        return self._paged(request, [{**self._user_json(m), "site_admin": False} for m in members])

    # -- GraphQL ---------------------------------------------------------------------------

    async def _graphql(self, request: web.Request) -> web.Response:
        try:
            payload = await request.json()
        except ValueError:
            return self._error(400, "Problems parsing JSON", "graphql")
        result = await graphql.graphql(
            self._schema,
            str(payload.get("query") or ""),
            root_value={"repository": self._gql_repository, "user": self._gql_user},
            variable_values=payload.get("variables") or {},
        )
        body: Json = {}
        if result.data is not None:
            body["data"] = result.data
        if result.errors:
            body["errors"] = [{"message": e.message, "type": _type(e), "path": e.path} for e in result.errors]
        return web.json_response(body)

    def _gql_repository(self, info: Any, owner: str, name: str) -> Json | None:
        repo = self.repos.get(f"{owner}/{name}".lower())
        if repo is None:
            raise graphql.GraphQLError(
                f"Could not resolve to a Repository with the name '{owner}/{name}'.",
                extensions={"type": "NOT_FOUND"},
            )
        return {
            "name": repo.name,
            "nameWithOwner": repo.full_name,
            "hasDiscussionsEnabled": repo.has_discussions,
            "discussions": lambda info, **args: self._gql_discussions(repo, args),
            "discussion": lambda info, number: self._gql_discussion(repo, repo.discussions.get(number)),
        }

    def _gql_user(self, info: Any, login: str) -> Json:
        def emails(info: Any, **args: str) -> list[str]:
            return self.verified_emails.get((args["login"], login), [])

        return {"login": login, "organizationVerifiedDomainEmails": emails}

    def _gql_discussions(self, repo: FakeRepo, args: Mapping[str, Any]) -> Json:
        order = args.get("orderBy") or {"field": "UPDATED_AT", "direction": "DESC"}
        found = sorted(
            repo.discussions.values(),
            key=lambda d: (d.updated if order["field"] == "UPDATED_AT" else d.created, d.number),
            reverse=order["direction"] == "DESC",
        )
        return _connection([self._gql_discussion(repo, d) for d in found], args)

    def _gql_discussion(self, repo: FakeRepo, discussion: FakeDiscussion | None) -> Json | None:
        if discussion is None:
            return None
        url = f"{self.web_url}/{repo.full_name}/discussions/{discussion.number}"
        answer = next((c for c in discussion.comments if c.id == discussion.answer), None)
        return {
            "id": f"D_{discussion.number}",
            "number": discussion.number,
            "title": discussion.title,
            "body": discussion.body,
            "url": url,
            "createdAt": iso(discussion.created),
            "updatedAt": iso(discussion.updated),
            "author": {"login": discussion.author, "__typename": "User"},
            "category": {"name": discussion.category},
            "labels": lambda info, **args: _connection([{"name": n} for n in discussion.labels], args),
            "answer": self._gql_comment(url, answer, discussion) if answer else None,
            "answerChosenAt": iso(answer.updated) if answer else None,
            "comments": lambda info, **args: _connection(
                [self._gql_comment(url, c, discussion) for c in discussion.comments], args
            ),
        }

    def _gql_comment(self, url: str, comment: FakeReply, discussion: FakeDiscussion) -> Json:
        return {
            "id": f"DC_{comment.id}",
            "url": f"{url}#discussioncomment-{comment.id}",
            "body": comment.body,
            "createdAt": iso(comment.created),
            "updatedAt": iso(comment.updated),
            "isAnswer": comment.id == discussion.answer,
            "author": {"login": comment.author, "__typename": "User"},
            "replies": lambda info, **args: _connection(
                [self._gql_comment(url, r, discussion) for r in comment.replies], args
            ),
        }


ROLES = ["read", "triage", "write", "maintain", "admin"]
LEGACY_PERMISSION = {
    "read": "pull",
    "triage": "triage",
    "write": "push",
    "maintain": "maintain",
    "admin": "admin",
}


def _permissions(role: str) -> dict[str, bool]:
    """A role as the `permissions` object of a collaborator or team: each it includes."""
    held = ROLES.index(role)
    return {LEGACY_PERMISSION[r]: ROLES.index(r) <= held for r in ROLES}


def _connection(nodes: list[Any], args: Mapping[str, Any]) -> Json:
    """A GraphQL connection page, refused as GitHub refuses: no `first`/`last`, or over 100."""
    first, last = args.get("first"), args.get("last")
    if first is None and last is None:
        raise graphql.GraphQLError(
            "You must provide a `first` or `last` value to properly paginate the connection."
        )
    if (first or 0) > 100 or (last or 0) > 100:
        raise graphql.GraphQLError("Requesting more than 100 records on the connection is not allowed.")
    start = int(base64.b64decode(args["after"]).decode().split(":")[1]) + 1 if args.get("after") else 0
    page = nodes[start : start + first] if first is not None else nodes[max(0, len(nodes) - (last or 0)) :]
    end = start + len(page) - 1
    cursor = base64.b64encode(f"cursor:{end}".encode()).decode()
    return {
        "nodes": page,
        "totalCount": len(nodes),
        "pageInfo": {
            "hasNextPage": first is not None and start + len(page) < len(nodes),
            "endCursor": cursor if page else None,
            "hasPreviousPage": start > 0,
            "startCursor": None,
        },
    }


def _type(error: graphql.GraphQLError) -> str | None:
    return str((error.extensions or {}).get("type") or "") or None


SCHEMA = """
scalar DateTime
scalar URI

type Query {
  repository(owner: String!, name: String!): Repository
  user(login: String!): User
}

interface Actor { login: String! }
type User implements Actor {
  login: String!
  organizationVerifiedDomainEmails(login: String!): [String!]!
}

type PageInfo { hasNextPage: Boolean! endCursor: String hasPreviousPage: Boolean! startCursor: String }

enum DiscussionOrderField { CREATED_AT UPDATED_AT }
enum OrderDirection { ASC DESC }
input DiscussionOrder { field: DiscussionOrderField! direction: OrderDirection! }

type Repository {
  name: String!
  nameWithOwner: String!
  hasDiscussionsEnabled: Boolean!
  discussions(first: Int, after: String, last: Int, before: String, categoryId: ID, answered: Boolean,
              orderBy: DiscussionOrder): DiscussionConnection!
  discussion(number: Int!): Discussion
}

type DiscussionConnection { nodes: [Discussion] pageInfo: PageInfo! totalCount: Int! }
type DiscussionCategory { name: String! }
type Label { name: String! }
type LabelConnection { nodes: [Label] pageInfo: PageInfo! totalCount: Int! }

type Discussion {
  id: ID!
  number: Int!
  title: String!
  body: String!
  url: URI!
  createdAt: DateTime!
  updatedAt: DateTime!
  author: Actor
  category: DiscussionCategory!
  labels(first: Int, after: String, last: Int, before: String): LabelConnection
  answer: DiscussionComment
  answerChosenAt: DateTime
  comments(first: Int, after: String, last: Int, before: String): DiscussionCommentConnection!
}

type DiscussionComment {
  id: ID!
  url: URI!
  body: String!
  createdAt: DateTime!
  updatedAt: DateTime!
  isAnswer: Boolean!
  author: Actor
  replies(first: Int, after: String, last: Int, before: String): DiscussionCommentConnection!
}

type DiscussionCommentConnection { nodes: [DiscussionComment] pageInfo: PageInfo! totalCount: Int! }
"""


# -- a seeded organisation ----------------------------------------------------------------

DEPLOY = """# Deploying the payments API

Production deploys of the payments API go out every Tuesday through the blue-green pipeline.

## Steps

1. Freeze merges at noon.
2. Run `make release` and watch the canary for fifteen minutes.
"""


@dataclass(frozen=True)
class Seeded:
    repo: str
    timeout_issue: int
    timeout_comment: int
    pull: int
    closed_issue: int
    discussion: int
    answer: int


def seed(fake: FakeGitHub) -> Seeded:
    """acme/payments (private): docs (Markdown, reST, a notebook), code and vendored files
    that are not documentation, an issue with the refund timeout in a comment, a pull
    request, a closed issue, a discussion whose accepted answer says how to rotate the
    webhook secret; acme/website (public), with a README."""
    repo = "acme/payments"
    fake.add_repo(repo, description="Payments service")
    fake.write(repo, "README.md", "# Payments\n\nThe payments service takes card payments and refunds.\n")
    fake.write(repo, "docs/deploy.md", DEPLOY)
    fake.write(
        repo,
        "docs/architecture.rst",
        "Architecture\n============\n\nThe ledger is the source of truth for balances.\n",
    )
    notebook = {"cells": [{"cell_type": "markdown", "source": ["# Fraud analysis\n", "Chargebacks fell by a third after 3-D Secure."]},
                          {"cell_type": "code", "source": ["print('secret code cell')"], "outputs": []}],
                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}  # fmt: skip
    fake.write(repo, "docs/fraud.ipynb", json.dumps(notebook))
    fake.write(repo, "src/app.py", "print('not documentation')\n")
    fake.write(repo, "node_modules/left-pad/README.md", "# left-pad\n\nSomebody else's documentation.\n")
    fake.write(repo, ".github/ISSUE_TEMPLATE.md", "Describe the bug.\n")
    issue = fake.add_issue(
        repo, "Refunds time out", "Refunds over 500 EUR fail with a timeout.", labels=["bug", "refunds"]
    )
    comment = fake.comment(
        repo, issue.number, "grace",
        "The refund worker's timeout is 45 seconds since we raised it in March; the gateway retries twice.",
    )  # fmt: skip
    fake.comment(repo, issue.number, "ada", "Thanks, closing once the retry lands.")
    pull = fake.add_issue(repo, "Retry refunds on gateway timeouts", "Adds a retry with backoff.", pull=True)
    closed = fake.add_issue(repo, "Old currency table", "EUR rounding was wrong before 2023.", state="closed")
    discussion = fake.add_discussion(
        repo, "How do we rotate the webhook secret?", "The Stripe webhook secret leaked in a log."
    )
    fake.reply(repo, discussion.number, "bob", "Maybe ask in #payments?")
    answer = fake.reply(
        repo, discussion.number, "ada",
        "Rotate it with `payments-cli secrets rotate --webhook`; the old secret keeps working for 24 hours.",
        answer=True,
    )  # fmt: skip
    fake.reply(repo, discussion.number, "grace", "Worked for me.", to=answer.id)
    site = "acme/website"
    fake.add_repo(site, private=False, description="Marketing site", has_discussions=False)
    fake.write(site, "README.md", "# Website\n\nThe website is built with Hugo and deployed by Netlify.\n")
    return Seeded(repo, issue.number, comment.id, pull.number, closed.number, discussion.number, answer.id)
