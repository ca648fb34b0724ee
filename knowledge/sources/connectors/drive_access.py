"""Who may open a Drive file, in the terms of the source-permission model
(`knowledge.sources.connectors.permissions`): the Google Drive connector's permission sync
and group sync.

A file's access is one clause: the grantees of its `permissions` (Drive v3's `Permission`
resources; what `files.list` gives for a file the account may share, else
`permissions.list`, which for a shared drive's file includes the drive's members, marked
inherited in `permissionDetails`). Every role lets one open the file (reader, commenter,
writer, owner, fileOrganizer, organizer); deleted and pending-owner entries and roles Lore
does not know grant nothing; `allowFileDiscovery` says who may *find* it, not who may open it.

- `user` → `user:EMAIL`: the Slack user whose confirmed email it is;
- `group` → `group:EMAIL`, whose members a group sync reads from the Directory
  (`groups/{key}/members`, every page, nested groups followed), when the service account
  is allowed `admin.directory.group.member.readonly`. A group the Directory will not list
  (403, 404), and every group of a connection through one user's OAuth client, has no
  members Lore knows of: nobody reads through it;
- `domain` → `domain:acme.com`: everyone whose confirmed email is in that domain;
- `anyone` (with the link, or on the web) → the connection's Workspace domain (the domain of
  the user Lore reads Drive as), not the world; the attachment option `link_sharing: public`
  makes such a file public (whoever may read the index). A consumer account (gmail.com) has
  no Workspace domain: `anyone` then grants nothing.

A file whose permissions Drive will not give is readable by nobody (fail closed).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from knowledge.sources.connectors.base import FolderSpec, ItemRef, NoAccess
from knowledge.sources.connectors.drive_files import PERMISSION_FIELDS, DriveFile, Grant, NotFound, file_path
from knowledge.sources.connectors.drive_listing import DriveLister
from knowledge.sources.connectors.permissions import SourceAccess, SourceUser, domain, group, user

if TYPE_CHECKING:
    from knowledge.sources.connectors.drive_api import DriveApi

log = logging.getLogger(__name__)
READ_ROLES = frozenset({"reader", "commenter", "writer", "owner", "fileOrganizer", "organizer"})
CONSUMER_DOMAINS = frozenset({"gmail.com", "googlemail.com"})
"""Not a Workspace: "anyone at gmail.com" would be the world."""
PUBLIC = "public"
MEMBERS_PAGE = 200  # the Directory API's largest page of a group's members


def access_of(grants: Sequence[Grant] | None, workspace: str | None, link_sharing: str) -> SourceAccess:
    """A file's access from its permissions (None: Drive would not say, so nobody)."""
    if grants is None:
        return SourceAccess.nobody()
    grantees: set[str] = set()
    for grant in grants:
        if grant.role not in READ_ROLES:
            continue
        if grant.type == "user" and grant.email:
            grantees.add(user(grant.email))
        elif grant.type == "group" and grant.email:
            grantees.add(group(grant.email))
        elif grant.type == "domain" and grant.domain:
            grantees.add(domain(grant.domain))
        elif grant.type == "anyone":
            if link_sharing == PUBLIC:
                return SourceAccess.public()
            if workspace:
                grantees.add(domain(workspace))
    return SourceAccess.of([grantees])  # nobody named: nobody reads it (one empty clause)


def workspace_of(email: str | None) -> str | None:
    """The Workspace domain of an account's email; None for a consumer account."""
    found = (email or "").strip().lower().rpartition("@")[2]
    return found if found and found not in CONSUMER_DOMAINS else None


