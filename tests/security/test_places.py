"""Attacks on who and where (issue 12, findings 2, 3 and 4), through signed Slack requests:
privacy that fails closed, Slack Connect partners, and index names that squat another's.

Each test failed on the code before these fixes: a failed conversations.info stored the
channel as public, a shared-channel payload created a tenant for the partner's team and the
partner listed and read the host's shared indexes, and a shared index called `personal`
captured a user's DM drops.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from storage.values import Scope
from tests.bot.conftest import BOT, TEAM, SlackBot, markdown_file, only_reply, running_bot

PARTNER_TEAM = "T0PARTNER"
HANDBOOK = "# Handbook\n\nThe launch codeword for project Nimbus is *tangerine*.\n"
CHANNEL_DOC = "# Shared notes\n\nThe joint review with the partner happens on Thursdays at 10:00.\n"


@pytest_asyncio.fixture(loop_scope="function")
async def bot(tmp_path: Path) -> AsyncIterator[SlackBot]:
    async with running_bot(tmp_path / "lore") as running:
        yield running


async def shared_channel_mention(bot: SlackBot, user: str, user_team: str, text: str) -> str:
    """An app_mention in a Slack Connect channel, shaped as Slack sends it to the host's
    installation: the envelope names the partner's team, `authorizations` the host's."""
    ts = bot.next_ts()
    bot.slack.add_message("CSHARED", ts, f"<@{BOT}> {text}", user)
    body = {
        "token": "legacy",
        "team_id": user_team,
        "api_app_id": "A0001",
        "event": {
            "type": "app_mention",
            "user": user,
            "text": f"<@{BOT}> {text}",
            "ts": ts,
            "channel": "CSHARED",
            "event_ts": ts,
            "team": user_team,
            "user_team": user_team,
            "source_team": user_team,
        },
        "type": "event_callback",
        "event_id": f"Ev{ts.replace('.', '')}",
        "event_time": int(time.time()),
        "authorizations": [{"team_id": TEAM, "user_id": BOT, "is_bot": True}],
        "is_ext_shared_channel": True,
        "context_team_id": user_team,
    }
    status, _ = await bot.post(json.dumps(body))
    assert status == 200
    await bot.settle()
    return ts


async def test_a_channel_whose_lookup_fails_is_private(bot: SlackBot) -> None:
    bot.slack.add_user("UEVE", "eve")
    bot.slack.add_user("USAM", "sam")
    bot.slack.add_channel("CSECRET", "secret-plans", is_private=True)
    bot.slack.add_channel("CLOBBY", "lobby")
    bot.slack.fail("conversations.info", "ratelimited", times=3)  # a 429, a missing scope …
    await bot.mention(
        "CSECRET", "USAM", "add this doc", files=[markdown_file(bot, "FPLAN", "plans.md", HANDBOOK)]
    )
    [index] = [i for i in bot.runtime.services.indexes.list_for_tenant(TEAM) if i.scope == Scope.CHANNEL]
    assert index.channel_is_private, "a channel whose privacy is unknown is private"

    listed = only_reply(bot, "CLOBBY", await bot.mention("CLOBBY", "UEVE", "list indexes")).text
    assert "CSECRET" not in listed and "secret" not in listed
    enabled = only_reply(bot, "CLOBBY", await bot.mention("CLOBBY", "UEVE", "enable the CSECRET index")).text
    assert enabled.startswith("I don't know an index called"), enabled
    asked = await bot.mention("CLOBBY", "UEVE", "what is the launch codeword for project Nimbus?")
    assert "tangerine" not in bot.said("CLOBBY", asked)


async def test_a_known_private_channel_is_never_downgraded_by_a_failed_lookup(tmp_path: Path) -> None:
    home = tmp_path / "lore"
    async with running_bot(home) as first:
        first.slack.add_user("USAM", "sam")
        first.slack.add_channel("CSECRET", "secret-plans", is_private=True)
        await first.mention("CSECRET", "USAM", "status")
    async with running_bot(home) as restarted:  # a fresh cache: the lookup happens again, and fails
        restarted.slack.add_user("USAM", "sam")
        restarted.slack.add_channel("CSECRET", "secret-plans", is_private=True)
        restarted.slack.fail("conversations.info", "missing_scope", times=3)
        for _ in range(20):  # past the timestamps the first run used (deliveries are deduplicated)
            restarted.next_ts()
        event = restarted.mention_event("CSECRET", "USAM", "status")
        assert await restarted.deliver(event, event_id="EvAfterRestart") == 200
        assert restarted.said("CSECRET", str(event["ts"]))
        assert restarted.slack.calls_to("conversations.info")
        [channel] = [
            i for i in restarted.runtime.services.indexes.list_for_tenant(TEAM) if i.scope == Scope.CHANNEL
        ]
        assert channel.channel_is_private and channel.name == "secret-plans"


@pytest.mark.parametrize("kind", ["mpim", "group"])
async def test_group_dms_and_private_groups_are_private(bot: SlackBot, kind: str) -> None:
    bot.slack.add_user("UAMY", "amy")
    bot.slack.add_channel(
        "GTRIO", "mpdm-amy--bob--lore-1", is_mpim=kind == "mpim", is_private=kind == "group"
    )
    await bot.mention("GTRIO", "UAMY", "status")
    [index] = [i for i in bot.runtime.services.indexes.list_for_tenant(TEAM) if i.scope == Scope.CHANNEL]
    assert index.channel_is_private


async def test_a_slack_connect_partner_reads_only_the_shared_channels_index(bot: SlackBot) -> None:
    bot.slack.add_user("UHOST", "hannah")
    bot.slack.add_user("UPARTNER", "pat", team_id=PARTNER_TEAM)
    bot.slack.add_channel("CHOME", "home")
    bot.slack.add_channel("CSHARED", "joint-launch", is_ext_shared=True)
    await bot.mention("CHOME", "UHOST", "create an index called handbook")
    await bot.mention(
        "CHOME", "UHOST", "add this doc", files=[markdown_file(bot, "FHAND", "handbook.md", HANDBOOK)]
    )

    # the partner speaks first: the channel belongs to the host's workspace, not the partner's
    listed = bot.said("CSHARED", await shared_channel_mention(bot, "UPARTNER", PARTNER_TEAM, "list indexes"))
    services = bot.runtime.services
    assert services.indexes.list_for_tenant(PARTNER_TEAM) == []
    assert "handbook" not in listed and "home" not in listed and "joint-launch" in listed

    for attempt in ("enable the handbook index", "create an index called mine", "lock settings"):
        said = bot.said("CSHARED", await shared_channel_mention(bot, "UPARTNER", PARTNER_TEAM, attempt))
        assert said.startswith("People from other organisations") or "don't know an index" in said, said
    asked = await shared_channel_mention(bot, "UPARTNER", PARTNER_TEAM, "what is the Nimbus launch codeword?")
    assert "tangerine" not in bot.said("CSHARED", asked)

    # a host member in the shared channel: one memory for the channel, and nothing else searched
    await shared_channel_mention(bot, "UHOST", TEAM, "enable the handbook index")
    asked = await shared_channel_mention(bot, "UHOST", TEAM, "what is the Nimbus launch codeword?")
    assert "tangerine" not in bot.said("CSHARED", asked)
    channel_indexes = [i for i in services.indexes.list_for_tenant(TEAM) if i.name == "joint-launch"]
    assert len(channel_indexes) == 1


async def test_a_partner_may_ask_from_the_channels_own_memory(bot: SlackBot) -> None:
    bot.slack.add_user("UHOST", "hannah")
    bot.slack.add_user("UPARTNER", "pat", team_id=PARTNER_TEAM)
    bot.slack.add_channel("CSHARED", "joint-launch", is_ext_shared=True)
    ts = bot.next_ts()
    file = markdown_file(bot, "FNOTES", "shared-notes.md", CHANNEL_DOC)
    bot.slack.add_message("CSHARED", ts, f"<@{BOT}> add this doc", "UHOST", files=[file])
    await bot.deliver(_shared_event(bot, ts, "UHOST", TEAM, "add this doc", files=[bot.slack.file(file)]))
    asked = await shared_channel_mention(bot, "UPARTNER", PARTNER_TEAM, "when is the joint review?")
    assert "Thursdays" in bot.said("CSHARED", asked)
    forgot = await shared_channel_mention(bot, "UPARTNER", PARTNER_TEAM, "forget shared-notes.md")
    assert not bot.said("CSHARED", forgot).startswith("Forgot")


def _shared_event(
    bot: SlackBot, ts: str, user: str, team: str, text: str, files: list[dict[str, Any]]
) -> dict[str, Any]:
    return {
        "type": "app_mention",
        "user": user,
        "text": f"<@{BOT}> {text}",
        "ts": ts,
        "channel": "CSHARED",
        "event_ts": ts,
        "team": team,
        "user_team": team,
        "files": files,
    }


async def test_a_shared_index_cannot_squat_a_name_that_means_something(bot: SlackBot) -> None:
    bot.slack.add_user("UMAL", "mallory")
    bot.slack.add_channel("CPUB", "general")
    bot.slack.add_channel("CENG", "eng")
    await bot.mention("CENG", "UMAL", "status")  # #eng has its index now
    for name in ("personal", "Personal", "eng", "#eng"):
        said = only_reply(
            bot, "CPUB", await bot.mention("CPUB", "UMAL", f"create an index called {name}")
        ).text
        assert not said.startswith("Created"), (name, said)


async def test_a_squatting_shared_index_never_captures_someones_dm(bot: SlackBot) -> None:
    """An index called `personal` created before names were reserved (or straight in the
    database) loses to the user's own personal index wherever a name is resolved."""
    services = bot.runtime.services
    bot.slack.add_user("UMAL", "mallory")
    bot.slack.add_user("UVIC", "victor")
    mallory = services.directory.ensure_user(TEAM, "UMAL", "mallory")
    squat = services.indexes.create(
        TEAM, "personal", Scope.SHARED, embedding_model=services.embedder.model_id,
        embedding_dimension=services.embedder.dimension, owner_user_id=mallory.id,
    )  # fmt: skip
    said = bot.said("DUVIC", await bot.dm("UVIC", "make personal the default"))
    assert said == "New documents here now go into the *personal* index (your personal index)."
    await bot.dm(
        "UVIC", files=[markdown_file(bot, "FDIARY", "diary.md", "# Diary\n\nI hid the key under the mat.\n")]
    )
    assert services.indexes.stats(squat.id).documents == 0
    victor = services.directory.ensure_user(TEAM, "UVIC")
    [own] = [i for i in services.indexes.list_for_tenant(TEAM) if i.owner_user_id == victor.id]
    assert own.scope == Scope.PERSONAL and services.indexes.stats(own.id).documents == 1


