"""The GitHub connector: a repository's documentation files, its issues and pull requests with
their comments, and its discussions with their answers (github.com and Enterprise Server).

Folders are repositories (`acme/payments`) or owners (`acme`: every repository of theirs the
credentials can read, new ones included). Every sync lists each part of each repository
completely, and cheaply, so that deletions and renames go at the next sync:

- **files** by the git tree of the default branch (`/git/trees/{branch}?recursive=1`; a
  truncated tree is walked a folder at a time); a blob is fetched only when its SHA is not
  the one indexed;
- **issues and pull requests** by the issues listing, page by page with the ETag of the last
  sync (a page that did not change answers 304: no body, no rate limit); comments edited
  since the last sync (`/issues/comments?since=`) mark their issue changed; comments are
  fetched only for changed issues;
- **discussions** by a GraphQL listing of versions (last update, comment count, answer and
  the comments' last edits); bodies, comments, answers and replies only for changed ones.

Items are `{owner/repo}:file:{path}`, `{owner/repo}:issue:{number}` (pull requests too) and
`{owner/repo}:discussion:{number}`; each document carries the repository's full name, id and
visibility (public, private, internal) and its owner, what a permission sync needs.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from yarl import URL

from knowledge.sources.connectors.base import (
    ApiOptions,
    AttachmentRef,
    BadCredentials,
    Complete,
    ConnectorError,
    ConnectorKind,
    ConnectorUnavailable,
    Folder,
    FolderSpec,
    Item,
    ItemRef,
    Listed,
    Skipped,
    State,
)
from knowledge.sources.connectors.credentials import Credentials
from knowledge.sources.connectors.github_text import (
    NOTEBOOK,
    Post,
    Selection,
    check_options,
    facts_line,
    notebook_markdown,
    thread_text,
    type_of,
)

if TYPE_CHECKING:
    from knowledge.sources.connectors.github_api import GitHubApi, Response
    from knowledge.sources.fetch import FetchSession

KIND = "github"
DEFAULT_URL = "https://api.github.com"
PAGE_SIZE = 100
FETCH_BATCH = 20
DISCUSSION_BATCH = 10
MAX_BLOB_BYTES = 5 * 1024 * 1024
MAX_PAGES = 10_000
MAX_TREES = 2_000
"""Folders walked one request each when a repository's tree is too large to list at once."""
EDITS_OVERLAP = timedelta(hours=1)
"""Comments are checked from this long before the last check began (clocks apart)."""
FAILURES_IN_A_ROW = 5
"""Items failing one after another before the sync stops (GitHub is down, not one item)."""
_OWNER = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})"
_REPO = r"[A-Za-z0-9._-]{1,100}"
_FOLDER = re.compile(rf"^(?P<owner>{_OWNER})(?:/(?P<repo>{_REPO}))?$")

Json = dict[str, Any]


class NotFound(ConnectorError):
    """GitHub answered 404 (or GraphQL NOT_FOUND): no such thing, or not for these credentials."""


def parse_folder(text: str) -> FolderSpec:
    """`owner/repo` or `owner` (a github.com link or a `.git` suffix is read too)."""
    cleaned = text.strip().removesuffix(".git").strip("/")
    cleaned = re.sub(r"^(?:https?://)?(?:www\.)?github\.com/", "", cleaned, flags=re.I)
    match = _FOLDER.match(cleaned)
    if match is None or match["repo"] in (".", ".."):
        raise ValueError(f"“{text}” is not a repository (owner/name) or an owner")
    return FolderSpec(cleaned)


def api_root(url: str) -> str:
    """The REST root a user's address means: `https://github.com` is `https://api.github.com`,
    a bare Enterprise Server host its `/api/v3`; anything with a path is taken as given."""
    parsed = URL(url)
    host = (parsed.host or "").lower()
    if host in ("github.com", "www.github.com"):
        return DEFAULT_URL
    if parsed.path in ("", "/") and host != "api.github.com":
        return str(parsed.with_path("/api/v3"))
    return url


def parse_time(value: object) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _get(data: Any, *path: str) -> Any:
    for key in path:
        data = data.get(key) if isinstance(data, dict) else None
    return data


def _login(user: Any) -> str:
    return str(_get(user, "login") or "ghost")


