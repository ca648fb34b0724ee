"""Use cases on document-level access from connected sources: what a reader may read (who
is asking, in the sources' terms), what an answer may use (who will see it), an admin's
explanation of why someone may or may not read a document, refreshing permissions now, the
principals admins grant (a service key), and the state of each source's syncs.

Who will see an answer decides what it may use. An answer posted in a channel is read by
everyone in it, and by whoever joins later, so it uses public documents only, whoever asks;
Lore does not compute the channel members' common access, since the members at the time
of the answer do not bound who reads it. A private answer (a DM, `/lore`, App Home, the
CLI, the HTTP API with a key made for a user) uses the asker's own access: their confirmed
email's accounts and groups in each connected source, and what an admin granted them.
A partner of another organisation reads public documents only.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.app.actions.errors import CONNECTORS
from bot.app.audit import AuditAction
from bot.app.conversations import Actor, place_of
from knowledge import CONNECTORS as KINDS
from knowledge import KnowledgeError, NotAllowed, grantee_of
from storage.access import Action, Place, allowed, may_manage_connectors, may_map_people
from storage.document_access import PUBLIC_ONLY, AccessFilter, DocumentAccess
from storage.records import ConnectionRef, DocumentRef, IndexRef, NotFound, SourceConfigRef, UserRef
from storage.repositories.sync_runs import SyncState
from storage.values import LOCAL_TENANT

if TYPE_CHECKING:
    from bot.app.services import Services
    from knowledge import GroupReport, PermissionReport
    from storage.repositories.slack_groups import GroupState

ADMINS_ONLY = "Only workspace admins can see why someone may or may not read a document."
SLACK_USER = re.compile(r"[UW][A-Z0-9]{2,20}")
MAPPING_ADMINS_ONLY = "Only workspace admins can say who someone is in a connected source."


@dataclass(frozen=True)
class Refreshed:
    """What `refresh permissions` did: the sources' permission and group syncs, and the
    Slack channels and user groups whose members were read again for restrictions."""

    reports: tuple[PermissionReport | GroupReport, ...]
    slack_groups: tuple[GroupState, ...]


@dataclass(frozen=True)
class AccountMapping:
    """A Slack user mapped to one account of a connected source (a GitHub login, an
    Atlassian account id): they read what that account may, in private."""

    user: UserRef
    connection: ConnectionRef
    account: str


@dataclass(frozen=True)
class Explanation:
    """Whether `user` may read `document`, and why (never its text)."""

    user: UserRef
    document: DocumentRef
    index: IndexRef
    may_search_index: bool
    """The permission table lets them search its index (privately)."""
    access: DocumentAccess
    principals: frozenset[str]
    """What they hold in the document's source."""
    unmet: tuple[frozenset[str], ...]
    """The clauses of the document's access none of their principals meets."""

    @property
    def readable(self) -> bool:
        return self.may_search_index and not self.access.unknown and not self.unmet


@dataclass(frozen=True)
class SourceStatus:
    """A connector attachment's permission sync, its connection's group sync, and how many
    of its documents are restricted."""

    source: SourceConfigRef
    permissions: SyncState
    groups: SyncState
    restricted: int


