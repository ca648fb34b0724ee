"""The real `lore run` (HTTP mode, its own process) against the fake Slack Web API: a private
channel whose lookup fails stays invisible from other channels, a Slack Connect partner reads
nothing from the host's shared indexes, and a shared index called `personal` cannot be made
to capture anyone's DM."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.fakes.slack_server import FakeSlack, signed_headers
from tests.security.test_lore_run import BOT, SECRET, TEAM, TOKEN, dm, lore_run, reply_to

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio]

PARTNER_TEAM = "T0PARTNER"
PLANS = b"# Plans\n\nThe acquisition target is Zebracorp, code name BLUEBIRD.\n"
HANDBOOK = b"# Handbook\n\nThe office door code is 4711.\n"


class Door:
    """Signed Events API deliveries into `lore run`, each with its own event id."""

    def __init__(self, http: aiohttp.ClientSession, base: str, slack: FakeSlack) -> None:
        self.http, self.base, self.slack = http, base, slack
        self.serial = 100

    async def deliver(self, event: dict[str, Any], **envelope: Any) -> None:
        self.serial += 1
        body = json.dumps(
            {
                "team_id": TEAM,
                "api_app_id": "A0RUN",
                "event": event,
                "type": "event_callback",
                "event_id": f"EvPLACE{self.serial:04d}",
                "event_time": int(time.time()),
                "authorizations": [{"team_id": TEAM, "user_id": BOT, "is_bot": True}],
                **envelope,
            }
        )
        headers = {"Content-Type": "application/json", **signed_headers(body, SECRET)}
        async with self.http.post(f"{self.base}/slack/events", data=body, headers=headers) as response:
            assert response.status == 200

    async def mention(
        self, channel: str, user: str, text: str, *, team: str = TEAM, files: tuple[str, ...] = ()
    ) -> str:
        """A mention of Lore (with files), and everything Lore said in reply, public or not."""
        ts = self.slack._next_ts()
        self.slack.add_message(channel, ts, f"<@{BOT}> {text}", user, files=list(files) or None)
        event: dict[str, Any] = {
            "type": "app_mention", "user": user, "text": f"<@{BOT}> {text}", "ts": ts,
            "channel": channel, "event_ts": ts, "team": team, "user_team": team,
        }  # fmt: skip
        if files:
            event["files"] = [self.slack.file(f) for f in files]
        shared = {"is_ext_shared_channel": True, "team_id": team} if team != TEAM else {}
        before = len(self.slack.calls)
        await self.deliver(event, **shared)

        return await self._replies_since(before, ts)

    async def _replies_since(self, before: int, ts: str) -> str:
        """What Lore said since call `before`, once it has replied and gone quiet for a second."""
        quiet, seen = 0.0, -1
        async with asyncio.timeout(60):
            while True:
                calls = self.slack.calls[before:]
                replied = any(c.method in ("chat.postMessage", "chat.postEphemeral") and c.ok for c in calls)
                quiet = quiet + 0.1 if len(calls) == seen else 0.0
                seen = len(calls)
                if replied and quiet >= 1.0:
                    return "\n".join(json.dumps(c.params) for c in calls if c.method.startswith("chat."))
                await asyncio.sleep(0.1)


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
