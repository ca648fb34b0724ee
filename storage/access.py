"""Who may do what with which index, from which place: Lore's one permission table.

A `Place` says who acts and from where: a channel (public, private, or shared with another
organisation through Slack Connect), or a private place (the user's DM with Lore, the CLI, an
API key acting as a user). `roles()` says what the actor is to an index; `PERMISSIONS` says
which roles may perform each action on each kind of index. Every surface (chat in Slack and
the shell, slash commands, App Home, the CLI, the HTTP API) asks `allowed()`, so the rules are
the same everywhere; the docs' table (`docs/permissions.md`) is generated from `PERMISSIONS`.

Three rules shape the table:
- Nothing crosses workspaces, and a personal index is its owner's alone, only in private
  places: an answer posted in a channel can never quote someone's private notes, and no
  admin can read them.
- Reading is wide (a public channel's or a shared index can be enabled anywhere in the
  workspace), changing is narrow: removing documents, managing crawled sites, deleting an
  index belong to the people who own it (its channel's members, its creator, the person who
  added the thing) and to workspace admins.
- A partner (a Slack Connect user of another organisation) reads only the index of the shared
  channel they are in, from that channel, and changes nothing (`partner_policy`).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from storage.values import Scope


class Action(enum.StrEnum):
    LIST = "list"
    """See the index listed."""
    SEARCH = "search"
    """Search it: answers quote it."""
    ENABLE = "enable"
    """Turn it on in a conversation (what the conversation searches)."""
    ADD = "add"
    """Add documents (files, pages, threads) and attach sites to crawl."""
    FORGET = "forget"
    """Remove documents."""
    MANAGE_SOURCES = "manage sources"
    """Refresh, stop, reschedule or detach an attached site."""
    CONFIGURE = "configure"
    """Change the index's own settings (answers from its documents only)."""
    DELETE = "delete"
    """Delete the whole index."""
    REVIEW = "review feedback"
    """See the answers it gave that people found unhelpful, and the questions it could not
    answer (with their comments)."""


class Role(enum.StrEnum):
    OWNER = "owner"
    """A personal index's user (in a private place), a shared index's creator."""
    MEMBER = "channel member"
    """Acting from a channel index's own channel."""
    WORKSPACE = "anyone in the workspace"
    CONTRIBUTOR = "contributor"
    """The person who added the document, or attached the source, at stake."""
    ADMIN = "workspace admin"
    CHANNEL_ADMIN = "workspace admin, from that channel"
    PARTNER = "partner, from that channel"
    """A Slack Connect user of another organisation, in the channel the index belongs to."""


class IndexKind(enum.StrEnum):
    PERSONAL = "personal"
    PUBLIC_CHANNEL = "public channel"
    PRIVATE_CHANNEL = "private channel"
    SHARED = "shared"


class PartnerPolicy(enum.StrEnum):
    """What Slack Connect partners get (`LORE_SLACK_CONNECT`)."""

    OFF = "off"
    """Lore does not answer partners at all."""
    CHANNEL_ONLY = "channel-only"
    """Partners read the shared channel's own index from that channel; a shared channel
    searches only its own index, whoever asks (answers there are read by partners)."""
    TRUSTED = "trusted"
    """Partners act as members of the workspace (never as admins)."""


_READ = frozenset({Role.WORKSPACE})
_OWNED = frozenset({Role.OWNER})
_HOME = frozenset({Role.MEMBER})
_HOME_READ = frozenset({Role.MEMBER, Role.PARTNER})
_KEEPERS = frozenset({Role.OWNER, Role.CONTRIBUTOR, Role.ADMIN})

PERMISSIONS: dict[IndexKind, dict[Action, frozenset[Role]]] = {
    IndexKind.PERSONAL: dict.fromkeys(Action, _OWNED),
    IndexKind.PUBLIC_CHANNEL: {
        Action.LIST: _READ | _HOME_READ,
        Action.SEARCH: _READ | _HOME_READ,
        Action.ENABLE: _READ,
        Action.ADD: _HOME,
        Action.FORGET: _HOME,
        Action.MANAGE_SOURCES: _HOME,
        Action.CONFIGURE: frozenset({Role.CHANNEL_ADMIN}),
        Action.DELETE: frozenset({Role.CHANNEL_ADMIN}),
        Action.REVIEW: _HOME | {Role.ADMIN},
    },
    IndexKind.PRIVATE_CHANNEL: {
        Action.LIST: _HOME_READ,
        Action.SEARCH: _HOME_READ,
        Action.ENABLE: _HOME,
        Action.ADD: _HOME,
        Action.FORGET: _HOME,
        Action.MANAGE_SOURCES: _HOME,
        Action.CONFIGURE: frozenset({Role.CHANNEL_ADMIN}),
        Action.DELETE: frozenset({Role.CHANNEL_ADMIN}),
        Action.REVIEW: _HOME | {Role.CHANNEL_ADMIN},
    },
    IndexKind.SHARED: {
        Action.LIST: _READ,
        Action.SEARCH: _READ,
        Action.ENABLE: _READ,
        Action.ADD: _READ,
        Action.FORGET: _KEEPERS,
        Action.MANAGE_SOURCES: _KEEPERS,
        Action.CONFIGURE: frozenset({Role.OWNER, Role.ADMIN}),
        Action.DELETE: frozenset({Role.OWNER, Role.ADMIN}),
        Action.REVIEW: frozenset({Role.OWNER, Role.ADMIN}),
    },
}
"""For each kind of index and action, the roles that may perform it."""