class DriveAccess:
    """Reads files' permissions (remembered for one connection's work) and groups' members."""

    def __init__(self, api: DriveApi, *, subject: str | None, directory: bool) -> None:
        self._api = api
        self._subject = subject
        """The user a service account acts as; None for one user's OAuth client."""
        self._directory = directory
        self._grants: dict[str, tuple[Grant, ...] | None] = {}
        self._workspace: str | None = None
        self._asked = False
        self.link_sharing = "domain"

    async def file(self, file: DriveFile) -> SourceAccess:
        """Who may open the file now (nobody when Drive won't say)."""
        grants = await self.grants(file)
        anyone = grants is not None and any(g.type == "anyone" for g in grants)
        workspace = await self.workspace() if anyone and self.link_sharing != PUBLIC else None
        return access_of(grants, workspace, self.link_sharing)

    async def grants(self, file: DriveFile) -> tuple[Grant, ...] | None:
        """Its permissions: as listed, else by `permissions.list` (None when Drive refuses)."""
        if file.grants is not None:
            return file.grants
        if file.id not in self._grants:
            self._grants[file.id] = await self._listed(file)
        return self._grants[file.id]

    async def _listed(self, file: DriveFile) -> tuple[Grant, ...] | None:
        params: dict[str, str | int | bool] = {
            "fields": f"nextPageToken,permissions({PERMISSION_FIELDS})",
            "supportsAllDrives": True,
            "pageSize": 100,
        }
        found: list[Grant] = []
        try:
            async for page in self._api.pages(file_path(file.id, "/permissions"), params):
                found += [g for g in map(Grant.from_json, page.get("permissions") or []) if g is not None]
        except (NoAccess, NotFound) as exc:
            log.warning("Drive won't say who may open %s, so no one may in Lore: %s", file.id, exc)
            return None
        return tuple(found)

    async def workspace(self) -> str | None:
        """The Workspace domain of the account Lore reads Drive as (asked once)."""
        if self._subject is not None:
            return workspace_of(self._subject)
        if not self._asked:
            about = await self._api.get_json("/about", {"fields": "user(emailAddress)"})
            user_info = about.get("user") if isinstance(about.get("user"), dict) else {}
            self._workspace = workspace_of(str((user_info or {}).get("emailAddress") or ""))
            self._asked = True
        return self._workspace

    async def item_access(
        self, folders: Sequence[FolderSpec], options: Mapping[str, Any] | None = None
    ) -> AsyncIterator[tuple[str, SourceAccess]]:
        """(file id, access) for every file a complete listing of the folders finds."""
        self.link_sharing = str((options or {}).get("link_sharing") or "domain")
        lister = DriveLister(self._api)
        async for listed in lister.listing(folders, None, {}):
            if isinstance(listed, ItemRef):
                yield listed.id, await self.file(lister.files[listed.id])

    async def group_members(self, name: str) -> list[SourceUser]:
        """The people in group `name` (an email), nested groups' included; none when the
        Directory won't say (or cannot be asked: one user's OAuth client)."""
        if not self._directory:
            log.info("group %s: no Directory through one user's OAuth client, so no members", name)
            return []
        found: dict[str, SourceUser] = {}
        if not await self._members(name.lower(), found, {name.lower()}):
            return []  # the group itself is unknown: not even the members read so far
        return list(found.values())

    async def _members(self, key: str, found: dict[str, SourceUser], seen: set[str]) -> bool:
        """Add the group's people to `found`; False when the Directory refused it."""
        url = f"{self._api.directory_url}/groups/{quote(key, safe='@')}/members"
        params: dict[str, str | int | bool] = {
            "maxResults": MEMBERS_PAGE,
            "fields": "nextPageToken,members(email,type,status)",
        }
        nested: list[str] = []
        try:
            async for page in self._api.pages(url, params, directory=True):
                for member in page.get("members") or []:
                    email = str(member.get("email") or "").strip().lower() if isinstance(member, dict) else ""
                    kind = str(member.get("type") or "USER") if isinstance(member, dict) else ""
                    if not email or member.get("status", "ACTIVE") != "ACTIVE":
                        continue
                    if kind == "GROUP" and email not in seen:
                        seen.add(email)
                        nested.append(email)
                    elif kind == "USER":
                        found[email] = SourceUser(email, email)
        except (NoAccess, NotFound) as exc:
            await self._api.say(
                f"group {key}: the Directory won't list its members, so no one reads through it ({exc})"
            )
            return False
        for inner in nested:
            await self._members(inner, found, seen)  # a nested group refused: fewer, never more
        return True

    async def people(self, account_ids: Sequence[str]) -> list[SourceUser]:
        """Drive names people by their email: it is their id."""
        return [SourceUser(a, a.lower() if "@" in a else None) for a in account_ids]
