"""The permission table, tested as a table: every kind of index, every action, from every
kind of place and role."""

from __future__ import annotations

import pytest

from storage.access import (
    Action,
    IndexFacts,
    Place,
    allowed,
    may_change_answers,
    may_change_settings,
    may_manage_connectors,
)
from storage.values import Scope

T = "T1"
OWNER, OTHER, ADDER = 1, 2, 3
HOME, ELSEWHERE = 10, 20

personal = IndexFacts(T, Scope.PERSONAL, owner_user_id=OWNER, channel_id=None, channel_is_private=False)
public_channel = IndexFacts(T, Scope.CHANNEL, owner_user_id=None, channel_id=HOME, channel_is_private=False)
private_channel = IndexFacts(T, Scope.CHANNEL, owner_user_id=None, channel_id=HOME, channel_is_private=True)
shared = IndexFacts(T, Scope.SHARED, owner_user_id=OWNER, channel_id=None, channel_is_private=False)

owner_dm = Place(T, OWNER)
other_dm = Place(T, OTHER)
admin_dm = Place(T, OTHER, user_is_admin=True)
owner_in_home = Place(T, OWNER, channel_id=HOME)
other_in_home = Place(T, OTHER, channel_id=HOME)
admin_in_home = Place(T, OTHER, channel_id=HOME, user_is_admin=True)
owner_elsewhere = Place(T, OWNER, channel_id=ELSEWHERE)
admin_elsewhere = Place(T, OTHER, channel_id=ELSEWHERE, user_is_admin=True)
other_tenant_owner = Place("T2", OWNER)
other_tenant_home = Place("T2", OWNER, channel_id=HOME, user_is_admin=True)
partner_in_home = Place(T, OTHER, channel_id=HOME, partner=True, external=True)
partner_admin_in_home = Place(T, OTHER, channel_id=HOME, partner=True, external=True, user_is_admin=True)
partner_dm = Place(T, OTHER, partner=True)
member_in_shared_home = Place(T, OTHER, channel_id=HOME, external=True)
admin_in_shared_home = Place(T, OWNER, channel_id=HOME, external=True, user_is_admin=True)

L, S, E, A = Action.LIST, Action.SEARCH, Action.ENABLE, Action.ADD
F, M, D, R = Action.FORGET, Action.MANAGE_SOURCES, Action.DELETE, Action.REVIEW
ALL = tuple(Action)
READ = (L, S, E)
KEEP = (L, S, E, A, F, M)
MEMBER = (*KEEP, R)  # a channel's members also see the feedback on its answers

# (index, place, actions allowed); every action not listed must be refused.
TABLE = [
    (personal, owner_dm, ALL),
    (personal, other_dm, ()),
    (personal, admin_dm, ()),  # no admin reads someone's personal index
    (personal, owner_in_home, ()),  # never in a channel, even for its owner
    (personal, owner_elsewhere, ()),
    (personal, other_tenant_owner, ()),
    (personal, partner_dm, ()),
    (public_channel, other_in_home, MEMBER),
    (public_channel, admin_in_home, ALL),
    (public_channel, owner_elsewhere, READ),
    (public_channel, admin_elsewhere, (*READ, R)),  # an admin deletes it from its channel
    (public_channel, other_dm, READ),
    (public_channel, other_tenant_home, ()),
    (public_channel, partner_in_home, (L, S)),  # partners read their channel's index, change nothing
    (public_channel, partner_admin_in_home, (L, S)),  # an admin elsewhere is no admin here
    (public_channel, partner_dm, ()),
    (public_channel, member_in_shared_home, MEMBER),
    (private_channel, other_in_home, MEMBER),
    (private_channel, admin_in_home, ALL),
    (private_channel, owner_elsewhere, ()),
    (private_channel, admin_elsewhere, ()),  # its feedback too is read only from there
    (private_channel, other_dm, ()),
    (private_channel, other_tenant_home, ()),
    (private_channel, partner_in_home, (L, S)),
    (shared, owner_dm, ALL),
    (shared, owner_elsewhere, ALL),
    (shared, other_dm, (L, S, E, A)),
    (shared, other_in_home, (L, S, E, A)),  # forgetting and managing belong to its keepers
    (shared, admin_in_home, ALL),  # admins clean up any shared index
    (shared, admin_dm, ALL),
    (shared, other_tenant_owner, ()),
    (shared, partner_in_home, ()),
    (shared, partner_dm, ()),
    (shared, member_in_shared_home, ()),  # a channel shared outside uses only its own index
    (shared, admin_in_shared_home, ()),
]


@pytest.mark.parametrize(("index", "place", "permitted"), TABLE)
@pytest.mark.parametrize("action", ALL)
def test_policy(index: IndexFacts, place: Place, permitted: tuple[Action, ...], action: Action) -> None:
    assert allowed(action, index, place) is (action in permitted)


@pytest.mark.parametrize("action", ALL)
def test_who_added_a_thing_may_forget_and_manage_it_in_a_shared_index(action: Action) -> None:
    adder = Place(T, ADDER, channel_id=ELSEWHERE)
    assert allowed(action, shared, adder, contributor=ADDER) is (action in KEEP)
    assert allowed(action, shared, adder, contributor=OTHER) is (action in (L, S, E, A))
    assert not allowed(action, personal, adder, contributor=ADDER)  # personal stays personal


def test_a_place_without_a_user_owns_nothing() -> None:
    anonymous = Place(T, None)
    assert not allowed(Action.SEARCH, personal, anonymous)
    assert not allowed(Action.DELETE, shared, anonymous)
    assert not allowed(Action.FORGET, shared, anonymous, contributor=None)
    assert allowed(Action.SEARCH, shared, anonymous)


SETTINGS = [  # place, may change settings (unlocked, locked), may change answers, connectors
    (owner_dm, (True, True), True, False),
    (other_in_home, (True, False), False, False),
    (admin_in_home, (True, True), True, True),
    (Place(T, OTHER, channel_id=HOME, connector_admin=True), (True, False), False, True),
    (partner_in_home, (False, False), False, False),
    (partner_admin_in_home, (False, False), False, False),
]


@pytest.mark.parametrize(("place", "settings", "answers", "connectors"), SETTINGS)
def test_conversation_settings_and_connectors(
    place: Place, settings: tuple[bool, bool], answers: bool, connectors: bool
) -> None:
    assert (may_change_settings(place, locked=False), may_change_settings(place, locked=True)) == settings
    assert may_change_answers(place) is answers
    assert may_manage_connectors(place) is connectors
