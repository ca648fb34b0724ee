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

Feedback is read where it was given: `FEEDBACK` says, by where an answer was given (a DM, a
private or a public channel), who among an index's reviewers (`Action.REVIEW`) sees its text
(question, answer, sources, comments) and who only counts it; the text also needs every
index the answer searched or quoted to be searchable from the reviewer's place (`sight`).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
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
    ASKER = "the asker, in a private place"
    """Who asked the question an answer answered, from their DM, the CLI or their API key."""


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


class Given(enum.StrEnum):
    """Where an answer was given, which says who could read it there."""

    DM = "a DM"
    PRIVATE_CHANNEL = "a private channel"
    PUBLIC_CHANNEL = "a public channel"

    @property
    def privacy(self) -> int:
        """Higher is more private (the stricter of two is the more private)."""
        return {Given.PUBLIC_CHANNEL: 0, Given.PRIVATE_CHANNEL: 1, Given.DM: 2}[self]


def given_now(recorded: str | None, *, in_channel: bool, channel_is_private: bool | None) -> Given:
    """Where an answer was given: the stricter of what was recorded then (`recorded`, a
    `Given`'s name, None for answers from before it was kept) and what its conversation is
    now (`in_channel`, and whether that channel is private: None when it is gone); a DM when
    neither says (fail closed)."""
    if not in_channel:
        return Given.DM
    now = Given.PUBLIC_CHANNEL if channel_is_private is False else Given.PRIVATE_CHANNEL
    before = Given.__members__.get(recorded or "")
    return max(now, before or now, key=lambda g: g.privacy)


class Sight(enum.StrEnum):
    """How much of an answer an index's reviewer sees in its feedback."""

    TEXT = "reads its question, answer, sources and comments"
    COUNT = "only counts it"


_ADMIN = frozenset({Role.ADMIN})

FEEDBACK: dict[Given, dict[Sight, frozenset[Role]]] = {
    Given.DM: {Sight.TEXT: frozenset({Role.ASKER}), Sight.COUNT: _ADMIN},
    Given.PRIVATE_CHANNEL: {Sight.TEXT: _HOME, Sight.COUNT: _ADMIN},
    Given.PUBLIC_CHANNEL: {Sight.TEXT: _READ, Sight.COUNT: frozenset()},
}
"""For the reviewers of an index (`Action.REVIEW`), by where an answer was given: who reads
it, and who only counts it (anyone else does not see it at all; whoever may read it but not
every index it drew on counts it). A DM's answer is its asker's alone (an admin counts it);
a private channel's is read from that channel."""


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


@dataclass(frozen=True)
class AnswerFacts:
    """Where an answer was given, and to whom: what `sight` needs to know about it."""

    tenant_id: str
    given: Given
    asker_id: int | None
    channel_id: int | None
    """The channel it was given in (None in a DM)."""


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


def answer_roles(answer: AnswerFacts, place: Place) -> frozenset[Role]:
    """What the actor at `place` is to the place an answer was given in. Partners are
    nothing to it: feedback is the host's."""
    if answer.tenant_id != place.tenant_id or place.partner:
        return frozenset()
    found = {Role.WORKSPACE}
    if place.channel_id is not None and place.channel_id == answer.channel_id:
        found.add(Role.MEMBER)
    if place.is_private and place.user_id is not None and place.user_id == answer.asker_id:
        found.add(Role.ASKER)
    if place.user_is_admin:
        found.add(Role.ADMIN)
    return frozenset(found)


def sight(answer: AnswerFacts, indexes: Sequence[IndexFacts | None], place: Place) -> Sight | None:
    """How much a reviewer at `place` sees of an answer (None: nothing, not even a count).
    `indexes` are the ones it searched and quoted (None for one that is gone): its text is
    shown only if each of them may be searched from `place`."""
    found = answer_roles(answer, place)
    table = FEEDBACK[answer.given]
    readable = all(i is not None and allowed(Action.SEARCH, i, place) for i in indexes)
    if found & table[Sight.TEXT] and readable:
        return Sight.TEXT
    if found & (table[Sight.COUNT] | table[Sight.TEXT]):
        return Sight.COUNT
    return None


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
    decides what an index holds; who may read each of its documents is its source's to say,
    `storage.document_access`.)"""
    return not place.partner and (place.user_is_admin or place.connector_admin)


def may_administer(place: Place) -> bool:
    """The admin console's workspace-wide pages (usage, coverage gaps, the audit log, settings,
    exports, forgetting a person): workspace admins and `LORE_CONNECTOR_ADMINS`, never
    partners. What they may do to each index stays the table's (`allowed`)."""
    return not place.partner and (place.user_is_admin or place.connector_admin)


def may_map_people(place: Place) -> bool:
    """Saying who someone is in a connected source (mapping a Slack user to a GitHub login,
    granting a source's group): workspace admins only, never partners. Narrower than
    connecting sources: a mapping lets its person read whatever that account may."""
    return not place.partner and place.user_is_admin


def may_restrict_sources(place: Place) -> bool:
    """Restricting what a connector attachment brings to the members of a Slack channel or
    user group, or lifting that: whoever may manage connectors (`may_manage_connectors`)."""
    return may_manage_connectors(place)
