"""Issue 41's "done when", through the real `lore` entry points: the CLI connects the fake
Notion, attaches it to a shared index and restricts the attachment to #eng (`lore access
restrict notion --channel CENG`, members read from the fake Slack); then the real `lore run`
(HTTP mode, signed requests) answers from it to a member of #eng in their DM and in #eng, to
nobody else (a DM, another channel); a failed read of #eng's members lets nobody through;
`lore access unrestrict` gives the page back to whoever may search the index."""

from __future__ import annotations

from pathlib import Path

import aiohttp
import pytest
from cryptography.fernet import Fernet

from tests.e2e.test_lore_run_access import lore, say_dm
from tests.fakes.notion_server import TOKEN, FakeNotion, seed
from tests.fakes.slack_server import FakeSlack
from tests.support.lore_run import BOT, TEAM, Door, lore_run, run_env

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio]

QUESTION = "when does the payments on-call rotation hand over?"
FACT = "09:30"


async def test_a_notion_attachment_restricted_to_a_channel_reaches_its_members_only(tmp_path: Path) -> None:
    async with FakeNotion() as fake, FakeSlack("xoxb-run", TEAM, BOT) as slack:
        seed(fake)
        for user, name in (("UENG", "eng-member"), ("UOUT", "outsider")):
            slack.add_user(user, name)
        slack.add_channel("CENG", "eng")
        slack.add_channel("CGEN", "general")
        slack.join("CENG", "UENG")
        extra = {
            "LORE_SECRET_KEY": Fernet.generate_key().decode(),
            "LORE_CRAWL_ALLOW": "127.0.0.1",
            "LORE_PROGRESS_SECONDS": "0.2",
            "LORE_NOTION_REQUESTS_PER_SECOND": "50",
            "NOTION_TOKEN": TOKEN,
        }
        home = tmp_path / "lore"
        env = run_env(home, slack, extra)
        connect = ["--url", fake.base_url, "--token-env", "NOTION_TOKEN", "--tenant", TEAM]
        await lore(env, tmp_path, "source", "add", "notion", *connect)
        attached = await lore(
            env,
            tmp_path,
            "source",
            "attach",
            "127.0.0.1",
            "--index",
            "handbook",
            "--workspace",
            "--tenant",
            TEAM,
        )
        assert "Done indexing Notion workspace" in attached, attached
        restricted = await lore(
            env, tmp_path, "access", "restrict", "notion", "--channel", "CENG", "--tenant", TEAM
        )
        assert "Only members of #CENG now read what Notion workspace brings to the handbook index" in (
            restricted
        ), restricted
        assert [c.params["channel"] for c in slack.calls_to("conversations.members")] == ["CENG"]
        status = await lore(env, tmp_path, "access", "status", "--tenant", TEAM)
        assert "• Notion workspace: " in status and "restricted to the members of #CENG" in status, status

        async with lore_run(home, slack, **extra) as base, aiohttp.ClientSession() as http:
            door = Door(http, base, slack)
            for user in ("UENG", "UOUT"):
                await say_dm(door, slack, user, "enable the handbook index")
            for channel in ("CENG", "CGEN"):
                await door.mention(channel, "UENG", "enable the handbook index")
            assert FACT in await say_dm(door, slack, "UENG", QUESTION)
            assert FACT in await door.mention("CENG", "UENG", QUESTION)
            for where, said in (
                ("outsider's DM", await say_dm(door, slack, "UOUT", QUESTION)),
                ("#general, outsider", await door.mention("CGEN", "UOUT", QUESTION)),
                ("#general, member", await door.mention("CGEN", "UENG", QUESTION)),
            ):
                assert FACT not in said, (where, said)

            # While it serves: a failed read of #eng's members lets nobody through; lifting
            # the restriction gives the page back to whoever may search the index.
            slack.fail("conversations.members", "missing_scope")
            await lore(env, tmp_path, "access", "refresh", "--tenant", TEAM)
            assert FACT not in await say_dm(door, slack, "UENG", QUESTION), "membership unknown: nobody"
            assert FACT not in await door.mention("CENG", "UENG", QUESTION)
            lifted = await lore(env, tmp_path, "access", "unrestrict", "notion", "--tenant", TEAM)
            assert "Notion workspace in the handbook index is no longer restricted" in lifted, lifted
            assert FACT in await say_dm(door, slack, "UOUT", QUESTION)
            assert FACT in await door.mention("CGEN", "UOUT", QUESTION)