@dataclass(frozen=True)
class Repo:
    """A repository as Lore keeps it between syncs."""

    full_name: str
    id: int
    visibility: str
    default_branch: str
    html_url: str
    description: str = ""
    has_issues: bool = True
    has_discussions: bool = False
    empty: bool = False

    @property
    def owner(self) -> str:
        return self.full_name.split("/", 1)[0]

    @classmethod
    def from_json(cls, data: Any) -> Repo:
        private = bool(_get(data, "private"))
        return cls(
            full_name=str(_get(data, "full_name") or ""),
            id=int(_get(data, "id") or 0),
            visibility=str(_get(data, "visibility") or ("private" if private else "public")),
            default_branch=str(_get(data, "default_branch") or ""),
            html_url=str(_get(data, "html_url") or ""),
            description=str(_get(data, "description") or ""),
            has_issues=bool(_get(data, "has_issues") if "has_issues" in data else True),
            has_discussions=bool(_get(data, "has_discussions")),
            empty=_get(data, "size") == 0,
        )

    def as_mapping(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> Repo:
        return cls(**{k: values[k] for k in cls.__dataclass_fields__ if k in values})

    def facts(self, item_type: str, **more: str | int | bool) -> dict[str, str | int | bool]:
        """What each document of this repository carries: where it is from, who may read it."""
        return {
            "repository": self.full_name,
            "repository_id": self.id,
            "visibility": self.visibility,
            "owner": self.owner,
            "item_type": item_type,
            **more,
        }


class Validators:
    """The ETags and slim contents of the listings of the last sync (the connector's state):
    a listing that answers 304 is read from here. With `fresh`, none are sent."""

    def __init__(self, old: Mapping[str, Any], *, fresh: bool) -> None:
        self._old = old
        self._fresh = fresh
        self.new: dict[str, Any] = {}

    def etag(self, url: str) -> str | None:
        kept = self._old.get(url)
        if self._fresh or not isinstance(kept, dict) or "data" not in kept:
            return None
        etag = kept.get("etag")
        return etag if isinstance(etag, str) else None

    def cached(self, url: str) -> Any:
        return self._old[url]["data"]

    def keep(self, url: str, etag: str | None, data: Any) -> None:
        if etag:
            self.new[url] = {"etag": etag, "data": data}


@dataclass
class _Run:
    """One listing: what to list, the validators of the last one, comments' last edits by
    issue, and when each repository's comments were last checked (and are checked now)."""

    selection: Selection
    cache: Validators
    edits: dict[str, str]
    checked: Mapping[str, str]
    started: str = field(default_factory=lambda: datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))
    now_checked: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class _File:
    repo: Repo
    path: str
    sha: str
    size: int


@dataclass(frozen=True)
class _Thread:
    repo: Repo
    number: int
    version: str
    raw: Json | None = None
    """The issue as the listing gave it (None when the listing page answered 304)."""


