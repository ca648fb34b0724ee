"""The access policy, table-driven: every scope, every action, from every kind of place."""

from __future__ import annotations

import pytest

from storage.access import Action, IndexFacts, Place, allowed
from storage.models import Scope

T = "T1"
OWNER, OTHER = 1, 2
HOME, ELSEWHERE = 10, 20

personal = IndexFacts(T, Scope.PERSONAL, owner_user_id=OWNER, channel_id=None, channel_is_private=False)
public_channel = IndexFacts(T, Scope.CHANNEL, owner_user_id=None, channel_id=HOME, channel_is_private=False)
private_channel = IndexFacts(T, Scope.CHANNEL, owner_user_id=None, channel_id=HOME, channel_is_private=True)
shared = IndexFacts(T, Scope.SHARED, owner_user_id=OWNER, channel_id=None, channel_is_private=False)

owner_dm = Place(T, OWNER)
other_dm = Place(T, OTHER)
owner_in_home = Place(T, OWNER, channel_id=HOME)
other_in_home = Place(T, OTHER, channel_id=HOME)
admin_in_home = Place(T, OTHER, channel_id=HOME, user_is_admin=True)
owner_elsewhere = Place(T, OWNER, channel_id=ELSEWHERE)
admin_elsewhere = Place(T, OTHER, channel_id=ELSEWHERE, user_is_admin=True)
other_tenant_owner = Place("T2", OWNER)
other_tenant_home = Place("T2", OWNER, channel_id=HOME, user_is_admin=True)

L, S, E, A, D = Action.LIST, Action.SEARCH, Action.ENABLE, Action.ADD, Action.DELETE
ALL = (L, S, E, A, D)

# (index, place, actions allowed); every action not listed must be refused.
TABLE = [
    (personal, owner_dm, ALL),
    (personal, other_dm, ()),
    (personal, owner_in_home, ()),  # never in a channel, even for its owner
    (personal, owner_elsewhere, ()),
    (personal, other_tenant_owner, ()),
    (public_channel, other_in_home, (L, S, E, A)),
    (public_channel, admin_in_home, ALL),
    (public_channel, owner_elsewhere, (L, S, E)),
    (public_channel, admin_elsewhere, (L, S, E)),
    (public_channel, other_dm, (L, S, E)),
    (public_channel, other_tenant_home, ()),
    (private_channel, other_in_home, (L, S, E, A)),
    (private_channel, admin_in_home, ALL),
    (private_channel, owner_elsewhere, ()),
    (private_channel, admin_elsewhere, ()),
    (private_channel, other_dm, ()),
    (private_channel, other_tenant_home, ()),
    (shared, owner_dm, ALL),
    (shared, owner_elsewhere, ALL),
    (shared, other_dm, (L, S, E, A)),
    (shared, other_in_home, (L, S, E, A)),
    (shared, admin_in_home, (L, S, E, A)),  # admins do not delete others' shared indexes
    (shared, other_tenant_owner, ()),
]


@pytest.mark.parametrize(("index", "place", "permitted"), TABLE)
@pytest.mark.parametrize("action", ALL)
def test_policy(index: IndexFacts, place: Place, permitted: tuple[Action, ...], action: Action) -> None:
    assert allowed(action, index, place) is (action in permitted)


def test_a_place_without_a_user_owns_nothing() -> None:
    anonymous = Place(T, None)
    assert not allowed(Action.SEARCH, personal, anonymous)
    assert not allowed(Action.DELETE, shared, anonymous)
    assert allowed(Action.SEARCH, shared, anonymous)
