"""Who may list, search, enable, add to and delete which index, from which place.

The one place this policy lives. A `Place` says who acts and from where: a channel (public
or private), or a private place (the user's DM with Lore, the CLI, an API key acting as a
user). The rules, by the index's scope:

| scope                  | list / enable            | search / add                | delete                 |
|------------------------|--------------------------|-----------------------------|------------------------|
| personal               | owner, in a private place | owner, in a private place   | owner, private place   |
| channel, public chan.  | anyone in the tenant     | search: anyone in tenant;   | a workspace admin,     |
|                        |                          | add: from that channel      | from that channel      |
| channel, private chan. | from that channel only   | from that channel only      | admin, that channel    |
| shared                 | anyone in the tenant     | anyone in the tenant        | its owner              |

Nothing ever crosses tenants. Personal indexes never show in a channel, even to their owner,
so an answer posted in a channel cannot quote someone's private notes.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from storage.models import Scope


class Action(enum.StrEnum):
    LIST = "list"
    SEARCH = "search"
    ENABLE = "enable"
    ADD = "add"
    DELETE = "delete"


@dataclass(frozen=True)
class Place:
    """Who acts, and from where. `channel_id` None means a private place (DM, CLI, API)."""

    tenant_id: str
    user_id: int | None
    channel_id: int | None = None
    channel_is_private: bool = False
    user_is_admin: bool = False

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


def allowed(action: Action, index: IndexFacts, place: Place) -> bool:
    """True when `place` may perform `action` on `index`."""
    if index.tenant_id != place.tenant_id:
        return False
    if index.scope == Scope.PERSONAL:
        return _personal(index, place)
    if index.scope == Scope.CHANNEL:
        return _channel(action, index, place)
    return _shared(action, index, place)


def _personal(index: IndexFacts, place: Place) -> bool:
    return place.is_private and place.user_id is not None and place.user_id == index.owner_user_id


def _channel(action: Action, index: IndexFacts, place: Place) -> bool:
    from_home = place.channel_id is not None and place.channel_id == index.channel_id
    if action == Action.DELETE:
        return from_home and place.user_is_admin
    if index.channel_is_private or action == Action.ADD:
        return from_home
    return True


def _shared(action: Action, index: IndexFacts, place: Place) -> bool:
    if action == Action.DELETE:
        return place.user_id is not None and place.user_id == index.owner_user_id
    return True