class GitHubConnector:
    def __init__(self, api: GitHubApi) -> None:
        self._api = api
        self._files: dict[str, _File] = {}
        self._issues: dict[str, _Thread] = {}
        self._discussions: dict[str, _Thread] = {}
        self._failures = 0

    @property
    def base_url(self) -> str:
        return self._api.base_url

    @property
    def requests(self) -> int:
        return self._api.requests

    async def account(self) -> str:
        if self._api.app is None:
            user = await self._api.get_json("/user")
            return str(_get(user, "login") or "the token's account")
        app = await self._api.app_get("/app")
        installation = await self._api.app_get(
            f"/app/installations/{self._api.app.credentials.installation_id}"
        )
        await self._api.app.authorization()  # the installation token: proves the installation works
        name = _get(app, "name") or _get(app, "slug") or "the GitHub App"
        return f"{name} (installed on {_login(_get(installation, 'account'))})"

    async def folders(self) -> list[Folder]:
        repos = await self._accessible(Validators({}, fresh=True))
        found = [
            Folder(r.full_name, r.description or r.full_name, f"{r.visibility} repository", r.html_url)
            for r in sorted(repos, key=lambda r: r.full_name.lower())
        ]
        owners = sorted({r.owner: r for r in repos}.values(), key=lambda r: r.owner.lower())
        web = {r.owner: r.html_url.rsplit("/", 1)[0] for r in owners}
        found += [
            Folder(r.owner, f"every repository of {r.owner} Lore can read", "owner", web[r.owner])
            for r in owners
        ]
        return found

    # -- listing -------------------------------------------------------------------------------

    async def changed_since(
        self,
        folders: Sequence[FolderSpec],
        since: datetime | None,
        *,
        options: Mapping[str, Any] | None = None,
        state: State | None = None,
    ) -> AsyncIterator[Listed]:
        state = state if state is not None else {}
        run = _Run(
            Selection.from_mapping(options or {}),
            Validators(state.get("pages") or {}, fresh=since is None),
            dict(state.get("edits") or {}),
            dict(state.get("checked") or {}),
        )
        repos, missing = await self._resolve(folders, run.cache)
        for repo in repos:
            async for listed in self._repository(repo, run):
                yield listed
        names = {r.full_name for r in repos}
        for gone in sorted({*missing, *(state.get("repos") or ())} - names):
            yield Complete(f"{gone}:")
        state.update(pages=run.cache.new, edits=run.edits, checked=run.now_checked, repos=sorted(names))

    async def _resolve(
        self, folders: Sequence[FolderSpec], cache: Validators
    ) -> tuple[list[Repo], list[str]]:
        """The repositories the folders name (an owner's: those the credentials can read), and
        the folders GitHub no longer shows (deleted, or access withdrawn)."""
        repos: dict[str, Repo] = {}
        missing: list[str] = []
        owners = {f.key.lower() for f in folders if "/" not in f.key}
        for folder in folders:
            if "/" in folder.key:
                try:
                    repo = await self._repo(folder.key, cache)
                except NotFound:
                    missing.append(folder.key)
                    await self._api.say(f"{folder.key} is gone, or these credentials may no longer read it")
                    continue
                repos[repo.full_name.lower()] = repo
        if owners:
            for repo in await self._accessible(cache):
                if repo.owner.lower() in owners:
                    repos.setdefault(repo.full_name.lower(), repo)
        return list(repos.values()), missing

    async def _repo(self, full_name: str, cache: Validators) -> Repo:
        url = self._api.url(f"/repos/{full_name}")
        response = await self._get(url, cache)
        data = cache.cached(url) if response.not_modified else Repo.from_json(response.data).as_mapping()
        cache.keep(url, response.etag, data)
        return Repo.from_mapping(data)

    async def _accessible(self, cache: Validators) -> list[Repo]:
        """Every repository the credentials can read (an App: its installation's)."""
        path = "/installation/repositories" if self._api.app is not None else "/user/repos"
        found: list[Repo] = []
        async for items, _ in self._pages(self._api.url(path, {"per_page": PAGE_SIZE}), cache, _repos_of):
            found += [Repo.from_mapping(item) for item in items]
        return found

    async def _repository(self, repo: Repo, run: _Run) -> AsyncIterator[Listed]:
        selection, cache = run.selection, run.cache
        if "docs" in selection.parts and not repo.empty and repo.default_branch:
            for file in await self._tree(repo, selection, cache):
                item_id = f"{repo.full_name}:file:{file.path}"
                self._files[item_id] = file
                yield ItemRef(item_id, file.path, file.sha)
        yield Complete(f"{repo.full_name}:file:")
        if {"issues", "pulls"} & set(selection.parts) and repo.has_issues:
            checked = parse_time(run.checked.get(repo.full_name))
            run.now_checked[repo.full_name] = run.started
            if checked is not None:
                await self._edits(repo, checked - EDITS_OVERLAP, run.edits)
            async for ref in self._issue_refs(repo, selection, cache, run.edits):
                yield ref
        yield Complete(f"{repo.full_name}:issue:")
        if "discussions" in selection.parts and repo.has_discussions:
            try:
                refs = [ref async for ref in self._discussion_refs(repo)]
            except ConnectorError as exc:
                if isinstance(exc, BadCredentials | ConnectorUnavailable):
                    raise
                await self._api.say(f"discussions of {repo.full_name} not listed: {exc}")
                return
            for ref in refs:
                yield ref
        yield Complete(f"{repo.full_name}:discussion:")

    async def _tree(self, repo: Repo, selection: Selection, cache: Validators) -> list[_File]:
        url = self._api.url(
            f"/repos/{repo.full_name}/git/trees/{quote(repo.default_branch)}", {"recursive": 1}
        )
        response = await self._get(url, cache)
        if response.not_modified:
            files = cache.cached(url)
        else:
            entries = response.data.get("tree") or [] if isinstance(response.data, dict) else []
            if isinstance(response.data, dict) and response.data.get("truncated"):
                entries = await self._walk(repo, str(response.data.get("sha") or ""), selection)
            files = [
                [str(e["path"]), str(e["sha"]), int(e.get("size") or 0)]
                for e in entries
                if isinstance(e, dict)
                and e.get("type") == "blob"
                and selection.wants(str(e.get("path") or ""))
            ]
        cache.keep(url, response.etag, files)
        return [_File(repo, path, sha, size) for path, sha, size in files]

    async def _walk(self, repo: Repo, root: str, selection: Selection) -> list[Json]:
        """A tree too large for one answer, a folder at a time (folders excluded by the
        selection are not entered)."""
        entries: list[Json] = []
        folders = [("", root)]
        for _ in range(MAX_TREES):
            if not folders:
                return entries
            prefix, sha = folders.pop()
            data = await self._api.get_json(f"/repos/{repo.full_name}/git/trees/{sha}")
            for entry in data.get("tree") or [] if isinstance(data, dict) else []:
                path = prefix + str(entry.get("path") or "")
                if entry.get("type") == "tree" and not selection.skips_folder(path):
                    folders.append((path + "/", str(entry.get("sha"))))
                elif entry.get("type") == "blob":
                    entries.append({**entry, "path": path})
        await self._api.say(f"{repo.full_name} has over {MAX_TREES} folders; the rest are not listed")
        return entries

    async def _edits(self, repo: Repo, since: datetime, edits: dict[str, str]) -> None:
        """Comments written or edited since `since` (the last sync's check, complete listings
        too) mark their issue changed: an edit does not touch the issue's own `updated_at`."""
        params: dict[str, str | int] = {
            "since": since.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "sort": "updated",
            "direction": "asc",
            "per_page": PAGE_SIZE,
        }
        url = self._api.url(f"/repos/{repo.full_name}/issues/comments", params)
        async for comments, _ in self._pages(url, Validators({}, fresh=True), lambda data: data):
            for comment in comments:
                number = str(_get(comment, "issue_url") or "").rsplit("/", 1)[-1]
                updated = str(_get(comment, "updated_at") or "")
                key = f"{repo.full_name}#{number}"
                if number.isdigit() and updated > edits.get(key, ""):
                    edits[key] = updated

    async def _issue_refs(
        self, repo: Repo, selection: Selection, cache: Validators, edits: Mapping[str, str]
    ) -> AsyncIterator[ItemRef]:
        params: dict[str, str | int] = {
            "state": "all" if selection.closed else "open",
            "sort": "created",
            "direction": "asc",
            "per_page": PAGE_SIZE,
        }
        url = self._api.url(f"/repos/{repo.full_name}/issues", params)
        async for rows, raw in self._pages(url, cache, _issues_of):
            for number, updated, comments, is_pull, title in rows:
                if ("pulls" if is_pull else "issues") not in selection.parts:
                    continue
                item_id = f"{repo.full_name}:issue:{number}"
                version = f"{updated}|{comments}|{edits.get(f'{repo.full_name}#{number}', '')}"
                self._issues[item_id] = _Thread(repo, number, version, raw.get(number))
                yield ItemRef(item_id, f"#{number} {title}", version, parse_time(updated))

    async def _discussion_refs(self, repo: Repo) -> AsyncIterator[ItemRef]:
        owner, name = repo.full_name.split("/", 1)
        after: str | None = None
        for _ in range(MAX_PAGES):
            data = await self._api.graphql(LIST_DISCUSSIONS, {"owner": owner, "name": name, "after": after})
            listing = _get(data, "repository", "discussions") or {}
            for node in listing.get("nodes") or []:
                if not isinstance(node, dict) or not isinstance(node.get("number"), int):
                    continue
                number, version = node["number"], _discussion_version(node)
                item_id = f"{repo.full_name}:discussion:{number}"
                self._discussions[item_id] = _Thread(repo, number, version)
                yield ItemRef(
                    item_id,
                    f"#{number} {node.get('title') or ''}",
                    version,
                    parse_time(node.get("updatedAt")),
                )
            if not _get(listing, "pageInfo", "hasNextPage"):
                return
            after = str(_get(listing, "pageInfo", "endCursor") or "") or None
        raise ConnectorUnavailable(f"the discussions of {repo.full_name} ran past {MAX_PAGES} pages")

    async def _pages(
        self, url: str, cache: Validators, slim: Any
    ) -> AsyncIterator[tuple[list[Any], dict[int, Json]]]:
        """Every page of a listing, each read from `cache` when it answers 304; with each,
        the raw items by number when the page came whole (for issues)."""
        following: str | None = url
        for _ in range(MAX_PAGES):
            if following is None:
                return
            response = await self._get(following, cache)
            if response.not_modified:
                data = cache.cached(following)
                raw: dict[int, Json] = {}
            else:
                data = {"next": response.next, "items": slim(response.data)}
                raw = (
                    {i["number"]: i for i in response.data if isinstance(i, dict) and "number" in i}
                    if isinstance(response.data, list)
                    else {}
                )
            cache.keep(following, response.etag, data)
            yield data["items"], raw
            following = data["next"]
        raise ConnectorUnavailable(f"a listing at {self._api.host} ran past {MAX_PAGES} pages")

    async def _get(self, url: str, cache: Validators) -> Response:
        return await self._api.get(url, etag=cache.etag(url))

    # -- fetching ------------------------------------------------------------------------------

    async def fetch(self, ids: Sequence[str]) -> list[Item | Skipped]:
        found: list[Item | Skipped] = []
        discussions = []
        for item_id in ids:
            if item_id in self._discussions:
                discussions.append(self._discussions[item_id])
                continue
            title = self._title(item_id)
            if title is None:
                continue
            found += await self._one(item_id, title, self._file if item_id in self._files else self._issue)
        for start in range(0, len(discussions), DISCUSSION_BATCH):
            batch = discussions[start : start + DISCUSSION_BATCH]
            try:
                found += await self._discussions_of(batch)
                self._failures = 0
            except ConnectorError as exc:
                self._failed(exc)
                found += [
                    Skipped(f"{t.repo.full_name}:discussion:{t.number}", f"discussion #{t.number}", str(exc))
                    for t in batch
                ]
        return found

    def _title(self, item_id: str) -> str | None:
        if item_id in self._files:
            return self._files[item_id].path
        thread = self._issues.get(item_id)
        return f"{thread.repo.full_name}#{thread.number}" if thread else None

    async def _one(self, item_id: str, title: str, read: Any) -> list[Item | Skipped]:
        try:
            item: Item | Skipped = await read(item_id)
        except NotFound:
            return []  # gone since the listing
        except ConnectorError as exc:
            self._failed(exc)
            return [Skipped(item_id, title, str(exc))]
        self._failures = 0
        return [item]

    def _failed(self, exc: ConnectorError) -> None:
        """An item failed: fine, unless the credentials are refused or GitHub keeps failing."""
        if isinstance(exc, BadCredentials):
            raise exc
        self._failures += 1
        if self._failures >= FAILURES_IN_A_ROW:
            raise ConnectorUnavailable(f"{FAILURES_IN_A_ROW} items failed in a row; the last: {exc}") from exc

    async def _file(self, item_id: str) -> Item | Skipped:
        file = self._files[item_id]
        if file.size > MAX_BLOB_BYTES:
            return Skipped(item_id, file.path, f"over {MAX_BLOB_BYTES // (1024 * 1024)} MB")
        blob = await self._api.get_json(f"/repos/{file.repo.full_name}/git/blobs/{file.sha}")
        try:
            text = _text(file.path, blob)
        except ValueError as exc:
            return Skipped(item_id, file.path, str(exc))
        repo = file.repo
        return Item(
            id=item_id,
            title=file.path,
            url=f"{repo.html_url}/blob/{quote(repo.default_branch)}/{quote(file.path)}",
            version=file.sha,
            text=text,
            folder=repo.full_name,
            folder_name=repo.full_name,
            path=(repo.full_name,),
            key=f"{self._api.base_url}/repos/{repo.full_name}/contents/{quote(file.path)}",
            mime_type=type_of(file.path) or "text/plain",
            facts=repo.facts("file", file_path=file.path),
        )

    async def _issue(self, item_id: str) -> Item:
        thread = self._issues[item_id]
        repo, number = thread.repo, thread.number
        raw = thread.raw or await self._api.get_json(f"/repos/{repo.full_name}/issues/{number}")
        comments: list[Json] = []
        if raw.get("comments"):
            url = self._api.url(f"/repos/{repo.full_name}/issues/{number}/comments", {"per_page": PAGE_SIZE})
            async for page, _ in self._pages(url, Validators({}, fresh=True), lambda data: data):
                comments += [c for c in page if isinstance(c, dict)]
        posts = [
            Post(
                _login(c.get("user")),
                parse_time(c.get("created_at")),
                str(c.get("body") or ""),
                str(c.get("html_url") or ""),
            )
            for c in comments
        ]
        pull = "pull_request" in raw
        state = "merged" if _get(raw, "pull_request", "merged_at") else str(raw.get("state") or "")
        labels = tuple(str(label.get("name")) for label in raw.get("labels") or [] if isinstance(label, dict))
        opened = parse_time(raw.get("created_at"))
        details = [
            state,
            f"labels: {', '.join(labels)}" if labels else "",
            f"opened by {_login(raw.get('user'))}" + (f" on {opened:%Y-%m-%d}" if opened else ""),
        ]
        what = "Pull request" if pull else "Issue"
        text, anchors = thread_text(
            facts_line(what, number, repo.full_name, details), str(raw.get("body") or ""), posts
        )
        return Item(
            id=item_id,
            title=f"{raw.get('title') or what} (#{number})",
            url=str(raw.get("html_url") or f"{repo.html_url}/issues/{number}"),
            version=thread.version,
            text=text,
            folder=repo.full_name,
            folder_name=repo.full_name,
            author=_login(raw.get("user")),
            modified=parse_time(raw.get("updated_at")),
            labels=labels,
            path=(repo.full_name, "Pull requests" if pull else "Issues"),
            key=f"{self._api.base_url}/repos/{repo.full_name}/issues/{number}",
            facts=repo.facts("pull_request" if pull else "issue", number=number, state=state),
            anchors=anchors,
        )

    async def _discussions_of(self, threads: Sequence[_Thread]) -> list[Item | Skipped]:
        repo = threads[0].repo
        if any(t.repo != repo for t in threads):
            return [
                *await self._discussions_of([t for t in threads if t.repo == repo]),
                *await self._discussions_of([t for t in threads if t.repo != repo]),
            ]
        owner, name = repo.full_name.split("/", 1)
        fields = "\n".join(f"d{t.number}: discussion(number: {t.number}) {{ ...Full }}" for t in threads)
        query = f"query($owner: String!, $name: String!) {{ repository(owner: $owner, name: $name) {{ {fields} }} }}\n{DISCUSSION}"
        data = await self._api.graphql(query, {"owner": owner, "name": name})
        found: list[Item | Skipped] = []
        for thread in threads:
            node = _get(data, "repository", f"d{thread.number}")
            if isinstance(node, dict):
                found.append(self._discussion(thread, node))
        return found

    def _discussion(self, thread: _Thread, node: Json) -> Item:
        repo, number = thread.repo, thread.number
        comments = [c for c in _get(node, "comments", "nodes") or [] if isinstance(c, dict)]
        comments.sort(key=lambda c: not c.get("isAnswer"))  # the accepted answer first
        posts = [_post(c, "Answer" if c.get("isAnswer") else "Comment") for c in comments]
        category = str(_get(node, "category", "name") or "")
        opened = parse_time(node.get("createdAt"))
        labels = tuple(str(n.get("name")) for n in _get(node, "labels", "nodes") or [] if isinstance(n, dict))
        details = [
            f"category: {category}" if category else "",
            "answered" if node.get("answer") else "",
            f"labels: {', '.join(labels)}" if labels else "",
            f"opened by {_login(node.get('author'))}" + (f" on {opened:%Y-%m-%d}" if opened else ""),
        ]
        text, anchors = thread_text(
            facts_line("Discussion", number, repo.full_name, details), str(node.get("body") or ""), posts
        )
        return Item(
            id=f"{repo.full_name}:discussion:{number}",
            title=f"{node.get('title') or 'Discussion'} (#{number})",
            url=str(node.get("url") or f"{repo.html_url}/discussions/{number}"),
            version=thread.version,
            text=text,
            folder=repo.full_name,
            folder_name=repo.full_name,
            author=_login(node.get("author")),
            modified=parse_time(node.get("updatedAt")),
            labels=labels,
            path=(repo.full_name, "Discussions", *((category,) if category else ())),
            key=f"{self._api.base_url}/repos/{repo.full_name}/discussions/{number}",
            facts=repo.facts("discussion", number=number, answered=bool(node.get("answer"))),
            anchors=anchors,
        )

    async def attachments(self, item_id: str) -> list[AttachmentRef]:
        return []  # what a repository holds is listed by the tree, not attached to items

    async def download(self, attachment: AttachmentRef, max_bytes: int) -> bytes:
        raise ConnectorError("GitHub items have no attachments")


