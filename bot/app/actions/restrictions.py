"""Restricting a connector attachment to the members of Slack channels and user groups: for a
source that says nobody's permissions (Notion's API tells an internal integration no one's),
or to narrow what one that does lets through.

The restriction is one more clause of each of the attachment's documents' access
(`storage.document_access.restriction`): a reader must be a member of one of its groups,
besides whatever the source itself asks. Members are read from Slack (conversations.members,
usergroups.users.list, through `SlackMembers`) when the restriction is set, and again on the
permission sync's schedule; a read that fails leaves the group with no members (fail
closed). A private answer uses the asker's groups; an answer posted in a channel may use what
is restricted to that very channel (whoever reads it there is one of its members), once its
members were read, unless the channel is shared with another organisation.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Protocol

from bot.app.audit import AuditAction
from knowledge import CONNECTORS, KnowledgeError, NotAllowed, worker_name
from storage.access import Place, may_restrict_sources
from storage.document_access import RESTRICTED_TO, DocumentAccess, restriction, slack_principal
from storage.records import IndexRef, SourceConfigRef
from storage.repositories.slack_groups import GroupState, SlackGroupRepository
from storage.values import utcnow

if TYPE_CHECKING:
    from bot.app.services import Services

log = logging.getLogger(__name__)
CLAIM = timedelta(minutes=10)
"""How long a process may take to read a group's members on schedule before another may."""
NOT_ALLOWED = "Only workspace admins and connector admins can restrict what a connected source brings."
GROUP_KINDS = ("channel", "usergroup")


class MembershipError(KnowledgeError):
    """Slack would not say who is in a channel or user group."""


class SlackMembers(Protocol):
    """Who is in a Slack channel or user group, every page of them (`MembershipError` when
    Slack won't say)."""

    async def members(self, tenant_id: str, group_key: str) -> list[str]: ...


@dataclass(frozen=True)
class Restricted:
    """An attachment's restriction after a change: its groups (none: lifted), their
    members as read now, and how many of its documents changed access."""

    source: SourceConfigRef
    index: IndexRef
    groups: tuple[GroupState, ...]
    names: tuple[str, ...]
    changed: int


