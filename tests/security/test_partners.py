"""Issue 35, finding 3: a Slack Connect partner counted as a member wherever the payload did
not say otherwise. Partner status was read from each request's team fields: Bolt's team id
(the host's) overrode the user's own team in interactions, the team `users.info` reports was
ignored, and any request judged internal cleared the stored partner flag. Through App Home,
a DM without team fields and the message shortcut, a partner listed the host's indexes,
saved into the shared channel's index and got an answer from #general in a DM.

Now `users.info` decides (`team_id`, `is_stranger`, `enterprise_user`), a request's team
fields count only when Slack cannot be asked and then never clear the flag, and someone Lore
cannot place is a partner until Slack says otherwise.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from storage.repositories.directory import Directory
from tests.bot.conftest import TEAM, markdown_file
from tests.bot.slack_payloads import interact
from tests.security.conftest import Lore, running_lore

pytestmark = pytest.mark.asyncio(loop_scope="module")

PARTNER_TEAM = "T0PARTNER"
HANDBOOK = "# Handbook\n\nThe office door code is 4711 and the wifi password is heliotrope.\n"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def lore(tmp_path_factory: Any) -> AsyncIterator[Lore]:
    async with running_lore(tmp_path_factory.mktemp("lore-partners")) as running:
        slack = running.slack
        slack.add_user("UHOST", "hana")
        slack.add_user("UPAT", "pat", team_id=PARTNER_TEAM)
        slack.add_channel("CGENERAL", "general")
        slack.add_channel("CJOINT", "joint", is_ext_shared=True)
        slack.join("CJOINT", "UHOST", "UPAT")
        handbook = markdown_file(running, "FHB", "handbook.md", HANDBOOK)
        await running.mention("CGENERAL", "UHOST", "add this doc", files=[handbook])
        await running.mention("CGENERAL", "UHOST", "create an index called vault")
        yield running


def stored_team(lore: Lore, user: str) -> str | None:
    found = Directory(lore.runtime.services.db).find_user(TEAM, user)
    return found.home_team if found else "(never seen)"


async def test_a_partner_opening_the_home_tab_sees_none_of_the_hosts_indexes(lore: Lore) -> None:
    lore.begin()
    event = {"type": "app_home_opened", "user": "UPAT", "channel": "DUPAT", "tab": "home"}
    assert await lore.deliver({**event, "event_ts": lore.next_ts()}) == 200
    [published] = lore.calls("views.publish")
    shown = json.dumps(published.params)
    assert "another organisation" in shown
    for name in ("general", "vault", "handbook", "joint", "personal index"):
        assert name not in shown, name
    assert stored_team(lore, "UPAT") == PARTNER_TEAM


async def test_a_partner_dm_without_team_fields_reads_nothing_of_the_host(lore: Lore) -> None:
    lore.begin()
    for said in ("enable the general index", "what is the office door code?", "list indexes"):
        ts = await lore.dm("UPAT", said)  # Slack's DM events carry the host's team here
        reply = lore.said("DUPAT", ts)
        assert "4711" not in reply and "*general*" not in reply and "vault" not in reply, (said, reply)


async def test_a_partner_cannot_save_through_the_shortcut_even_with_the_hosts_team(lore: Lore) -> None:
    lore.begin()
    ts = lore.next_ts()
    message = lore.slack.add_message("CJOINT", ts, "Our pricing floor is 12 EUR a seat.", "UHOST")
    payload = {
        "type": "message_action",
        "callback_id": "add_to_memory",
        "trigger_id": "1.shortcut",
        "team": {"id": TEAM, "domain": "lore-test"},  # the installation's, as Slack sends it
        "user": {"id": "UPAT", "username": "pat", "name": "pat", "team_id": TEAM},
        "channel": {"id": "CJOINT", "name": "joint"},
        "message": dict(message),
        "message_ts": ts,
        "response_url": lore.slack.response_url(),
        "action_ts": lore.next_ts(),
        "token": "legacy",
    }
    assert await interact(lore, payload) == 200
    services = lore.runtime.services
    joint = next(i for i in services.indexes.list_for_tenant(TEAM) if i.name == "joint")
    assert services.documents.list_ready(joint.id) == []
    told = json.dumps([c.params for c in lore.calls("chat.postEphemeral")])
    assert "UPAT" in told and "pricing floor" not in told


async def test_a_stored_partner_flag_is_not_cleared_by_a_payload_without_the_users_team(lore: Lore) -> None:
    lore.slack.add_user("UPAT2", "pia", team_id=PARTNER_TEAM)
    lore.slack.join("CJOINT", "UPAT2")
    lore.slack.fail("users.info", "ratelimited", times=10)  # Slack can't be asked meanwhile
    try:
        await partner_mentions_then_dms(lore)
    finally:
        lore.slack.recover("users.info")


async def partner_mentions_then_dms(lore: Lore) -> None:
    ts = lore.next_ts()
    lore.slack.add_message("CJOINT", ts, "<@UBOT> hello", "UPAT2")
    shared = {
        "type": "app_mention", "user": "UPAT2", "text": "<@UBOT> hello", "ts": ts, "channel": "CJOINT",
        "event_ts": ts, "team": PARTNER_TEAM, "user_team": PARTNER_TEAM,
    }  # fmt: skip
    assert await lore.deliver(shared) == 200
    assert stored_team(lore, "UPAT2") == PARTNER_TEAM
    await lore.dm("UPAT2", "enable the general index")  # a DM event naming the host's team
    ts = await lore.dm("UPAT2", "what is the wifi password?")
    assert "heliotrope" not in lore.said("DUPAT2", ts)
    assert stored_team(lore, "UPAT2") == PARTNER_TEAM


async def test_someone_lore_cannot_place_is_a_partner_until_slack_says(lore: Lore) -> None:
    lore.slack.add_user("UNEW", "nell")
    lore.slack.fail("users.info", "ratelimited", times=10)
    try:
        ts = await lore.dm("UNEW", "what is the wifi password?")
    finally:
        lore.slack.recover("users.info")
    assert "heliotrope" not in lore.said("DUNEW", ts)
    assert stored_team(lore, "UNEW") == "unknown"
    lore.begin()
    event = {"type": "app_home_opened", "user": "UNEW", "channel": "DUNEW", "tab": "home"}
    assert await lore.deliver({**event, "event_ts": lore.next_ts()}) == 200
    assert stored_team(lore, "UNEW") is None  # Slack said: one of the workspace
    assert "general" in json.dumps(lore.calls("views.publish")[-1].params)


async def test_grid_colleagues_are_members_and_strangers_are_not(lore: Lore) -> None:
    lore.slack.add_user("UGRID", "gil", team_id="T0OTHERWS", enterprise_teams=["T0OTHERWS", TEAM])
    lore.slack.add_user("USTRANGE", "sol", is_stranger=True)
    await lore.dm("UGRID", "hello")
    await lore.dm("USTRANGE", "hello")
    assert stored_team(lore, "UGRID") is None
    assert stored_team(lore, "USTRANGE") == TEAM