LIST_DISCUSSIONS = """
query($owner: String!, $name: String!, $after: String) {
  repository(owner: $owner, name: $name) {
    discussions(first: 50, after: $after, orderBy: {field: UPDATED_AT, direction: DESC}) {
      pageInfo { hasNextPage endCursor }
      nodes {
        number title updatedAt
        answer { id updatedAt }
        comments(first: 50) { totalCount nodes { updatedAt } }
      }
    }
  }
}
"""
DISCUSSION = """
fragment Full on Discussion {
  number title body url createdAt updatedAt
  author { login }
  category { name }
  labels(first: 20) { nodes { name } }
  answer { id }
  comments(first: 100) {
    nodes {
      url body createdAt isAnswer author { login }
      replies(first: 50) { nodes { url body createdAt author { login } } }
    }
  }
}
"""


def _discussion_version(node: Json) -> str:
    """What changes when a discussion, its answer or one of its first comments does."""
    comments = _get(node, "comments", "nodes") or []
    parts = [
        str(node.get("updatedAt") or ""),
        str(_get(node, "comments", "totalCount") or 0),
        str(_get(node, "answer", "id") or ""),
        str(_get(node, "answer", "updatedAt") or ""),
        max((str(c.get("updatedAt") or "") for c in comments if isinstance(c, dict)), default=""),
    ]
    return hashlib.sha1("|".join(parts).encode(), usedforsecurity=False).hexdigest()[:16]