class RestrictionActions:
    def __init__(self, services: Services) -> None:
        self._services = services
        self._groups = SlackGroupRepository(services.db)

    # -- for admins -------------------------------------------------------------------------

    async def restrict(
        self,
        place: Place,
        source: str,
        index: str | None,
        groups: Sequence[str],
        names: Sequence[str] = (),
    ) -> Restricted:
        """Restrict the attachment `source` (a connector kind, a connection's name or host,
        or one of its folders; `index` when several match) to the members of `groups`
        (`channel:C…`, `usergroup:S…`); no groups lifts the restriction. Their members are
        read now: a failed read leaves the documents to nobody (fail closed), and says so."""
        if not may_restrict_sources(place):
            raise NotAllowed(NOT_ALLOWED)
        attachment, found = await self._attachment(place.tenant_id, source, index)
        return await self.restrict_attachment(place, attachment, found, groups, names)

    async def restrict_attachment(
        self,
        place: Place,
        attachment: SourceConfigRef,
        index: IndexRef,
        groups: Sequence[str],
        names: Sequence[str] = (),
    ) -> Restricted:
        """`restrict`, for an attachment already found (of `index`, in the place's workspace)."""
        if not may_restrict_sources(place):
            raise NotAllowed(NOT_ALLOWED)
        if index.tenant_id != place.tenant_id or attachment.index_id != index.id:
            raise KnowledgeError("there is no such attachment here")
        if attachment.kind not in CONNECTORS:
            raise KnowledgeError("only a connected source's attachment can be restricted to Slack groups")
        keys = tuple(dict.fromkeys(_checked(g) for g in groups))
        shown = {key: _default_name(key) for key in keys} | dict(zip(keys, names, strict=False))
        options = {RESTRICTED_TO: list(keys), "restricted_names": [shown[k] for k in keys]}
        attachment = await asyncio.to_thread(self._services.sources.set_options, attachment.id, options)
        states = [await self._read(place.tenant_id, key) for key in keys]
        changed = await self._apply(attachment)
        await self._forget_unused(place.tenant_id)
        action = AuditAction.SOURCE_RESTRICT if keys else AuditAction.SOURCE_UNRESTRICT
        await self._services.audit.record(
            place,
            action,
            f"{attachment.kind} {', '.join(attachment.folders)}",
            groups=list(keys),
            index=index.name,
        )
        return Restricted(attachment, index, tuple(states), tuple(shown[k] for k in keys), changed)

    async def _attachment(
        self, tenant_id: str, source: str, index: str | None
    ) -> tuple[SourceConfigRef, IndexRef]:
        services = self._services
        wanted = source.strip().lower()
        indexes = {i.id: i for i in await asyncio.to_thread(services.indexes.list_for_tenant, tenant_id)}
        matches = []
        for connection in await services.connections.for_tenant(tenant_id):
            kind = CONNECTORS.get(connection.kind)
            names = {connection.kind, connection.name.lower(), str(connection.id)}
            names |= {kind.label.lower(), *kind.aliases} if kind else set()
            for attached in await asyncio.to_thread(
                services.connections.repository.attachments, connection.id
            ):
                folders = {f.lower() for f in attached.folders}
                if attached.index_id in indexes and (wanted in names or wanted in folders):
                    matches.append(attached)
        if index is not None:
            matches = [m for m in matches if indexes[m.index_id].name.lower() == index.strip().lower()]
        if not matches:
            raise KnowledgeError(
                f"no connected source “{source}” is attached to {f'the {index} index' if index else 'an index'} "
                "here; see `lore source list`"
            )
        if len(matches) > 1:
            where = ", ".join(sorted({indexes[m.index_id].name for m in matches}))
            raise KnowledgeError(f"“{source}” is attached to several indexes ({where}); say which index")
        return matches[0], indexes[matches[0].index_id]

    async def _apply(self, attachment: SourceConfigRef) -> int:
        """Give the attachment's documents their access with the restriction as it is now:
        for a source that syncs permissions, through its permission sync; else directly (a
        connector that syncs no permissions gives its items none of their own, as
        `ConnectorSync` does: public, then the restriction's clause)."""
        if _syncs_permissions(attachment.kind):
            report = await self._services.access_sync.permissions(attachment)
            return report.changed
        narrowed = restriction(attachment.options)
        documents = await asyncio.to_thread(self._services.sources.documents, attachment.id)
        changes = {d.id: DocumentAccess.public().also(narrowed) for d in documents}
        return len(await asyncio.to_thread(self._services.documents.set_access, changes))

    # -- keeping members fresh ----------------------------------------------------------------

    async def refresh(
        self, tenant_id: str | None = None, *, every: timedelta | None = None
    ) -> list[GroupState]:
        """Read again the members of the groups restrictions name (of one workspace, or of
        all), those not read within `every` (all when None), and then re-apply each
        restricted attachment's clause to its documents (a content sync that ran meanwhile
        may have missed a change of it)."""
        retry = timedelta(minutes=5)
        states: list[GroupState] = []
        for tenant, attachments in (await self._restricted(tenant_id)).items():
            keys = sorted({k for a in attachments for k in a.options.get(RESTRICTED_TO) or ()})
            due = (
                keys
                if every is None
                else await asyncio.to_thread(
                    self._groups.claim_due, tenant, keys, every, retry, worker_name(), utcnow() + CLAIM
                )
            )
            if not due:
                continue
            states += [await self._read(tenant, key) for key in due]
            for attachment in attachments:  # a permission sync adds the clause itself
                if not _syncs_permissions(attachment.kind):
                    await self._apply(attachment)
        return states

    async def _restricted(self, tenant_id: str | None) -> dict[str, list[SourceConfigRef]]:
        services = self._services
        connections = (
            await services.connections.for_tenant(tenant_id)
            if tenant_id is not None
            else await services.connections.every(list(CONNECTORS))
        )
        found: dict[str, list[SourceConfigRef]] = {}
        for connection in connections:
            for attached in await asyncio.to_thread(
                services.connections.repository.attachments, connection.id
            ):
                if restriction(attached.options) is not None:
                    found.setdefault(connection.tenant_id, []).append(attached)
        return found

    async def _read(self, tenant_id: str, key: str) -> GroupState:
        reader = self._services.slack_members
        try:
            if reader is None:
                raise MembershipError("Lore has no Slack token here to read who is in it")
            members = await reader.members(tenant_id, key)
        except MembershipError as exc:
            log.warning("members of %s in %s unknown, nobody reads through it: %s", key, tenant_id, exc)
            await asyncio.to_thread(self._groups.replace, tenant_id, key, None, str(exc))
        else:
            await asyncio.to_thread(self._groups.replace, tenant_id, key, members)
        return await asyncio.to_thread(self._groups.state, tenant_id, key)

    async def _forget_unused(self, tenant_id: str) -> None:
        attachments = (await self._restricted(tenant_id)).get(tenant_id, [])
        keep = {k for a in attachments for k in a.options.get(RESTRICTED_TO) or ()}
        await asyncio.to_thread(self._groups.forget_unused, tenant_id, keep)

    # -- who reads through them ---------------------------------------------------------------

    async def principals(self, tenant_id: str, user_external_id: str) -> frozenset[str]:
        """The Slack groups' principals a user holds (as their members were last read)."""
        groups = await asyncio.to_thread(self._groups.groups_of, tenant_id, user_external_id)
        return frozenset(slack_principal(g) for g in groups)

    async def channel_principal(self, place: Place) -> frozenset[str]:
        """What an answer posted in the place's channel may use beyond public documents:
        what is restricted to that channel, once its members were read (never in a channel
        shared with another organisation, nor for a partner)."""
        if place.channel_id is None or place.external or place.partner:
            return frozenset()
        channel = await asyncio.to_thread(self._services.directory.channel, place.channel_id)
        key = f"channel:{channel.external_id}"
        state = await asyncio.to_thread(self._groups.state, place.tenant_id, key)
        return frozenset({slack_principal(key)}) if state.readable else frozenset()


def _syncs_permissions(kind: str) -> bool:
    found = CONNECTORS.get(kind)
    return found is not None and found.syncs_permissions


def _default_name(key: str) -> str:
    """How a group is shown when nobody named it (the CLI gives ids): `#C…`, `@S…`."""
    kind, _, value = key.partition(":")
    return f"#{value}" if kind == "channel" else f"@{value}"


def _checked(group: str) -> str:
    kind, _, value = group.partition(":")
    if kind not in GROUP_KINDS or not value.isalnum() or not value.isupper() or len(value) > 32:
        raise KnowledgeError(
            f"“{group}” is not a Slack channel or user group; mention it (#eng, @eng-team) or give its id"
        )
    return f"{kind}:{value}"
