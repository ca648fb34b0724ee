"""Who may read a GitHub repository's items, in the terms of the source-permission model
(`knowledge.sources.connectors.permissions`): the GitHub connector's permission sync and
group sync.

Access is the repository's: every file, issue, pull request and discussion of a repository
is read by whoever may read the repository. A public repository is public. A private or
internal one is readable by its collaborators as GitHub lists them
(`/repos/{o}/{r}/collaborators?affiliation=all`: direct and outside collaborators, and the
organisation's members who reach it through a team or the base permission), and by the
members of the teams given access (`/repos/{o}/{r}/teams`), as groups named `{org}/{slug}`
whose members a group sync reads (`/orgs/{org}/teams/{slug}/members`), so that someone
added to a team reads its repositories after the next group sync. (Every member of an
enterprise may read an internal repository; Lore cannot list them, so only the ones GitHub
names as collaborators or team members do: fewer, never more.)

People are tied to Slack by their emails on the organisation's verified domains (GraphQL
`organizationVerifiedDomainEmails`), the only emails GitHub vouches for; someone with none
reads public repositories only (an admin may map them: `lore access map U… LOGIN`). Logins
are case-insensitive on GitHub, so Lore names people by their lower-cased login.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any

from knowledge.sources.connectors.base import ConnectorError, FolderSpec
from knowledge.sources.connectors.github_listing import Lister, Validators
from knowledge.sources.connectors.github_repos import NotFound, dig
from knowledge.sources.connectors.paging import paged
from knowledge.sources.connectors.permissions import SourceAccess, SourceUser, group, user

if TYPE_CHECKING:
    from knowledge.sources.connectors.github_api import GitHubApi

log = logging.getLogger(__name__)
PAGE_SIZE = 100  # GitHub's largest page
MAX_PAGES = 1_000  # a loop guard: 100,000 collaborators or members
PEOPLE_PER_QUERY = 50
"""Users looked up per GraphQL query (each an aliased `user` field)."""


def repository_of(item_id: str) -> str:
    """The repository an item id (`owner/repo:file:docs/x.md`) is of, as access is keyed."""
    return item_id.partition(":")[0].lower()


class GitHubAccess:
    """Reads repositories' access (remembered for one connection's work) and teams' members."""

    def __init__(self, api: GitHubApi, lister: Lister) -> None:
        self._api = api
        self._lister = lister
        self._known: dict[str, SourceAccess] = {}
        self._orgs: list[str] | None = None

    async def item_access(self, folders: Sequence[FolderSpec]) -> AsyncIterator[tuple[str, SourceAccess]]:
        """(repository, access) for every repository the folders name; a repository that is
        gone or hidden from these credentials is not listed (its documents: nobody)."""
        repos, _ = await self._lister.resolve(folders, Validators({}, fresh=True))
        for repo in repos:
            yield repo.full_name.lower(), await self.repository(repo.full_name, repo.visibility)

    async def repository(self, full_name: str, visibility: str) -> SourceAccess:
        """Who may read the repository now (`ConnectorError` when GitHub won't say)."""
        key = full_name.lower()
        if key not in self._known:
            self._known[key] = await self._read(full_name, visibility)
        return self._known[key]

    async def item(self, full_name: str, visibility: str) -> SourceAccess:
        """An item's access as it is fetched: its repository's, or nobody's when GitHub won't
        say (fail closed; the next permission sync says why)."""
        try:
            return await self.repository(full_name, visibility)
        except ConnectorError as exc:
            log.warning("who may read %s is unknown, its items are unreadable: %s", full_name, exc)
            return SourceAccess.nobody()

    async def _read(self, full_name: str, visibility: str) -> SourceAccess:
        if visibility == "public":
            return SourceAccess.public()
        people = await self._all(f"/repos/{full_name}/collaborators", {"affiliation": "all"})
        teams = await self._all(f"/repos/{full_name}/teams", {})
        owner = full_name.split("/", 1)[0]
        grantees = {user(str(p["login"]).lower()) for p in people if isinstance(p, dict) and p.get("login")}
        grantees |= {group(f"{owner}/{t['slug']}") for t in teams if isinstance(t, dict) and t.get("slug")}
        return SourceAccess.of([grantees])  # nobody named: nobody reads it (one empty clause)

    async def group_members(self, name: str) -> list[SourceUser]:
        """The members of team `{org}/{slug}` (a team GitHub no longer has: none)."""
        org, _, slug = name.partition("/")
        if not org or not slug:
            return []
        try:
            members = await self._all(f"/orgs/{org}/teams/{slug}/members", {})
        except NotFound:
            return []
        return [
            SourceUser(str(m["login"]).lower()) for m in members if isinstance(m, dict) and m.get("login")
        ]

    async def people(self, logins: Sequence[str]) -> list[SourceUser]:
        """The people, with their emails on the verified domains of the organisations whose
        repositories these credentials read (none where GitHub won't tell)."""
        orgs = await self._organisations()
        found: list[SourceUser] = []
        for start in range(0, len(logins), PEOPLE_PER_QUERY):
            found += await self._emails(list(logins[start : start + PEOPLE_PER_QUERY]), orgs)
        return found

    async def _organisations(self) -> list[str]:
        if self._orgs is None:
            repos = await self._lister.accessible(Validators({}, fresh=True))
            self._orgs = sorted({r.owner for r in repos if r.organization})
        return self._orgs

    async def _emails(self, logins: list[str], orgs: list[str]) -> list[SourceUser]:
        if not orgs:
            return [SourceUser(login) for login in logins]
        fields = " ".join(f"e{n}: organizationVerifiedDomainEmails(login: $o{n})" for n in range(len(orgs)))
        users = " ".join(f"u{n}: user(login: $u{n}) {{ login {fields} }}" for n in range(len(logins)))
        names = [f"$o{n}: String!" for n in range(len(orgs))] + [
            f"$u{n}: String!" for n in range(len(logins))
        ]
        variables: dict[str, object] = {f"o{n}": o for n, o in enumerate(orgs)}
        variables |= {f"u{n}": login for n, login in enumerate(logins)}
        try:
            data = await self._api.graphql(f"query({', '.join(names)}) {{ {users} }}", variables)
        except ConnectorError as exc:  # unmapped is safe: they read public repositories only
            log.warning("GitHub gave no verified emails for %d people: %s", len(logins), exc)
            return [SourceUser(login) for login in logins]
        found = []
        for n, login in enumerate(logins):
            node: Any = data.get(f"u{n}")
            emails = [e for k in range(len(orgs)) for e in dig(node, f"e{k}") or [] if isinstance(e, str)]
            found.append(SourceUser(login, emails[0].lower() if emails else None))
        return found

    async def _all(self, path: str, params: dict[str, str | int]) -> list[Any]:
        """Every page of a REST listing."""
        found: list[Any] = []
        first = self._api.url(path, {**params, "per_page": PAGE_SIZE})
        too_long = f"GitHub's listing of {path} ran past {MAX_PAGES} pages"
        async for response in paged(
            first,
            self._api.get,
            lambda r: r.next,
            too_long=too_long,
            max_pages=MAX_PAGES,
            error=ConnectorError,
        ):
            found += response.data if isinstance(response.data, list) else []
        return found
