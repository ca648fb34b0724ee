"""A help channel through the real `lore run` (HTTP mode, a process of its own), the fake Slack
Web API and signed requests: an admin makes #ask-eng a help channel (its own threshold, 80%) and names its expert;
an answerable question posted to nobody gets a short answer in its thread, chatter and an
unanswerable question get nothing; "Show more" gives the whole answer to the presser alone;
a reply marked with "Save as the answer" answers a reworded question in another thread
first, with who verified it and the link; "Ask an expert" mentions the expert, whose reply
Lore offers to save as the answer. Every answer Lore posts is at most about 8 lines before
its sources."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.fakes.slack_server import FakeSlack, SlackCall
from tests.support.lore_run import BOT, TEAM, TOKEN, Door, lore_run, reply_to

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio]

CHANNEL = "CASK"
DEPLOY = (
    b"# Deploys\n\n## Schedule\n\nWe deploy the billing service every Tuesday. Dana approves billing deploys.\n\n"
    b"## Rollbacks\n\nTo roll back a release, switch the load balancer back to the previous release. "
    b"A rollback takes about two minutes. Tell the ops channel before you start, and write the "
    b"incident number in the release notes afterwards.\n\n"
    b"## Staging\n\nStaging is deployed on every merge to main. Staging data is reset every night.\n"
)
LINE_CHARS = 100


def visible_lines(blocks: list[dict[str, Any]]) -> int:
    """Display lines of what a message shows before its sources line and its buttons."""
    texts = []
    for block in blocks:
        if block["type"] == "markdown":
            texts.append(block["text"])
        elif block["type"] == "section":
            texts.append(block["text"]["text"])
        elif block["type"] == "context":
            texts += [e["text"] for e in block["elements"] if not e["text"].startswith("Sources:")]
    return sum(max(1, math.ceil(len(line) / LINE_CHARS)) for text in texts for line in text.split("\n"))


def lore_messages(slack: FakeSlack, ts: str) -> list[dict[str, Any]]:
    return [m for m in slack.thread(CHANNEL, ts) if m.get("user") == BOT]


def with_button(slack: FakeSlack, action_id: str) -> list[dict[str, Any]]:
    """Lore's messages in the channel that carry the button `action_id`."""
    found = []
    for call in slack.calls_to("chat.postMessage"):
        blocks = call.params.get("blocks") or []
        if call.ok and any(e.get("action_id") == action_id for b in blocks for e in b.get("elements") or []):
            found.append(slack.message(CHANNEL, call.response["ts"]) or {})
    return found


async def decided(home: Path, ts: str) -> str:
    """What Lore decided on the post `ts` in a help channel, once `lore run` logs it (the log
    says why it left a post alone, and never the post's words)."""
    async with asyncio.timeout(90):
        while True:
            for line in (home / "lore-run.log").read_text(errors="replace").splitlines():
                if f"help channel post {ts} (" in line:
                    return line.split("): ", 1)[1]
            await asyncio.sleep(0.5)


def said_to(slack: FakeSlack, ts: str, since: int) -> list[SlackCall]:
    """What Lore said (publicly or not) in the thread of `ts`, since call `since`."""
    return [
        c
        for c in slack.calls[since:]
        if c.method in ("chat.postMessage", "chat.postEphemeral") and c.params.get("thread_ts") == ts
    ]


