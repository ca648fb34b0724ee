"""Listing a GitHub attachment's repositories: each part of each repository completely, and
cheaply (see `github.py`), into `ItemRef`s whose versions tell changed from unchanged, and
`Complete`s that let the sync prune; what the items need to be read later is kept on the
`Lister` (by item id) for `github_items.py`."""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from knowledge.sources.connectors.base import (
    BadCredentials,
    Complete,
    ConnectorError,
    ConnectorUnavailable,
    FolderSpec,
    ItemRef,
    Listed,
    State,
    parse_time,
)
from knowledge.sources.connectors.github_repos import Json, NotFound, Repo, dig
from knowledge.sources.connectors.github_text import Selection
from knowledge.sources.connectors.paging import MAX_PAGES, paged

if TYPE_CHECKING:
    from knowledge.sources.connectors.github_api import GitHubApi, Response

PAGE_SIZE = 100  # GitHub's largest page
MAX_TREES = 2_000
"""Folders walked one request each when a repository's tree is too large to list at once."""
EDITS_OVERLAP = timedelta(hours=1)
"""Comments are checked from this long before the last check began (clocks apart)."""


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
class File:
    repo: Repo
    path: str
    sha: str
    size: int


@dataclass(frozen=True)
class Thread:
    repo: Repo
    number: int
    version: str
    raw: Json | None = None
    """The issue as the listing gave it (None when the listing page answered 304)."""


class Lister:
    """Lists repositories; remembers, by item id, what reading each item needs."""

    def __init__(self, api: GitHubApi) -> None:
        self._api = api
        self.files: dict[str, File] = {}
        self.issues: dict[str, Thread] = {}
        self.discussions: dict[str, Thread] = {}

    async def listing(
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
        repos, missing = await self.resolve(folders, run.cache)
        for repo in repos:
            async for listed in self._repository(repo, run):
                yield listed
        names = {r.full_name for r in repos}
        for gone in sorted({*missing, *(state.get("repos") or ())} - names):
            yield Complete(f"{gone}:")
        threads = {f"{t.repo.full_name}#{t.number}" for t in self.issues.values()}
        edits = {key: when for key, when in run.edits.items() if key in threads}  # of issues still there
        state.update(pages=run.cache.new, edits=edits, checked=run.now_checked, repos=sorted(names))

    async def resolve(self, folders: Sequence[FolderSpec], cache: Validators) -> tuple[list[Repo], list[str]]:
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
            for repo in await self.accessible(cache):
                if repo.owner.lower() in owners:
                    repos.setdefault(repo.full_name.lower(), repo)
        return list(repos.values()), missing

    async def _repo(self, full_name: str, cache: Validators) -> Repo:
        url = self._api.url(f"/repos/{full_name}")
        response = await self._get(url, cache)
        data = cache.cached(url) if response.not_modified else Repo.from_json(response.data).as_mapping()
        cache.keep(url, response.etag, data)
        return Repo.from_mapping(data)

    async def accessible(self, cache: Validators) -> list[Repo]:
        """Every repository the credentials can read (an App: its installation's)."""
        path = "/installation/repositories" if self._api.app is not None else "/user/repos"
        found: list[Repo] = []
        async for items, _ in self.pages(self._api.url(path, {"per_page": PAGE_SIZE}), cache, _repos_of):
            found += [Repo.from_mapping(item) for item in items]
        return found

    async def _repository(self, repo: Repo, run: _Run) -> AsyncIterator[Listed]:
        selection, cache = run.selection, run.cache
        if "docs" in selection.parts and not repo.empty and repo.default_branch:
            for file in await self._tree(repo, selection, cache):
                item_id = f"{repo.full_name}:file:{file.path}"
                self.files[item_id] = file
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

    async def _tree(self, repo: Repo, selection: Selection, cache: Validators) -> list[File]:
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
        return [File(repo, path, sha, size) for path, sha, size in files]

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
        async for comments, _ in self.pages(url, Validators({}, fresh=True), lambda data: data):
            for comment in comments:
                number = str(dig(comment, "issue_url") or "").rsplit("/", 1)[-1]
                updated = str(dig(comment, "updated_at") or "")
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
        async for rows, raw in self.pages(url, cache, _issues_of):
            for number, updated, comments, is_pull, title in rows:
                if ("pulls" if is_pull else "issues") not in selection.parts:
                    continue
                item_id = f"{repo.full_name}:issue:{number}"
                version = f"{updated}|{comments}|{edits.get(f'{repo.full_name}#{number}', '')}"
                self.issues[item_id] = Thread(repo, number, version, raw.get(number))
                yield ItemRef(item_id, f"#{number} {title}", version, parse_time(updated))

    async def _discussion_refs(self, repo: Repo) -> AsyncIterator[ItemRef]:
        owner, name = repo.full_name.split("/", 1)

        async def page(after: str | None) -> Any:
            data = await self._api.graphql(LIST_DISCUSSIONS, {"owner": owner, "name": name, "after": after})
            return dig(data, "repository", "discussions") or {}

        def following(listing: Any) -> str | None:
            if not dig(listing, "pageInfo", "hasNextPage"):
                return None
            cursor = str(dig(listing, "pageInfo", "endCursor") or "")
            if not cursor:  # more to come, and no way to it: not a complete listing
                raise ConnectorUnavailable(
                    f"GitHub gave no cursor to the next discussions of {repo.full_name}"
                )
            return cursor

        too_long = f"the discussions of {repo.full_name} ran past {MAX_PAGES} pages"
        async for listing in paged(None, page, following, too_long=too_long):
            for node in listing.get("nodes") or []:
                if not isinstance(node, dict) or not isinstance(node.get("number"), int):
                    continue
                number, version = node["number"], _discussion_version(node)
                item_id = f"{repo.full_name}:discussion:{number}"
                self.discussions[item_id] = Thread(repo, number, version)
                yield ItemRef(
                    item_id,
                    f"#{number} {node.get('title') or ''}",
                    version,
                    parse_time(node.get("updatedAt")),
                )

    async def pages(
        self, url: str, cache: Validators, slim: Any
    ) -> AsyncIterator[tuple[list[Any], dict[int, Json]]]:
        """Every page of a listing, each read from `cache` when it answers 304; with each,
        the raw items by number when the page came whole (for issues)."""

        async def page(following: str) -> tuple[Any, dict[int, Json]]:
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
            return data, raw

        too_long = f"a listing at {self._api.host} ran past {MAX_PAGES} pages"
        async for data, raw in paged(url, page, lambda found: found[0]["next"], too_long=too_long):
            yield data["items"], raw

    async def _get(self, url: str, cache: Validators) -> Response:
        return await self._api.get(url, etag=cache.etag(url))

    # -- fetching ------------------------------------------------------------------------------


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


def _discussion_version(node: Json) -> str:
    """What changes when a discussion, its answer or one of its first comments does."""
    comments = dig(node, "comments", "nodes") or []
    parts = [
        str(node.get("updatedAt") or ""),
        str(dig(node, "comments", "totalCount") or 0),
        str(dig(node, "answer", "id") or ""),
        str(dig(node, "answer", "updatedAt") or ""),
        max((str(c.get("updatedAt") or "") for c in comments if isinstance(c, dict)), default=""),
    ]
    return hashlib.sha1("|".join(parts).encode(), usedforsecurity=False).hexdigest()[:16]


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
