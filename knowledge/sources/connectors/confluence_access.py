"""Who may read a Confluence page, as Confluence decides it (Cloud and Data Center alike).

A person sees a page when they may view its space **and** satisfy the view restriction of
the page and of every ancestor that has one: view restrictions are inherited down the tree
and add up, edit restrictions are not and do not restrict viewing. So a page's access is one
clause for the space (unless anonymous users may view the space: then none) and one per
view-restricted page on its path, each clause the users and groups listed there.

Space permissions: Cloud lists them on the space (`expand=permissions`), Data Center (9.1+)
at `/rest/api/space/{key}/permissions`; reading them needs the space's admin permission, and
a space whose permissions Lore cannot read leaves its pages unreadable (fail closed).
Page restrictions come with the listing (`expand=restrictions.read.restrictions.user,…`);
a restriction listed only in part, and an ancestor outside what is listed, are read from
`/rest/api/content/{id}/restriction/byOperation/read`. Group members: Cloud by group id
(`/rest/api/group/by-name`, then `…/membersByGroupId`), Data Center by name
(`/rest/api/group/{name}/member`); people by id (`/rest/api/user?accountId=` on Cloud,
`?key=` on Data Center), with their email where the site shows it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from knowledge.sources.connectors.base import ConnectorError, NoAccess
from knowledge.sources.connectors.permissions import SourceAccess, SourceUser, group, user

if TYPE_CHECKING:
    from knowledge.sources.connectors.confluence_api import ConfluenceApi, Json

RESTRICTION_EXPAND = "restrictions.read.restrictions.user,restrictions.read.restrictions.group"
ACCESS_LISTING_EXPAND = f"{RESTRICTION_EXPAND},ancestors,space"
RESTRICTION_PAGE = 100  # users or groups of a restriction per request (the API's largest page)
PAGE_SIZE = 50  # as the listing (`confluence.PAGE_SIZE`)


@dataclass(frozen=True)
class Listed:
    """A page as a permission sync lists it: its space, its own view restriction as listed
    (None: none listed; a partial one is read again in full), its ancestors' ids (root first)."""

    id: str
    space: str
    restriction: frozenset[str] | None
    ancestors: tuple[str, ...]


def _get(data: Any, *path: str) -> Any:
    for key in path:
        data = data.get(key) if isinstance(data, dict) else None
    return data


def account_of(person: Any) -> str | None:
    """A person's id as restrictions and memberships name them: Cloud's account id, Data
    Center's user key (or, failing that, username)."""
    if not isinstance(person, dict):
        return None
    found = person.get("accountId") or person.get("userKey") or person.get("username")
    return str(found) if found else None


def person(data: Any) -> SourceUser | None:
    account = account_of(data)
    if account is None:
        return None
    email = data.get("email") or _get(data, "details", "personal", "email")
    name = data.get("displayName") or data.get("publicName") or data.get("username") or ""
    return SourceUser(account, str(email).strip().lower() or None if email else None, str(name))


def restriction_of(restrictions: Any) -> tuple[frozenset[str] | None, bool]:
    """The grantees of a `read` restriction object (`{"user": {"results": …}, "group": …}`),
    None when it names no one (no restriction); and whether it was listed only in part."""
    users = _get(restrictions, "user") or {}
    groups = _get(restrictions, "group") or {}
    found: set[str] = set()
    partial = False
    for listing, make, key in ((users, user, None), (groups, group, "name")):
        results = [r for r in (listing.get("results") or []) if isinstance(r, dict)]
        for entry in results:
            value = account_of(entry) if key is None else entry.get(key)
            if value:
                found.add(make(str(value)))
        size = listing.get("totalSize", listing.get("size"))
        if (isinstance(size, int) and size > len(results)) or _get(listing, "_links", "next"):
            partial = True
    return (frozenset(found) or None), partial