async def test_a_help_channel_answers_what_it_knows_and_learns_what_people_verify(tmp_path: Path) -> None:
    async with (
        FakeSlack(TOKEN, TEAM, BOT) as slack,
        lore_run(tmp_path, slack) as base,
        aiohttp.ClientSession() as http,
    ):
        door = Door(http, base, slack)
        slack.add_user("UADM", "ada", is_admin=True)
        slack.add_user("UANA", "ana")
        slack.add_user("UDANA", "dana")
        slack.add_channel(CHANNEL, "ask-eng")
        slack.add_file("FDEP", "deploy.md", DEPLOY, "text/markdown")
        assert "deploy.md" in await door.mention(CHANNEL, "UADM", "add this doc", files=("FDEP",))
        # the channel's own threshold, below the default (0.96, chosen on the docs corpus's tune
        # half): this one-page corpus is sure of less
        set_up = await door.mention(CHANNEL, "UADM", "answer questions here when 80% sure")
        assert "without a mention" in set_up and "80%" in set_up
        assert "<@UDANA>" in await door.mention(CHANNEL, "UADM", "experts here are <@UDANA>")

        # an answerable question, to nobody: a short answer in its thread
        asked = await door.post(CHANNEL, "UANA", "how do I roll back a release?")
        answer = await reply_to(slack, asked)
        [posted] = lore_messages(slack, asked)
        assert "load balancer" in json.dumps(posted["blocks"]) and "From " in json.dumps(posted["blocks"])
        assert visible_lines(posted["blocks"]) <= 8, posted["blocks"]
        assert answer.params["thread_ts"] == asked

        # chatter and an unanswerable question: nothing, public or private
        before = len(slack.calls)
        chatter = await door.post(CHANNEL, "UANA", "lunch at noon, anyone?")
        unknown = await door.post(CHANNEL, "UANA", "what is the guest wifi password in the Lisbon office?")
        control = await door.post(CHANNEL, "UANA", "which day do we deploy the billing service?")
        await reply_to(slack, control)
        assert (await decided(tmp_path, chatter)).startswith("left alone")
        assert (await decided(tmp_path, unknown)).startswith("left alone, not sure")
        await asyncio.sleep(1)
        assert said_to(slack, chatter, before) == [] and said_to(slack, unknown, before) == []
        assert "lunch" not in (tmp_path / "lore-run.log").read_text(), "the log never has the words"
        assert not [c for c in slack.calls[before:] if c.method == "chat.postEphemeral"]

        # "Show more": the whole answer, to the presser alone
        more = await door.press("UANA", CHANNEL, posted, "answer_more")
        assert "previous release" in more and "incident number" in more
        [shown] = [c for c in slack.calls_to("chat.postEphemeral") if c.params.get("user") == "UANA"]
        assert shown.params["thread_ts"] == asked

        # a person's reply, saved as the answer, answers a reworded question elsewhere first
        access = await door.post(CHANNEL, "UANA", "how do we get access to the production database?")
        await asyncio.sleep(2)
        assert lore_messages(slack, access) == []
        replied = slack._next_ts()
        reply = slack.add_message(
            CHANNEL,
            replied,
            "Ask in #it-access; your manager approves it within a day.",
            "UDANA",
            thread_ts=access,
        )
        saved = await door.shortcut("UANA", CHANNEL, reply, "save_as_answer")
        assert "verified answer" in saved
        again = await door.mention(
            CHANNEL, "UADM", "what is the way to get access to the production database?"
        )
        first = json.loads(again)["blocks"][0]["text"]["text"]
        assert first.startswith("Ask in #it-access") and "Verified by ana" in again, again
        assert f"slack.com/archives/{CHANNEL}/p{replied.replace('.', '')}" in again

        # "Ask an expert" mentions the expert; the expert's reply is offered as the answer
        await door.mention(CHANNEL, "UANA", "who signs off on the kiwi budget?")
        [unsure] = with_button(slack, "answer_escalate")
        escalated = await door.press("UANA", CHANNEL, unsure, "answer_escalate")
        assert "<@UDANA>" in escalated and "kiwi budget" in escalated
        before = len(slack.calls)
        expert = slack._next_ts()
        slack.add_message(CHANNEL, expert, "Kim signs off on it.", "UDANA", thread_ts=unsure["thread_ts"])
        await door.deliver(
            {"type": "message", "channel_type": "channel", "user": "UDANA", "text": "Kim signs off on it.",
             "ts": expert, "thread_ts": unsure["thread_ts"], "channel": CHANNEL, "event_ts": expert, "team": TEAM}
        )  # fmt: skip
        offer = await slack.wait_until(
            lambda c: c.method == "chat.postEphemeral" and c.params.get("user") == "UDANA", timeout=60
        )
        assert "Save your reply" in offer.params["text"]
        assert not [c for c in slack.calls[before:] if c.method == "chat.postMessage"], "no follow-up answer"
        offered = {"ts": offer.params["thread_ts"], "thread_ts": offer.params["thread_ts"], **offer.params}
        assert "verified answer" in await door.press("UDANA", CHANNEL, offered, "save_as_answer_button")
        assert "Kim" in await door.mention(CHANNEL, "UANA", "who signs off on the kiwi budget?")

        # every answer Lore posted shows at most about 8 lines before its sources
        for call in slack.calls_to("chat.postMessage"):
            if any(b.get("type") == "context_actions" for b in call.params.get("blocks") or []):
                assert visible_lines(call.params["blocks"]) <= 8, call.params["blocks"]