@dataclass(frozen=True)
class Place:
    """Who acts, and from where. `channel_id` None means a private place (DM, CLI, API).

    `partner`: the actor belongs to another organisation (Slack Connect) and is not trusted
    as a member. `external`: the channel is shared with another organisation, so what is
    said there is read outside the workspace. `connector_admin`: may connect sources
    (workspace admins and `LORE_CONNECTOR_ADMINS`)."""

    tenant_id: str
    user_id: int | None
    channel_id: int | None = None
    channel_is_private: bool = False
    user_is_admin: bool = False
    partner: bool = False
    external: bool = False
    connector_admin: bool = False

    @property
    def is_private(self) -> bool:
        return self.channel_id is None


@dataclass(frozen=True)
class IndexFacts:
    """What the policy needs to know about an index."""

    tenant_id: str
    scope: Scope
    owner_user_id: int | None
    channel_id: int | None
    channel_is_private: bool

    @property
    def kind(self) -> IndexKind:
        if self.scope == Scope.PERSONAL:
            return IndexKind.PERSONAL
        if self.scope == Scope.CHANNEL:
            return IndexKind.PRIVATE_CHANNEL if self.channel_is_private else IndexKind.PUBLIC_CHANNEL
        return IndexKind.SHARED


def roles(index: IndexFacts, place: Place, *, contributor: int | None = None) -> frozenset[Role]:
    """What the actor at `place` is to `index`; `contributor` is the user who added the
    document (or attached the source) the question is about."""
    if index.tenant_id != place.tenant_id:
        return frozenset()
    from_home = place.channel_id is not None and place.channel_id == index.channel_id
    if place.partner:
        return frozenset({Role.PARTNER}) if from_home and index.scope == Scope.CHANNEL else frozenset()
    found = {Role.WORKSPACE}
    if from_home and index.scope == Scope.CHANNEL:
        found.add(Role.MEMBER)
    is_owner = place.user_id is not None and place.user_id == index.owner_user_id
    if is_owner and (index.scope != Scope.PERSONAL or place.is_private):
        found.add(Role.OWNER)
    if place.user_id is not None and place.user_id == contributor:
        found.add(Role.CONTRIBUTOR)
    if place.user_is_admin:
        found.add(Role.ADMIN)
        if from_home:
            found.add(Role.CHANNEL_ADMIN)
    return frozenset(found)


def allowed(action: Action, index: IndexFacts, place: Place, *, contributor: int | None = None) -> bool:
    """True when `place` may perform `action` on `index`."""
    if place.external and index.channel_id != place.channel_id:
        return False  # a channel shared with another organisation uses only its own index
    return bool(PERMISSIONS[index.kind][action] & roles(index, place, contributor=contributor))


def may_change_settings(place: Place, *, locked: bool) -> bool:
    """Whether `place` may change its conversation's settings (enabled indexes, default
    index, answer mode …): in a DM its user; in a channel its members unless an admin
    locked the channel's settings; partners never."""
    if place.partner:
        return False
    return place.is_private or place.user_is_admin or not locked


def may_change_answers(place: Place) -> bool:
    """Whether `place` may change how its conversation answers (answer mode, retrieval
    strategy, whether Lore needs a mention) or lock its settings: in a DM its user; in a
    channel workspace admins."""
    return not place.partner and (place.is_private or place.user_is_admin)


def may_manage_connectors(place: Place) -> bool:
    """Connecting sources, choosing their spaces, refreshing, stopping and forgetting what
    they bring: workspace admins and `LORE_CONNECTOR_ADMINS`, never partners. (A connector
    decides what the whole workspace can read, since its own permissions are not synced.)"""
    return not place.partner and (place.user_is_admin or place.connector_admin)
