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

import re
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import replace
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
from knowledge.sources.connectors.github_access import GitHubAccess, repository_of
from knowledge.sources.connectors.github_items import Reader
from knowledge.sources.connectors.github_listing import Lister, Validators
from knowledge.sources.connectors.github_repos import dig, login
from knowledge.sources.connectors.github_text import check_options
from knowledge.sources.connectors.permissions import SourceAccess, SourceUser

if TYPE_CHECKING:
    from knowledge.sources.connectors.github_api import GitHubApi
    from knowledge.sources.fetch import FetchSession

KIND = "github"
DEFAULT_URL = "https://api.github.com"
FETCH_BATCH = 20  # changed items handed to one fetch (`Connector.fetch`): a few MB at most
_OWNER = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})"
_REPO = r"[A-Za-z0-9._-]{1,100}"
_FOLDER = re.compile(rf"^(?P<owner>{_OWNER})(?:/(?P<repo>{_REPO}))?$")


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


class GitHubConnector:
    """A `Connector` and an `AccessReader` (`github_access.py`: a repository's items are read
    by whoever may read the repository)."""

    def __init__(self, api: GitHubApi) -> None:
        self._api = api
        self._lister = Lister(api)
        self._reader = Reader(api, self._lister)
        self._access = GitHubAccess(api, self._lister)

    @property
    def base_url(self) -> str:
        return self._api.base_url

    @property
    def requests(self) -> int:
        """Requests sent so far (304s included): what a sync cost."""
        return self._api.requests

    async def account(self) -> str:
        if self._api.app is None:
            user = await self._api.get_json("/user")
            return str(dig(user, "login") or "the token's account")
        app = await self._api.app_get("/app")
        installation = await self._api.app_get(
            f"/app/installations/{self._api.app.credentials.installation_id}"
        )
        await self._api.app.authorization()  # the installation token: proves the installation works
        name = dig(app, "name") or dig(app, "slug") or "the GitHub App"
        return f"{name} (installed on {login(dig(installation, 'account'))})"

    async def folders(self) -> list[Folder]:
        repos = await self._lister.accessible(Validators({}, fresh=True))
        found = [
            Folder(r.full_name, r.description or r.full_name, f"{r.visibility} repository", r.html_url)
            for r in sorted(repos, key=lambda r: r.full_name.lower())
        ]
        owners = sorted({r.owner: r for r in repos}.values(), key=lambda r: r.owner.lower())
        found += [
            Folder(
                r.owner, f"every repository of {r.owner} Lore can read", "owner", r.html_url.rsplit("/", 1)[0]
            )
            for r in owners
        ]
        return found

    def changed_since(
        self,
        folders: Sequence[FolderSpec],
        since: datetime | None,
        *,
        options: Mapping[str, Any] | None = None,
        state: State | None = None,
    ) -> AsyncIterator[Listed]:
        return self._lister.listing(folders, since, options=options, state=state)

    async def fetch(self, ids: Sequence[str]) -> list[Item | Skipped]:
        found: list[Item | Skipped] = []
        for item in await self._reader.fetch(ids):
            if isinstance(item, Item):
                repository = str(item.facts.get("repository") or repository_of(item.id))
                visibility = str(item.facts.get("visibility") or "private")
                item = replace(item, access=await self._access.item(repository, visibility))
            found.append(item)
        return found

    def item_access(
        self, folders: Sequence[FolderSpec], options: Mapping[str, Any] | None = None
    ) -> AsyncIterator[tuple[str, SourceAccess]]:
        return self._access.item_access(folders)

    async def group_members(self, name: str) -> list[SourceUser]:
        return await self._access.group_members(name)

    async def people(self, account_ids: Sequence[str]) -> list[SourceUser]:
        return await self._access.people(account_ids)

    async def attachments(self, item_id: str) -> list[AttachmentRef]:
        return []  # what a repository holds is listed by the tree, not attached to items

    async def download(self, attachment: AttachmentRef, max_bytes: int) -> bytes:
        raise ConnectorError("GitHub items have no attachments")


def open_github(
    session: FetchSession, base_url: str, credentials: Credentials, options: ApiOptions
) -> GitHubConnector:
    # Imported here: the registry lists this kind for the command grammar and every surface,
    # and the client brings aiohttp and PyJWT with it, which only a connection's work needs.
    from knowledge.sources.connectors.github_api import GitHubApi

    api = GitHubApi(session, base_url, credentials, options)
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
    syncs_permissions=True,
    access_key=lambda external_id, meta: repository_of(external_id),
    account_key=str.lower,
)
