"""The real `lore run` (HTTP mode) in a process of its own, against a fake Slack Web API, and a
door to knock on: signed Events API deliveries and interactions, and what Lore said back."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import aiohttp

from tests.fakes.slack_server import FakeSlack, SlackCall, signed_headers

START_SECONDS = 180.0
"""How long `lore run` may take to answer /healthz: seconds alone, minutes on a loaded machine
(the wait ends as soon as it answers, or at once if the process exits)."""
REPLY_SECONDS = 180.0
"""How long a reply may take (the wait ends as soon as it comes)."""
SECRET = "run-secret"
TOKEN = "xoxb-run"
TEAM = "T0RUN"
BOT = "UBOTRUN"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def run_env(home: Path, slack: FakeSlack, settings: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment `lore` runs with: this one without Lore's, Slack's, OpenAI's and the
    database's settings, then Lore's home, the fake Slack, and `settings` (`SLACK_BOT_TOKEN=""`
    unsets the bot token, for OAuth installs; `LORE_HOME` another data folder than `home`)."""
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "OPENAI_", "LORE_", "DATABASE_"))
    }
    env.update(
        LORE_HOME=str(home),
        SLACK_BOT_TOKEN=TOKEN,
        SLACK_SIGNING_SECRET=SECRET,
        SLACK_API_URL=slack.api_url,
        ANONYMIZED_TELEMETRY="False",
    )
    env.update(settings or {})
    return {k: v for k, v in env.items() if v != ""}


@asynccontextmanager
async def lore_run(home: Path, slack: FakeSlack, **settings: str) -> AsyncIterator[str]:
    """`lore run --port P` talking to `slack`; its base URL once /healthz answers.
    `settings` are more environment variables (see `run_env`); `home` keeps the log."""
    port = free_port()
    env = run_env(home, slack, settings)
    lore = str(Path(sys.executable).with_name("lore"))
    with (home / "lore-run.log").open("ab") as log:
        process = await asyncio.create_subprocess_exec(
            lore, "run", "--host", "127.0.0.1", "--port", str(port), env=env, stdout=log, stderr=log, cwd=home
        )
        base = f"http://127.0.0.1:{port}"
        try:
            try:
                async with asyncio.timeout(START_SECONDS), aiohttp.ClientSession() as http:
                    while process.returncode is None:
                        if await _healthy(http, base):
                            break
                        await asyncio.sleep(0.2)
            except TimeoutError:
                log_tail = (home / "lore-run.log").read_text()[-3000:]
                raise AssertionError(
                    f"lore run gave no /healthz in {START_SECONDS:.0f} s: {log_tail}"
                ) from None
            assert process.returncode is None, (home / "lore-run.log").read_text()
            yield base
        finally:
            if process.returncode is None:
                process.terminate()
                await asyncio.wait_for(process.wait(), 60)


async def _healthy(http: aiohttp.ClientSession, base: str) -> bool:
    try:
        async with http.get(f"{base}/healthz") as response:
            return response.status == 200
    except aiohttp.ClientConnectionError:
        return False


def dm(
    slack: FakeSlack, user: str, text: str, files: list[dict[str, object]] | None = None
) -> dict[str, object]:
    channel = f"D{user}"
    slack.add_channel(channel, "", is_im=True, user=user)
    ts = slack._next_ts()
    slack.add_message(channel, ts, text, user, files=files)
    event: dict[str, object] = {
        "type": "message", "channel_type": "im", "user": user, "text": text, "ts": ts,
        "channel": channel, "event_ts": ts, "team": TEAM,
    }  # fmt: skip
    if files:
        event.update(subtype="file_share", files=files)
    return event