async def test_slack_connect_off_answers_no_partner(tmp_path: Path) -> None:
    async with running_bot(tmp_path / "lore", lore_slack_connect="off") as bot:
        bot.slack.add_user("UPARTNER", "pat", team_id=PARTNER_TEAM)
        bot.slack.add_channel("CSHARED", "joint-launch", is_ext_shared=True)
        asked = await shared_channel_mention(bot, "UPARTNER", PARTNER_TEAM, "list indexes")
        [refusal] = bot.slack.calls_to("chat.postEphemeral")
        assert (
            refusal.params["user"] == "UPARTNER"
            and "only the people of the workspace" in refusal.params["text"]
        )
        assert "joint-launch" not in bot.said("CSHARED", asked)  # no listing, nothing else said
        assert bot.runtime.services.indexes.list_for_tenant(TEAM) == []


async def test_slack_connect_trusted_partners_act_as_members(tmp_path: Path) -> None:
    async with running_bot(tmp_path / "lore", lore_slack_connect="trusted") as bot:
        bot.slack.add_user("UHOST", "hannah")
        bot.slack.add_user("UPARTNER", "pat", team_id=PARTNER_TEAM)
        bot.slack.add_channel("CHOME", "home")
        bot.slack.add_channel("CSHARED", "joint-launch", is_ext_shared=True)
        await bot.mention("CHOME", "UHOST", "create an index called handbook")
        said = bot.said(
            "CSHARED",
            await shared_channel_mention(bot, "UPARTNER", PARTNER_TEAM, "enable the handbook index"),
        )
        assert said.startswith("Enabled the *handbook* index"), said