def _post(comment: Json, label: str) -> Post:
    replies = [r for r in _get(comment, "replies", "nodes") or [] if isinstance(r, dict)]
    return Post(
        _login(comment.get("author")),
        parse_time(comment.get("createdAt")),
        str(comment.get("body") or ""),
        str(comment.get("url") or ""),
        label,
        tuple(_post(r, "Reply") for r in replies),
    )


def _text(path: str, blob: Any) -> str:
    """A blob's text; ValueError when it is not text Lore can read."""
    content = str(_get(blob, "content") or "")
    try:
        data = base64.b64decode(content) if _get(blob, "encoding") == "base64" else content.encode()
    except ValueError as exc:
        raise ValueError("GitHub sent a blob that is not base64") from exc
    if path.lower().endswith("." + NOTEBOOK):
        return notebook_markdown(data)
    if b"\x00" in data[:8192]:
        raise ValueError("not text (a binary file)")
    return data.decode("utf-8", errors="replace")


def _repos_of(data: Any) -> list[dict[str, Any]]:
    """The repositories of a listing page (`/user/repos` lists them, an installation's are
    under `repositories`), slim."""
    items = data.get("repositories") if isinstance(data, dict) else data
    return [Repo.from_json(r).as_mapping() for r in items or [] if isinstance(r, dict) and r.get("full_name")]


