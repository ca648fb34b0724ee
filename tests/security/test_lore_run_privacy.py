"""Issue 35 through the real `lore run` (HTTP mode, a process of its own) with signed requests
and the fake Slack Web API: a DM's 👎 with a comment stays out of another member's Home,
`show feedback` in #general and an admin key's `GET /v1/feedback`; a shared answer citing a
document named `<!channel> <@U0ADMIN>` posts no raw mention; a partner (per `users.info`)
opening the Home or using the shortcut in a shared channel lists and saves nothing; the
shortcut on a message whose thread can't be read saves the message, which a later question
finds; and after `forget` of a document and the deletion of a learned message, no file under
LORE_HOME holds their text."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import aiohttp
import pytest

from tests.fakes.slack_server import FakeSlack, SlackCall, signed_headers
from tests.security.conftest import raw_mentions
from tests.support.lore_run import BOT, SECRET, TEAM, TOKEN, Door, dm, lore_run, reply_to

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio]

PARTNER_TEAM = "T0PARTNER"
PAYSLIP = b"# Payslip\n\nNet pay for March: 4,312.55 EUR, bonus code PEARLFISH.\n"
POLICY = b"# Leave policy\n\nParental leave at Quokka Inc lasts twenty weeks, paid in full.\n"
VAULT = b"# Vault\n\nThe vault opens with the word Quillfeather.\n"
COMMENT = "this quoted my payslip KUMQUAT"


def files_with(home: Path, secret: str) -> list[str]:
    needle = secret.lower().encode()
    return sorted(
        str(p.relative_to(home)) for p in home.rglob("*") if p.is_file() and needle in p.read_bytes().lower()
    )


async def gone_from(home: Path, secret: str) -> list[str]:
    """The files still holding `secret` after up to 20 s of waiting for the scrub."""
    for _ in range(100):
        if not (found := files_with(home, secret)):
            return found
        await asyncio.sleep(0.2)
    return files_with(home, secret)


class Client:
    """Signed interactions and slash commands into `lore run`, beside `Door`'s events."""

    def __init__(self, door: Door) -> None:
        self.door, self.http, self.base, self.slack = door, door.http, door.base, door.slack
        self.serial = 0

    async def post_form(self, form: dict[str, str]) -> None:
        body = urlencode(form)
        headers = {"Content-Type": "application/x-www-form-urlencoded", **signed_headers(body, SECRET)}
        async with self.http.post(f"{self.base}/slack/events", data=body, headers=headers) as response:
            assert response.status == 200

    async def interact(self, payload: dict[str, Any]) -> None:
        await self.post_form({"payload": json.dumps(payload)})

    def user(self, user: str, team: str = TEAM) -> dict[str, str]:
        return {"id": user, "username": user.lower(), "name": user.lower(), "team_id": team}

    async def slash(self, user: str, channel: str, text: str) -> str:
        url = self.slack.response_url()
        await self.post_form({
            "token": "legacy", "team_id": TEAM, "team_domain": "run", "channel_id": channel,
            "channel_name": channel.lower(), "user_id": user, "user_name": user.lower(), "command": "/lore",
            "text": text, "api_app_id": "A0RUN", "response_url": url, "trigger_id": f"{self.next()}.t",
        })  # fmt: skip
        return url.rsplit("/", 1)[1]

    async def press(self, user: str, channel: str, action: dict[str, Any], **extra: Any) -> None:
        self.serial += 1
        await self.interact({
            "type": "block_actions", "team": {"id": TEAM, "domain": "run"}, "user": self.user(user),
            "api_app_id": "A0RUN", "token": "legacy", "trigger_id": f"{self.next()}.t",
            "channel": {"id": channel, "name": channel.lower()}, "response_url": self.slack.response_url(),
            "actions": [{**action, "action_ts": self.slack._next_ts()}], **extra,
        })  # fmt: skip

    async def submit(self, user: str, view: dict[str, Any], values: dict[str, Any]) -> None:
        await self.interact({
            "type": "view_submission", "team": {"id": TEAM, "domain": "run"}, "user": self.user(user),
            "api_app_id": "A0RUN", "token": "legacy", "trigger_id": f"{self.next()}.t",
            "view": {**view, "id": "V0SUB", "state": {"values": values}, "hash": "1.h"},
        })  # fmt: skip

    async def shortcut(self, user: str, channel: str, message: dict[str, Any], team: str = TEAM) -> None:
        await self.interact({
            "type": "message_action", "callback_id": "add_to_memory", "trigger_id": f"{self.next()}.t",
            "team": {"id": TEAM, "domain": "run"}, "user": self.user(user, team),
            "channel": {"id": channel, "name": channel.lower()}, "message": message,
            "message_ts": message["ts"], "response_url": self.slack.response_url(),
            "action_ts": self.slack._next_ts(), "token": "legacy",
        })  # fmt: skip

    async def home(self, user: str) -> str:
        """Open the Home tab; what Lore published there."""
        before = len(self.slack.calls)
        await self.door.deliver({"type": "app_home_opened", "user": user, "channel": f"D{user}", "tab": "home",
                            "event_ts": self.slack._next_ts()})  # fmt: skip

        def published(call: SlackCall) -> bool:
            return call.method == "views.publish" and call.params.get("user_id") == user

        await self.slack.wait_until(lambda c: published(c) and c in self.slack.calls[before:], 60, "a Home")
        return json.dumps([c.params for c in self.slack.calls[before:] if published(c)][-1])

    def next(self) -> int:
        self.serial += 1
        return self.serial