class ConfluenceAccess:
    """Reads permissions through a `ConfluenceApi`; remembers spaces and restrictions for
    the life of one sync."""

    def __init__(self, api: ConfluenceApi, *, cloud: bool) -> None:
        self._api = api
        self._cloud = cloud
        self._spaces: dict[str, frozenset[str] | None] = {}
        self._restrictions: dict[str, frozenset[str] | None] = {}

    def remember(self, content: Json) -> None:
        """Keep what a listing or fetch already says of a page's own restriction (unless it
        said only part of it: then it is read in full when needed)."""
        page_id = str(content.get("id"))
        found, partial = restriction_of(_get(content, "restrictions", "read", "restrictions"))
        if _get(content, "restrictions", "read") is not None and not partial:
            self._restrictions[page_id] = found

    async def page_access(self, space: str, page_id: str, ancestors: Sequence[str]) -> SourceAccess:
        """Who may read the page: its space's clause and every view restriction on its path.
        Raises `ConnectorError` when Confluence cannot say."""
        clauses: list[frozenset[str]] = []
        space_clause = await self.space_clause(space)
        if space_clause is not None:
            clauses.append(space_clause)
        for on_path in (*ancestors, page_id):
            restriction = await self.restriction(on_path)
            if restriction is not None:
                clauses.append(restriction)
        return SourceAccess(tuple(clauses))

    async def space_clause(self, key: str) -> frozenset[str] | None:
        """Who may view the space (None: anonymous users may, so everyone)."""
        if key not in self._spaces:
            self._spaces[key] = await (self._cloud_space(key) if self._cloud else self._center_space(key))
        return self._spaces[key]

    async def _cloud_space(self, key: str) -> frozenset[str] | None:
        space = await self._api.get_json(f"/rest/api/space/{quote(key, safe='~')}", {"expand": "permissions"})
        permissions = space.get("permissions")
        if not isinstance(permissions, list):
            raise _unreadable(key)
        viewers: set[str] = set()
        for permission in permissions:
            operation = _get(permission, "operation") or {}
            if operation.get("operation") != "read" or operation.get("targetType") != "space":
                continue
            if permission.get("anonymousAccess") is True:
                return None
            for entry in _get(permission, "subjects", "user", "results") or []:
                if (account := account_of(entry)) is not None:
                    viewers.add(user(account))
            for entry in _get(permission, "subjects", "group", "results") or []:
                if isinstance(entry, dict) and entry.get("name"):
                    viewers.add(group(str(entry["name"])))
        return frozenset(viewers)

    async def _center_space(self, key: str) -> frozenset[str] | None:
        listing = await self._api.get_list(f"/rest/api/space/{quote(key, safe='~')}/permissions")
        viewers: set[str] = set()
        for permission in listing:
            operation = _get(permission, "operation") or {}
            if operation.get("operationKey") != "read" or operation.get("targetType") != "space":
                continue
            subject = _get(permission, "subject") or {}
            kind = subject.get("type")
            if kind == "anonymous":
                return None
            if kind == "user" and (account := account_of(subject)) is not None:
                viewers.add(user(account))
            elif kind == "group" and subject.get("name"):
                viewers.add(group(str(subject["name"])))
        return frozenset(viewers)

    async def restriction(self, page_id: str) -> frozenset[str] | None:
        """The page's own view restriction (None: it has none), read in full."""
        if page_id not in self._restrictions:
            found: set[str] = set()
            start = 0
            while True:
                data = await self._api.get_json(
                    f"/rest/api/content/{page_id}/restriction/byOperation/read",
                    {
                        "expand": "restrictions.user,restrictions.group",
                        "start": start,
                        "limit": RESTRICTION_PAGE,
                    },
                )
                page, _ = restriction_of(_get(data, "restrictions"))
                found |= page or set()
                counts = [
                    len(_get(data, "restrictions", kind, "results") or []) for kind in ("user", "group")
                ]
                if max(counts) < RESTRICTION_PAGE:
                    break
                start += RESTRICTION_PAGE
            self._restrictions[page_id] = frozenset(found) or None
        return self._restrictions[page_id]

    async def listing(self, cql: str) -> AsyncIterator[Listed]:
        """Every page the CQL finds, with what its access needs and no body."""
        params: dict[str, str | int] = {"cql": cql, "limit": PAGE_SIZE, "expand": ACCESS_LISTING_EXPAND}
        async for content in self._api.results("/rest/api/content/search", params):
            self.remember(content)
            ancestors = tuple(
                str(a.get("id"))
                for a in content.get("ancestors") or []
                if isinstance(a, dict) and a.get("id")
            )
            space = str(_get(content, "space", "key") or "")
            own, _ = restriction_of(_get(content, "restrictions", "read", "restrictions"))
            yield Listed(str(content.get("id")), space, own, ancestors)

    async def group_members(self, name: str) -> list[SourceUser]:
        """The group's members; none for a group Confluence does not have (any more)."""
        from knowledge.sources.connectors.confluence_api import NotFound

        try:
            if self._cloud:
                found = await self._api.get_json("/rest/api/group/by-name", {"name": name})
                group_id = found.get("id")
                if not group_id:
                    raise ConnectorError(f"Confluence did not say which group {name} is")
                path = f"/rest/api/group/{quote(str(group_id), safe='')}/membersByGroupId"
            else:
                path = f"/rest/api/group/{quote(name, safe='')}/member"
            return [m async for e in self._api.results(path, {"limit": PAGE_SIZE}) if (m := person(e))]
        except NotFound:
            return []

    async def people(self, account_ids: Sequence[str]) -> list[SourceUser]:
        found = []
        for account in account_ids:
            data = await self._api.get_json(
                "/rest/api/user", {"accountId" if self._cloud else "key": account}
            )
            if (someone := person(data)) is not None:
                found.append(someone)
        return found

    async def item_access(self, cql: str) -> AsyncIterator[tuple[str, SourceAccess]]:
        """(page id, access) for every page the CQL lists: the whole listing first, so that
        ancestors listed after their descendants are known without asking again."""
        pages = [page async for page in self.listing(cql)]
        for page in pages:
            yield page.id, await self.page_access(page.space, page.id, page.ancestors)


def _unreadable(space: str) -> ConnectorError:
    return NoAccess(
        f"Lore's Confluence account can't see who may read the space {space}; give it the space's "
        "admin permission so that Lore can tell who may read its pages (until then they are "
        "readable by no one in Lore)"
    )