async def reply_to(slack: FakeSlack, ts: str) -> SlackCall:
    def answered(call: SlackCall) -> bool:
        return call.method == "chat.postMessage" and call.ok and call.params.get("thread_ts") == ts

    return await slack.wait_until(answered, timeout=REPLY_SECONDS, what=f"a reply to {ts}")


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

    async def interact(
        self, payload: dict[str, Any], replies: tuple[str, ...] = ("chat.postMessage", "chat.postEphemeral")
    ) -> str:
        """A signed interactive payload (form-encoded), and what Lore said after it (once it
        said one of `replies`)."""
        body = urlencode({"payload": json.dumps(payload)})
        headers = {"Content-Type": "application/x-www-form-urlencoded", **signed_headers(body, SECRET)}
        before = len(self.slack.calls)
        async with self.http.post(f"{self.base}/slack/events", data=body, headers=headers) as response:
            assert response.status == 200
        return await self._replies_since(before, "", replies)

    async def slash(self, channel: str, user: str, text: str) -> str:
        """`/lore TEXT` from `channel`, and what Lore said back (through the response_url,
        ephemerally or in public), once it has gone quiet for a second."""
        body = urlencode(
            {
                "team_id": TEAM, "channel_id": channel, "channel_name": channel.lower(), "user_id": user,
                "command": "/lore", "text": text, "response_url": self.slack.response_url(),
                "trigger_id": f"1.{self.serial}", "api_app_id": "A0RUN",
            }
        )  # fmt: skip
        headers = {"Content-Type": "application/x-www-form-urlencoded", **signed_headers(body, SECRET)}
        before = len(self.slack.calls)
        async with self.http.post(f"{self.base}/slack/events", data=body, headers=headers) as response:
            assert response.status == 200
        return await self._replies_since(before, "", replies=("response_url", "chat.postEphemeral"))

    async def message(self, channel: str, user: str, text: str, *, thread_ts: str) -> str:
        """A plain message (no mention) in a thread, and what Lore said after it."""
        ts = self.slack._next_ts()
        self.slack.add_message(channel, ts, text, user, thread_ts=thread_ts)
        event = {
            "type": "message", "channel_type": "channel", "user": user, "text": text, "ts": ts,
            "thread_ts": thread_ts, "channel": channel, "event_ts": ts, "team": TEAM,
        }  # fmt: skip
        before = len(self.slack.calls)
        await self.deliver(event)
        return await self._replies_since(before, ts)

    async def post(self, channel: str, user: str, text: str, *, thread_ts: str | None = None) -> str:
        """A message to nobody (no mention), top-level unless `thread_ts`; its ts. What Lore
        says after it is for the caller to wait for (it may say nothing)."""
        ts = self.slack._next_ts()
        self.slack.add_message(channel, ts, text, user, thread_ts=thread_ts)
        event: dict[str, Any] = {
            "type": "message", "channel_type": "channel", "user": user, "text": text, "ts": ts,
            "channel": channel, "event_ts": ts, "team": TEAM,
        }  # fmt: skip
        if thread_ts:
            event["thread_ts"] = thread_ts
        await self.deliver(event)
        return ts

    async def press(self, user: str, channel: str, message: dict[str, Any], action_id: str) -> str:
        """Press the button `action_id` on one of Lore's messages (as Slack has it), and what
        Lore said after."""
        button = next(
            e
            for b in message.get("blocks") or []
            for e in b.get("elements") or []
            if e.get("action_id") == action_id
        )
        payload = {
            "type": "block_actions", "team": {"id": TEAM, "domain": "lore-test"},
            "user": {"id": user, "username": user.lower(), "team_id": TEAM}, "api_app_id": "A0RUN",
            "container": {"type": "message", "message_ts": message["ts"], "channel_id": channel,
                          "thread_ts": message.get("thread_ts")},
            "trigger_id": f"{self.slack._next_ts()}.trigger", "channel": {"id": channel, "name": channel.lower()},
            "message": message, "response_url": self.slack.response_url(),
            "actions": [{"type": "button", "action_id": action_id, "block_id": "b", "value": button["value"],
                         "action_ts": self.slack._next_ts()}],
        }  # fmt: skip
        return await self.interact(payload)

    async def shortcut(self, user: str, channel: str, message: dict[str, Any], callback_id: str) -> str:
        """A message shortcut on `message`, and what Lore said after."""
        return await self.interact(
            {
                "type": "message_action", "callback_id": callback_id, "trigger_id": "1.shortcut",
                "team": {"id": TEAM, "domain": "lore-test"},
                "user": {"id": user, "username": user.lower(), "name": user.lower(), "team_id": TEAM},
                "channel": {"id": channel, "name": channel.lower()}, "message": dict(message),
                "message_ts": message["ts"], "response_url": self.slack.response_url(),
                "action_ts": self.slack._next_ts(), "token": "legacy",
            }
        )  # fmt: skip

    async def mention(
        self,
        channel: str,
        user: str,
        text: str,
        *,
        team: str = TEAM,
        files: tuple[str, ...] = (),
        thread_ts: str | None = None,
    ) -> str:
        """A mention of Lore (with files, in a thread), and everything Lore said in reply,
        public or not."""
        ts = self.slack._next_ts()
        self.slack.add_message(
            channel, ts, f"<@{BOT}> {text}", user, thread_ts=thread_ts, files=list(files) or None
        )
        event: dict[str, Any] = {
            "type": "app_mention", "user": user, "text": f"<@{BOT}> {text}", "ts": ts,
            "channel": channel, "event_ts": ts, "team": team, "user_team": team,
        }  # fmt: skip
        if files:
            event["files"] = [self.slack.file(f) for f in files]
        if thread_ts:
            event["thread_ts"] = thread_ts
        shared = {"is_ext_shared_channel": True, "team_id": team} if team != TEAM else {}
        before = len(self.slack.calls)
        await self.deliver(event, **shared)

        return await self._replies_since(before, ts)

    async def _replies_since(
        self, before: int, ts: str, replies: tuple[str, ...] = ("chat.postMessage", "chat.postEphemeral")
    ) -> str:
        """What Lore said since call `before` (in chat, or through a response_url), once it
        has replied (one of `replies`) and gone quiet for a second."""
        quiet, seen = 0.0, -1
        async with asyncio.timeout(REPLY_SECONDS):
            while True:
                calls = self.slack.calls[before:]
                replied = any(c.method in replies and c.ok for c in calls)
                quiet = quiet + 0.1 if len(calls) == seen else 0.0
                seen = len(calls)
                if replied and quiet >= 1.0:
                    said = [c for c in calls if c.method.startswith("chat.") or c.method == "response_url"]
                    return "\n".join(json.dumps(c.params) for c in said)
                await asyncio.sleep(0.1)