async def admin_key(home: Path, user: str) -> str:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "OPENAI_", "LORE_", "DATABASE_"))
    }
    lore = str(Path(sys.executable).with_name("lore"))
    process = await asyncio.create_subprocess_exec(
        lore, "api-key", "create", "--name", "boss", "--tenant", TEAM, "--user", user,
        env={**env, "LORE_HOME": str(home), "ANONYMIZED_TELEMETRY": "False"}, cwd=home,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, _ = await process.communicate()
    assert process.returncode == 0
    return out.decode().strip().splitlines()[-1]


async def test_issue_35_holds_in_lore_run(tmp_path: Path) -> None:
    async with (
        FakeSlack(TOKEN, TEAM, BOT) as slack,
        lore_run(tmp_path, slack, LORE_SLACK_FRESHEN_SECONDS="0") as base,
        aiohttp.ClientSession() as http,
    ):
        door = Door(http, base, slack)
        client = Client(door)  # one Door: event ids are never repeated
        slack.add_user("UASKER", "asker")
        slack.add_user("UREVIEW", "reviewer")
        slack.add_user("UBOSS", "boss", is_admin=True)
        slack.add_user("UPAT", "pat", team_id=PARTNER_TEAM)
        slack.add_channel("CGENERAL", "general")
        slack.add_channel("CJOINT", "joint", is_ext_shared=True)
        slack.join("CGENERAL", "UASKER", "UREVIEW", "UBOSS")
        slack.join("CJOINT", "UREVIEW", "UPAT")

        # 1. a DM's 👎 with a comment is its asker's alone
        await door.mention("CGENERAL", "UREVIEW", "list indexes")  # #general has its index
        slack.add_file("FPAY", "payslip.md", PAYSLIP, "text/markdown")
        event = dm(slack, "UASKER", "", [slack.file("FPAY")])
        await door.deliver(event)
        await reply_to(slack, str(event["ts"]))
        event = dm(slack, "UASKER", "enable the general index")
        await door.deliver(event)
        await reply_to(slack, str(event["ts"]))
        event = dm(slack, "UASKER", "what was my net pay for march?")
        await door.deliver(event)
        answer = await reply_to(slack, str(event["ts"]))
        feedback = next(
            e for b in answer.params["blocks"] if b["type"] == "context_actions" for e in b["elements"]
        )
        bad = feedback["negative_button"]["value"]
        await client.press("UASKER", "DUASKER", {"type": "feedback_buttons", "action_id": "answer_feedback",
                                                 "block_id": "f", "value": bad},
                           message={"type": "message", "ts": answer.response["ts"], "user": BOT})  # fmt: skip
        form = (await slack.wait_for("views.open", timeout=30))[-1].params["view"]
        await client.submit("UASKER", form, {
            "reason": {"value": {"type": "radio_buttons", "selected_option": {"value": "wrong"}}},
            "comment": {"value": {"type": "plain_text_input", "value": COMMENT}},
        })  # fmt: skip
        await slack.wait_until(lambda c: "Thanks for telling me" in json.dumps(c.params), 30, "thanks")

        def leaked(text: str) -> list[str]:
            return [s for s in ("KUMQUAT", "4,312.55", "PEARLFISH", "net pay") if s in text]

        assert leaked(await client.home("UREVIEW")) == []
        assert leaked(await door.mention("CGENERAL", "UREVIEW", "show feedback")) == []
        shown = await door.mention("CGENERAL", "UBOSS", "show feedback")
        assert leaked(shown) == [] and "1 more answer was given where you can't read it" in shown
        key = await admin_key(tmp_path, "UBOSS")
        async with http.get(f"{base}/v1/feedback", headers={"Authorization": f"Bearer {key}"}) as response:
            assert response.status == 200
            body = await response.json()
        assert leaked(json.dumps(body)) == []
        assert [i["withheld_unhelpful"] for i in body["indexes"] if i["index"] == "general"] == [1]

        # 2. a shared answer citing a document named like mentions posts none
        slack.add_file("FPOL", "<!channel> <@U0ADMIN> leave policy.md", POLICY, "text/markdown")
        assert "leave policy" in await door.mention("CGENERAL", "UREVIEW", "add this doc", files=("FPOL",))
        url = await client.slash("UREVIEW", "CGENERAL", "how long is parental leave at Quokka?")
        private = await slack.wait_until(
            lambda c: c.method == "response_url" and c.params.get("url") == url and "twenty" in json.dumps(c.params),
            60, "the private answer",
        )  # fmt: skip
        share = next(
            e
            for b in private.params["blocks"]
            if b["type"] == "actions"
            for e in b["elements"]
            if e["action_id"] == "share_answer"  # beside "Show more"
        )
        before = len(slack.calls)
        await client.press("UREVIEW", "CGENERAL", {"type": "button", "action_id": share["action_id"],
                                                   "block_id": "s", "value": share["value"]},
                           container={"type": "message", "message_ts": slack._next_ts(),
                                      "channel_id": "CGENERAL", "is_ephemeral": True})  # fmt: skip
        shared = await slack.wait_until(
            lambda c: c.method == "chat.postMessage" and "shared Lore's answer" in json.dumps(c.params),
            60,
            "share",
        )
        posted = json.dumps(shared.params).replace("<@UREVIEW> shared", "reviewer shared")
        assert "leave policy" in posted and raw_mentions(posted) == [], posted
        assert slack.calls[before:]

        # 3. a partner (per users.info) lists and saves nothing, from the Home or the shortcut
        home = await client.home("UPAT")
        assert "another organisation" in home and "general" not in home and "payslip" not in home
        ts = slack._next_ts()
        message = slack.add_message("CJOINT", ts, "Our pricing floor is 12 EUR a seat.", "UREVIEW")
        before = len(slack.calls)
        await client.shortcut("UPAT", "CJOINT", dict(message))  # the payload names the host's team
        told = await slack.wait_until(lambda c: c.method == "chat.postEphemeral" and c.params.get("user") == "UPAT",
                                      60, "a private note to the partner")  # fmt: skip
        assert "Saved" not in told.params["text"]
        listed = await door.mention("CJOINT", "UPAT", "list indexes", team=PARTNER_TEAM)
        assert "general" not in listed and "pricing floor" not in json.dumps(
            [c.params for c in slack.calls[before:]]
        )

        # 4. the shortcut on a message whose thread can't be read saves the message
        ts = slack._next_ts()
        message = slack.add_message("CGENERAL", ts, "The bike shed code is 4417.", "UREVIEW")
        slack.fail("conversations.replies", "not_in_channel")
        await client.shortcut("UREVIEW", "CGENERAL", dict(message))
        told = await slack.wait_until(lambda c: c.method == "chat.postEphemeral" and "not_in_channel" in
                                      json.dumps(c.params), 60, "the shortcut's note")  # fmt: skip
        assert "Saved that thread (1 message)" in told.params["text"]
        assert "4417" in await door.mention("CGENERAL", "UASKER", "what is the bike shed code?")

        # 5. forgotten and deleted text leaves every file under LORE_HOME
        slack.add_file("FVAULT", "vault.md", VAULT, "text/markdown")
        assert "vault.md" in await door.mention("CGENERAL", "UREVIEW", "add this doc", files=("FVAULT",))
        assert "Quillfeather" in await door.mention("CGENERAL", "UREVIEW", "which word opens the vault?")
        assert files_with(tmp_path, "Quillfeather")
        await door.mention("CGENERAL", "UREVIEW", "forget vault.md")
        assert await gone_from(tmp_path, "Quillfeather") == []

        await door.mention("CGENERAL", "UREVIEW", "learn this channel")
        await slack.wait_until(lambda c: "Done reading" in json.dumps(c.params), 120, "the history read")
        ts = slack._next_ts()
        slack.add_message("CGENERAL", ts, "Temporary door code: Marzipanwolf 2231.", "UREVIEW")
        await door.deliver({"type": "message", "channel_type": "channel", "user": "UREVIEW", "ts": ts,
                            "text": "Temporary door code: Marzipanwolf 2231.", "channel": "CGENERAL",
                            "event_ts": ts, "team": TEAM})  # fmt: skip
        for _ in range(150):
            if files_with(tmp_path, "Marzipanwolf"):
                break
            await asyncio.sleep(0.2)
        assert files_with(tmp_path, "Marzipanwolf"), "the learned channel kept the message"
        before_delete = slack.delete_message("CGENERAL", ts)
        await door.deliver({"type": "message", "subtype": "message_deleted", "channel_type": "channel",
                            "channel": "CGENERAL", "hidden": True, "deleted_ts": ts,
                            "previous_message": before_delete, "ts": slack._next_ts(),
                            "event_ts": slack._next_ts()})  # fmt: skip
        assert await gone_from(tmp_path, "Marzipanwolf") == []
