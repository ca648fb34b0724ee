"""The access policy for API keys, table-driven. A key acts from a private place (no
channel) as a user: the user it was created for, or its own service user. So it sees shared
and public channel indexes, its own user's personal index, and never a private channel's."""

from __future__ import annotations

import pytest

from storage.access import Action, IndexFacts, Place, allowed
from storage.values import Scope

T = "T1"
ADA, SERVICE, OTHER = 1, 2, 3
CHANNEL = 10

ada_personal = IndexFacts(T, Scope.PERSONAL, owner_user_id=ADA, channel_id=None, channel_is_private=False)
public_channel = IndexFacts(
    T, Scope.CHANNEL, owner_user_id=None, channel_id=CHANNEL, channel_is_private=False
)
private_channel = IndexFacts(
    T, Scope.CHANNEL, owner_user_id=None, channel_id=CHANNEL, channel_is_private=True
)
shared_by_service = IndexFacts(
    T, Scope.SHARED, owner_user_id=SERVICE, channel_id=None, channel_is_private=False
)
shared_by_other = IndexFacts(T, Scope.SHARED, owner_user_id=OTHER, channel_id=None, channel_is_private=False)

service_key = Place(T, SERVICE)  # a key created for no one
ada_key = Place(T, ADA)  # a key created for Ada
other_tenant_key = Place("T2", ADA)

L, S, E, A, D = Action.LIST, Action.SEARCH, Action.ENABLE, Action.ADD, Action.DELETE
F, M = Action.FORGET, Action.MANAGE_SOURCES
ALL = tuple(Action)

TABLE = [
    (ada_personal, service_key, ()),
    (ada_personal, ada_key, ALL),
    (ada_personal, other_tenant_key, ()),
    (public_channel, service_key, (L, S, E)),  # documents go in from the channel only
    (public_channel, ada_key, (L, S, E)),
    (public_channel, other_tenant_key, ()),
    (private_channel, service_key, ()),
    (private_channel, ada_key, ()),  # even a member's key: the channel is the only place
    (shared_by_service, service_key, ALL),  # the key that created it deletes it
    (shared_by_service, ada_key, (L, S, E, A)),
    (shared_by_other, service_key, (L, S, E, A)),
    (shared_by_other, other_tenant_key, ()),
]


@pytest.mark.parametrize(("index", "place", "permitted"), TABLE)
@pytest.mark.parametrize("action", ALL)
def test_api_key_policy(
    index: IndexFacts, place: Place, permitted: tuple[Action, ...], action: Action
) -> None:
    assert allowed(action, index, place) is (action in permitted)


def test_an_api_key_acts_from_a_private_place() -> None:
    assert service_key.is_private and ada_key.is_private
