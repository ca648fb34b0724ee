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
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.app.actions.errors import CONNECTORS
from bot.app.conversations import Actor, place_of
from knowledge import KnowledgeError, NotAllowed, grantee_of
from storage.access import Action, Place, allowed, may_manage_connectors
from storage.document_access import PUBLIC_ONLY, AccessFilter, DocumentAccess
from storage.records import DocumentRef, IndexRef, NotFound, SourceConfigRef, UserRef
from storage.repositories.source_access import SyncState

if TYPE_CHECKING:
    from bot.app.services import Services
    from knowledge import GroupReport, PermissionReport

ADMINS_ONLY = "Only workspace admins can see why someone may or may not read a document."


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
        return AccessFilter(principals)

    async def for_place(self, place: Place) -> AccessFilter:
        """What may be shown at `place`: the user's access in a private place; public
        documents only in a channel (or for a partner)."""
        if not place.is_private or place.partner or place.user_id is None:
            return PUBLIC_ONLY
        user = await asyncio.to_thread(self._services.directory.user, place.user_id)
        return await self.reader(user)

    async def for_answer(self, actor: Actor, *, private: bool) -> AccessFilter:
        """What an answer may use: the asker's access when only they will see it."""
        if not (private or actor.place.is_private) or actor.place.partner:
            return PUBLIC_ONLY
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

    async def refresh(self, place: Place) -> list[PermissionReport | GroupReport]:
        """Sync every connected source's permissions and groups now (connector admins)."""
        if not may_manage_connectors(place):
            raise NotAllowed(CONNECTORS)
        return await self._services.access_sync.refresh(place.tenant_id)

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
        if not place.user_is_admin or place.partner:
            raise NotAllowed("Only workspace admins can grant what a source lets someone read.")
        parsed = grantee_of(principal)
        connections = {c.id for c in await self._services.connections.for_tenant(place.tenant_id)}
        if parsed is None or parsed[0] not in connections:
            raise KnowledgeError(
                f"“{principal}” is not a principal of a source of this workspace; they look like "
                "`3:group:finance` or `3:user:ACCOUNT` (3 being the source's id in `lore source list`)"
            )
        if revoke:
            return await asyncio.to_thread(self._repository.revoke, user.id, principal)
        return await asyncio.to_thread(self._repository.grant, user.id, principal, granted_by=place.user_id)