def _issues_of(data: Any) -> list[list[Any]]:
    """What the listing of an issues page keeps: number, last update, comment count, whether
    it is a pull request, title."""
    return [
        [
            int(i["number"]),
            str(i.get("updated_at") or ""),
            int(i.get("comments") or 0),
            "pull_request" in i,
            str(i.get("title") or "")[:200],
        ]
        for i in data or []
        if isinstance(i, dict) and isinstance(i.get("number"), int)
    ]


def open_github(
    session: FetchSession, base_url: str, credentials: Credentials, options: ApiOptions
) -> GitHubConnector:
    # Imported here: the registry lists this kind for the command grammar and every surface,
    # and the client brings aiohttp and PyJWT with it, which only a connection's work needs.
    from knowledge.sources.connectors.github_api import GitHubApi

    api = GitHubApi(
        session,
        base_url,
        credentials,
        retries=options.retries,
        max_wait=options.max_wait,
        sleep=options.sleep,
        note=options.note,
    )
    return GitHubConnector(api)


GITHUB = ConnectorKind(
    kind=KIND,
    label="GitHub",
    fetch_batch=FETCH_BATCH,
    open=open_github,
    parse_folder=parse_folder,
    folder_noun="repository",
    folders_noun="repositories",
    default_url=DEFAULT_URL,
    api_root=api_root,
    check_options=check_options,
)
