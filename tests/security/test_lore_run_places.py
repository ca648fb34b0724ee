"""The real `lore run` (HTTP mode, its own process) against the fake Slack Web API: a private
channel whose lookup fails stays invisible from other channels, a Slack Connect partner reads
nothing from the host's shared indexes, and a shared index called `personal` cannot be made
to capture anyone's DM."""

from __future__ import annotations

import json
from pathlib import Path

import aiohttp
import pytest

from tests.fakes.slack_server import FakeSlack
from tests.support.lore_run import BOT, TEAM, TOKEN, Door, dm, lore_run, reply_to

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio]

PARTNER_TEAM = "T0PARTNER"
PLANS = b"# Plans\n\nThe acquisition target is Zebracorp, code name BLUEBIRD.\n"
HANDBOOK = b"# Handbook\n\nThe office door code is 4711.\n"


async def test_privacy_connect_and_squatting_hold_in_lore_run(tmp_path: Path) -> None:
    async with (
        FakeSlack(TOKEN, TEAM, BOT) as slack,
        lore_run(tmp_path, slack) as base,
        aiohttp.ClientSession() as http,
    ):
        door = Door(http, base, slack)
        for user, name in (("USAM", "sam"), ("UEVE", "eve"), ("UVIC", "victor"), ("UMAL", "mallory")):
            slack.add_user(user, name)
        slack.add_user("UPAT", "pat", team_id=PARTNER_TEAM)
        slack.add_channel("CSECRET", "secret-plans", is_private=True)
        slack.add_channel("CLOBBY", "lobby")
        slack.add_channel("CSHARED", "joint", is_ext_shared=True)

        # a private channel whose lookup fails (rate limited) is stored as private
        slack.fail("conversations.info", "ratelimited", times=2)
        slack.add_file("FPLANS", "plans.md", PLANS, "text/markdown")
        assert "plans.md" in await door.mention("CSECRET", "USAM", "add this doc", files=("FPLANS",))
        listed = await door.mention("CLOBBY", "UEVE", "list indexes")
        assert "CSECRET" not in listed and "secret" not in listed
        asked = await door.mention("CLOBBY", "UEVE", "what is the acquisition target?")
        assert "BLUEBIRD" not in asked and "Zebracorp" not in asked

        # a partner in a Slack Connect channel reads nothing from the host's shared indexes
        slack.add_file("FHAND", "handbook.md", HANDBOOK, "text/markdown")
        await door.mention("CLOBBY", "UEVE", "create an index called handbook")
        await door.mention("CLOBBY", "UEVE", "make handbook the default")
        assert "handbook.md" in await door.mention("CLOBBY", "UEVE", "add this doc", files=("FHAND",))
        for attempt in ("enable the handbook index", "list indexes", "what is the office door code?"):
            said = await door.mention("CSHARED", "UPAT", attempt, team=PARTNER_TEAM)
            assert "4711" not in said and "*handbook*" not in said, (attempt, said)

        # a shared index called `personal` can't be made, and a DM drop stays one's own
        refused = await door.mention("CLOBBY", "UMAL", "create an index called personal")
        assert "already means something" in refused
        slack.add_file("FDIARY", "diary.md", b"# Diary\n\nThe spare key is under the mat.\n", "text/markdown")
        event = dm(slack, "UVIC", "", [slack.file("FDIARY")])
        await door.deliver(event)
        kept = json.dumps((await reply_to(slack, str(event["ts"]))).params)
        assert "diary.md" in kept and "personal index" in kept
        asked = await door.mention("CLOBBY", "UMAL", "where is the spare key?")
        assert "under the mat" not in asked