class AccessActions:
    def __init__(self, services: Services) -> None:
        self._services = services
        self._repository = services.source_access

    async def reader(self, user: UserRef) -> AccessFilter:
        """What `user` may read beyond public documents: their principals in the sources of
        their workspace (by confirmed email) and their grants. A partner: public only."""
        if user.home_team is not None:
            return PUBLIC_ONLY
        principals = await asyncio.to_thread(self._repository.principals, user.tenant_id, user.id, user.email)
        groups = await self._services.actions.restrictions.principals(user.tenant_id, user.external_id)
        return AccessFilter(principals | groups)

    async def for_place(self, place: Place) -> AccessFilter:
        """What may be shown at `place`: the user's access in a private place; in a channel,
        public documents and those restricted to that channel's members (for a partner,
        public documents only)."""
        if place.partner:
            return PUBLIC_ONLY
        if not place.is_private or place.user_id is None:
            return AccessFilter(await self._services.actions.restrictions.channel_principal(place))
        user = await asyncio.to_thread(self._services.directory.user, place.user_id)
        return await self.reader(user)

    async def for_answer(self, actor: Actor, *, private: bool) -> AccessFilter:
        """What an answer may use: the asker's access when only they will see it; in a
        channel, what its members may all read (`for_place`)."""
        if actor.place.partner:
            return PUBLIC_ONLY
        if not (private or actor.place.is_private):
            return AccessFilter(await self._services.actions.restrictions.channel_principal(actor.place))
        return await self.reader(actor.user)

    async def may_share(self, restricted: tuple[int, ...]) -> bool:
        """Whether an answer that drew on these documents may be posted in a channel: only
        if every one of them is public in its source now."""
        if not restricted:
            return True
        readable = await asyncio.to_thread(self._services.documents.readable, list(restricted), PUBLIC_ONLY)
        return readable >= set(restricted)

    async def readable(self, place: Place, documents: list[int]) -> set[int]:
        """Those of the documents the place may see."""
        access = await self.for_place(place)
        return await asyncio.to_thread(self._services.documents.readable, documents, access)

    # -- for admins -------------------------------------------------------------------------

    async def explain(self, place: Place, slack_user: str, reference: str) -> Explanation:
        """Whether the workspace's user `slack_user` may read the document `reference` (an
        id, a name or a URL), and why. Workspace admins only."""
        if not place.user_is_admin or place.partner:
            raise NotAllowed(ADMINS_ONLY)
        services = self._services
        user = await asyncio.to_thread(services.directory.ensure_user, place.tenant_id, slack_user)
        document, index = await self._document(place.tenant_id, reference)
        access = await asyncio.to_thread(services.documents.access, document.id)
        principals = (await self.for_place(place_of(services, user))).principals
        private = place_of(services, user)  # as they would ask: privately (a partner, as one)
        unmet = tuple(clause for clause in access.clauses if not clause & principals)
        return Explanation(
            user, document, index, allowed(Action.SEARCH, index.facts, private), access, principals, unmet
        )

    async def _document(self, tenant_id: str, reference: str) -> tuple[DocumentRef, IndexRef]:
        services = self._services
        wanted = reference.strip().strip("<>")
        indexes = {i.id: i for i in await asyncio.to_thread(services.indexes.list_for_tenant, tenant_id)}
        if wanted.isdigit():
            try:
                document = await asyncio.to_thread(services.documents.get, int(wanted))
            except NotFound:
                document = None
            if document is not None and document.index_id in indexes:
                return document, indexes[document.index_id]
        for index in indexes.values():
            for document in await asyncio.to_thread(
                services.documents.list_ready, index.id, limit=100_000, access=None
            ):
                if wanted.lower() in {
                    document.name.lower(),
                    (document.url or "").lower(),
                    document.source_key.lower(),
                }:
                    return document, index
        raise KnowledgeError(f"there is no document “{wanted}” in this workspace; give its id, name or URL")

    async def refresh(self, place: Place) -> Refreshed:
        """Sync every connected source's permissions and groups now (connector admins), and
        the members of the Slack channels and user groups restrictions name."""
        if not may_manage_connectors(place):
            raise NotAllowed(CONNECTORS)
        reports = await self._services.access_sync.refresh(place.tenant_id)
        members: list[GroupState] = []
        if self._services.slack_members is not None:
            members = await self._services.actions.restrictions.refresh(place.tenant_id)
        return Refreshed(tuple(reports), tuple(members))

    async def status(self, tenant_id: str) -> list[SourceStatus]:
        """Each connector attachment of the workspace: its last syncs and restricted count."""
        repository = self._repository
        found = []
        for connection in await self._services.connections.for_tenant(tenant_id):
            groups = await asyncio.to_thread(repository.groups_state, connection.id)
            for source in await asyncio.to_thread(
                self._services.connections.repository.attachments, connection.id
            ):
                found.append(
                    SourceStatus(
                        source,
                        await asyncio.to_thread(repository.permissions_state, source.id),
                        groups,
                        await asyncio.to_thread(repository.restricted_count, source.id),
                    )
                )
        return found

    async def grant(self, place: Place, user: UserRef, principal: str, *, revoke: bool = False) -> bool:
        """Grant (or revoke) a source principal to a Lore user (a service key's user, say);
        workspace admins only. False when nothing changed."""
        if not may_map_people(place):
            raise NotAllowed("Only workspace admins can grant what a source lets someone read.")
        parsed = grantee_of(principal)
        connections = {c.id for c in await self._services.connections.for_tenant(place.tenant_id)}
        if parsed is None or parsed[0] not in connections:
            raise KnowledgeError(
                f"“{principal}” is not a principal of a source of this workspace; they look like "
                "`3:group:finance` or `3:user:ACCOUNT` (3 being the source's id in `lore source list`)"
            )
        if revoke:
            changed = await asyncio.to_thread(self._repository.revoke, user.id, principal)
        else:
            changed = await asyncio.to_thread(
                self._repository.grant, user.id, principal, granted_by=place.user_id
            )
        if changed:
            action = AuditAction.ACCESS_REVOKE if revoke else AuditAction.ACCESS_GRANT
            await self._services.audit.record(place, action, principal, user=user.external_id)
        return changed

    # -- mapping people to the sources' accounts ------------------------------------------

    async def map(
        self, place: Place, slack_user: str, account: str, source: str | None = None
    ) -> tuple[AccountMapping, bool]:
        """Map the workspace's user `slack_user` to `account` of a connected source that
        syncs permissions (`source`: its id, name, host or kind; none: the only one), in
        place of any account of that source they were mapped to. Workspace admins only.
        It holds from their next question on: readers' principals are read per question.
        True when something changed."""
        if not may_map_people(place):
            raise NotAllowed(MAPPING_ADMINS_ONLY)
        connection = await self._mappable(place.tenant_id, source)
        wanted = account.strip().lstrip("@")
        if not wanted or any(c.isspace() for c in wanted) or len(wanted) > 200:
            raise KnowledgeError(f"“{account}” is not an account name; give a login or an account id as is")
        account_key = KINDS[connection.kind].account_key
        mapping = AccountMapping(
            await self._person(place.tenant_id, slack_user), connection, account_key(wanted)
        )
        principal = f"{connection.id}:user:{mapping.account}"
        if principal in await asyncio.to_thread(self._repository.grants, mapping.user.id):
            return mapping, False
        was = await asyncio.to_thread(self._repository.unmap, mapping.user.id, connection.id)
        await asyncio.to_thread(self._repository.grant, mapping.user.id, principal, granted_by=place.user_id)
        await self._services.audit.record(
            place,
            AuditAction.ACCESS_MAP,
            f"{mapping.user.external_id} → {connection.kind} {mapping.account}",
            user=mapping.user.external_id,
            source=connection.id,
            account=mapping.account,
            replaced=[p.split(":", 2)[2] for p in was],
        )
        return mapping, True

    async def unmap(self, place: Place, slack_user: str, source: str | None = None) -> list[AccountMapping]:
        """Take back the mapping of `slack_user` to an account of the source (all of them,
        when `source` is None and several are mapped). Workspace admins only."""
        if not may_map_people(place):
            raise NotAllowed(MAPPING_ADMINS_ONLY)
        person = await self._person(place.tenant_id, slack_user)
        connections = (
            [await self._mappable(place.tenant_id, source)]
            if source is not None
            else await self._services.connections.for_tenant(place.tenant_id)
        )
        removed: list[AccountMapping] = []
        for connection in connections:
            for principal in await asyncio.to_thread(self._repository.unmap, person.id, connection.id):
                mapping = AccountMapping(person, connection, principal.split(":", 2)[2])
                removed.append(mapping)
                await self._services.audit.record(
                    place,
                    AuditAction.ACCESS_UNMAP,
                    f"{person.external_id} → {connection.kind} {mapping.account}",
                    user=person.external_id,
                    source=connection.id,
                    account=mapping.account,
                )
        return removed

    async def mappings(self, place: Place) -> list[AccountMapping]:
        """Everyone of the workspace mapped to an account of one of its sources. Workspace admins only."""
        if not may_map_people(place):
            raise NotAllowed(MAPPING_ADMINS_ONLY)
        connections = {c.id: c for c in await self._services.connections.for_tenant(place.tenant_id)}
        rows = await asyncio.to_thread(self._repository.mappings, list(connections))
        directory = self._services.directory
        found = []
        for user_id, principal in rows:
            parsed = grantee_of(principal)
            if parsed is not None:
                person = await asyncio.to_thread(directory.user, user_id)
                found.append(AccountMapping(person, connections[parsed[0]], parsed[2]))
        return found

    async def _mappable(self, tenant_id: str, source: str | None) -> ConnectionRef:
        """The connection a mapping is to: one whose source says who may read its items."""
        connections = self._services.connections
        wanted = (source or "").strip()
        if not wanted:
            mappable = [c for c in await connections.for_tenant(tenant_id) if _knows_people(c.kind)]
            if len(mappable) == 1:
                return mappable[0]
            if mappable:
                names = ", ".join(f"{c.id} ({KINDS[c.kind].label} {c.name})" for c in mappable)
                raise KnowledgeError(f"several connected sources know people ({names}); say which one")
        connection = await connections.find(tenant_id, wanted or None)
        if not _knows_people(connection.kind):
            label = KINDS[connection.kind].label if connection.kind in KINDS else connection.kind
            raise KnowledgeError(
                f"{label} does not say who may read its pages, so there is no account to map "
                "someone to; restrict its attachment to a Slack channel or user group instead"
            )
        return connection

    async def _person(self, tenant_id: str, slack_user: str) -> UserRef:
        wanted = slack_user.strip().strip("<>@").split("|")[0]
        if not wanted:
            raise KnowledgeError("say whom: a Slack user id (U…) or a mention")
        if tenant_id != LOCAL_TENANT and not SLACK_USER.fullmatch(wanted):
            raise KnowledgeError(
                f"“{wanted}” is not a Slack user id; mention them (@name) so Slack gives their id, or give it (U…)"
            )
        return await asyncio.to_thread(self._services.directory.ensure_user, tenant_id, wanted)


def _knows_people(kind: str) -> bool:
    """Whether a connection of this kind names its people in documents' access (so someone
    may be mapped to one of them)."""
    found = KINDS.get(kind)
    return found is not None and found.syncs_permissions
