"""Slack-native Lore through the real `lore run` (HTTP mode, a process of its own) and signed
requests on its request URL: a follow-up without a mention in Lore's thread is answered
there, "remember this thread" makes the thread's facts answerable elsewhere (cited by its
permalink), the message shortcut saves a message a later question finds, and an answer's
top-level text (notifications, screen readers) is the answer itself."""

from __future__ import annotations

import json
from pathlib import Path

import aiohttp
import pytest

from tests.fakes.slack_server import FakeSlack
from tests.support.lore_run import BOT, TEAM, TOKEN, Door, lore_run

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio]

DEPLOY = b"# Deploys\n\nWe deploy the billing service every Tuesday. Dana approves billing deploys.\n"


def answer_texts(said: str) -> list[str]:
    """The top-level `text` of every message Lore posted (not its blocks)."""
    return [json.loads(line).get("text", "") for line in said.splitlines() if line.strip()]


async def test_conversations_threads_and_shortcuts_through_lore_run(tmp_path: Path) -> None:
    async with (
        FakeSlack(TOKEN, TEAM, BOT) as slack,
        lore_run(tmp_path, slack) as base,
        aiohttp.ClientSession() as http,
    ):
        door = Door(http, base, slack)
        slack.add_user("UANA", "ana")
        slack.add_user("UBEN", "ben")
        slack.add_channel("CENG", "eng")
        slack.add_file("FDEP", "deploys.md", DEPLOY, "text/markdown")
        assert "deploys.md" in await door.mention("CENG", "UANA", "add this doc", files=("FDEP",))

        # the answer's own text is what notifications show
        asked = await door.mention("CENG", "UANA", "which day do we deploy the billing service?")
        assert any("Tuesday" in text for text in answer_texts(asked)), asked
        question_ts = next(
            c.params["thread_ts"]
            for c in slack.calls_to("chat.postMessage")
            if "Tuesday" in json.dumps(c.params)
        )

        # a follow-up in Lore's thread, without a mention, is answered there
        followed = await door.message(
            "CENG", "UBEN", "and who approves those deploys?", thread_ts=question_ts
        )
        assert "Dana" in followed and question_ts in followed, followed

        # "remember this thread": the thread's facts answer a question asked elsewhere, by permalink
        parent = slack._next_ts()
        slack.add_message("CENG", parent, "The kiwi launch is planned for 12 March.", "UANA")
        slack.add_message("CENG", slack._next_ts(), "Its codename is papaya.", "UBEN", thread_ts=parent)
        saved = await door.mention("CENG", "UANA", "remember this thread", thread_ts=parent)
        assert "saved" in saved.lower() or "remember" in saved.lower(), saved
        answered = await door.mention("CENG", "UBEN", "what is the codename of the kiwi launch?")
        assert "papaya" in answered and "slack.com/archives/CENG" in answered, answered

        # the message shortcut saves a message (and its thread) that a later question finds
        kept = slack._next_ts()
        message = slack.add_message("CENG", kept, "The staging vault opens with the word swordfish.", "UBEN")
        await door.interact(
            {
                "type": "message_action",
                "callback_id": "add_to_memory",
                "trigger_id": "1.shortcut",
                "team": {"id": TEAM, "domain": "lore-test"},
                "user": {"id": "UBEN", "username": "ben", "name": "ben", "team_id": TEAM},
                "channel": {"id": "CENG", "name": "eng"},
                "message": dict(message),
                "message_ts": kept,
                "response_url": slack.response_url(),
                "action_ts": slack._next_ts(),
                "token": "legacy",
            }
        )
        assert any(c.params.get("user") == "UBEN" for c in slack.calls_to("chat.postEphemeral"))
        found = await door.mention("CENG", "UANA", "which word opens the staging vault?")
        assert "swordfish" in found, found
