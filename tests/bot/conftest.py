"""Lore's Slack app end to end on loopback: the real Bolt app served by aiohttp, requests
signed the way Slack signs them, the fake Slack Web API and, when asked for, the fake OpenAI.

    async with running_bot(home, llm=True) as bot:
        ts = await bot.mention("C1", "U1", "when do we deploy?")
        [reply] = bot.replies("C1", ts)

Module-scoped fixtures (`offline_bot`, `llm_bot`) keep one runtime per test module, since
loading the embedder takes a second; `bot` and `gpt` give each test a fresh window on the
recorded calls. Tests keep apart by using their own channels, users and questions.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
import pytest_asyncio
from aiohttp.test_utils import TestClient, TestServer

from bot.app.settings import Settings
from bot.chat.runtime import Runtime, open_runtime
from bot.cli.run import http_app
from bot.slack.app import build_app
from bot.slack.events import SlackEvents
from bot.slack.history import channel_syncs
from tests.fakes.openai_server import FakeOpenAI, RecordedRequest
from tests.fakes.slack_server import Download, FakeSlack, SlackCall, signed_headers

os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

SIGNING_SECRET = "secret"
BOT_TOKEN = "xoxb-test"
TEAM = "T0001"
BOT = "UBOT"
Json = dict[str, Any]


def lore_settings(home: Path, slack: FakeSlack, llm: FakeOpenAI | None = None, **extra: Any) -> Settings:
    """Settings for a bot on `home`, talking to the fakes; nothing read from the environment
    decides where data goes or which model answers."""
    values: dict[str, Any] = {
        "lore_home": home,
        "database_url": None,
        "chroma_host": None,
        "slack_bot_token": BOT_TOKEN,
        "slack_signing_secret": SIGNING_SECRET,
        "slack_app_token": None,
        "slack_api_url": slack.api_url,
        "openai_api_key": "test" if llm else None,
        "openai_base_url": llm.base_url if llm else None,
        "llm_model": "gpt-fake",
        "llm_max_retries": 0,
        "lore_crawl_allow": "",
    }
    return Settings(_env_file=None, **{**values, **extra})


@dataclass(frozen=True)
class Slash:
    """A `/lore` command sent: the HTTP status and body of Lore's acknowledgement, and the key
    of the response_url that came with it."""

    status: int
    acked: str
    url: str
    seconds: float
    """How long Lore took to acknowledge."""


@dataclass(frozen=True)
class Reply:
    """One message Lore posted in a thread, put together from the Web API calls that made it."""

    ts: str
    thread_ts: str
    method: str
    """How it was posted: chat.postMessage, chat.startStream, or chat.postEphemeral (only
    the asker sees it)."""
    markdown: str
    """The answer text: the markdown blocks, the streamed chunks, or the plain text."""
    blocks: list[Json]
    params: Json = field(default_factory=dict)
    """For a response_url reply, what was sent (`response_type`, `delete_original` …)."""

    @property
    def private(self) -> bool:
        """Only the asker sees it: an ephemeral message, or an ephemeral response_url reply."""
        if self.method == "response_url":
            return self.params.get("response_type") == "ephemeral"
        return self.method == "chat.postEphemeral"

    @property
    def text(self) -> str:
        """Everything a person reads in the message."""
        return "\n".join(t for t in [self.markdown, *_block_texts(self.blocks)] if t)

    def button(self, action_id: str) -> Json:
        for block in self.blocks:
            for element in block.get("elements", []):
                if element.get("action_id") == action_id:
                    return dict(element)
        raise AssertionError(f"no {action_id} button in {self.blocks}")


def _block_texts(blocks: Sequence[Json]) -> list[str]:
    texts = []
    for block in blocks:
        if block["type"] == "section":
            texts.append(block["text"]["text"])
        elif block["type"] == "context":
            texts.extend(e.get("text", "") for e in block["elements"])
    return texts


def _markdown(params: Mapping[str, Any]) -> str:
    """The markdown a call adds: its markdown blocks or stream chunks, else its text."""
    chunks = [c["text"] for c in params.get("chunks") or [] if c.get("type") == "markdown_text"]
    if "chunks" in params or params.get("markdown_text"):
        return str(params.get("markdown_text") or "") + "".join(chunks)
    blocks = params.get("blocks") or []
    markdown = [b["text"] for b in blocks if b.get("type") == "markdown"]
    return "".join(markdown) if markdown or blocks else str(params.get("text") or "")


def _other_blocks(params: Mapping[str, Any]) -> list[Json]:
    return [b for b in params.get("blocks") or [] if b.get("type") != "markdown"]


class SlackBot:
    """Talks to Lore as Slack would and reads back what Lore did through the Web API."""

    def __init__(
        self,
        slack: FakeSlack,
        llm: FakeOpenAI | None,
        runtime: Runtime,
        events: SlackEvents,
        http: TestClient[Any, Any],
    ) -> None:
        self.slack, self.llm, self.runtime, self.events, self.http = slack, llm, runtime, events, http
        self._serial = itertools.count(1)
        self._calls_from = 0
        self._llm_from = 0
        self._downloads_from = 0
        self._asked: dict[str, tuple[str, str, int]] = {}
        """Top-level messages delivered: ts → (channel, user, calls made before it)."""
        self.last_response_url = ""
        """The key of the response_url the last `press_private` brought."""

    # -- what a test reads ------------------------------------------------------------

    def begin(self) -> None:
        """Start a test's window: `calls()`, `downloads()` and `chat_requests` show only
        what follows."""
        self._calls_from = len(self.slack.calls)
        self._downloads_from = len(self.slack.downloads)
        self._llm_from = len(self.llm.chat_requests) if self.llm else 0

    def calls(self, method: str | None = None) -> list[SlackCall]:
        calls = self.slack.calls[self._calls_from :]
        return [c for c in calls if method is None or c.method == method]

    def downloads(self) -> list[Download]:
        return self.slack.downloads[self._downloads_from :]

    def methods(self) -> list[str]:
        return [c.method for c in self.calls()]

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        assert self.llm is not None
        return self.llm.chat_requests[self._llm_from :]

    def replies(self, channel: str, thread_ts: str) -> list[Reply]:
        """Lore's messages in a thread, in order, as the recorded calls built them (ephemeral
        ones too: their `method` is chat.postEphemeral)."""
        parts: dict[str, tuple[str, list[str], list[Json]]] = {}
        for call in self.calls():
            params = call.params
            if not call.ok or params.get("channel") != channel:
                continue
            if (
                call.method in ("chat.postMessage", "chat.startStream")
                and params.get("thread_ts") == thread_ts
            ):
                parts[call.response["ts"]] = (call.method, [_markdown(params)], _other_blocks(params))
            elif call.method == "chat.postEphemeral" and (
                params.get("thread_ts") == thread_ts or self._beside(call, thread_ts)
            ):
                parts[call.response["message_ts"]] = (call.method, [_markdown(params)], _other_blocks(params))
            elif call.method in ("chat.appendStream", "chat.stopStream") and params.get("ts") in parts:
                method, markdown, blocks = parts[params["ts"]]
                parts[params["ts"]] = (method, [*markdown, _markdown(params)], blocks + _other_blocks(params))
            elif call.method == "chat.update" and params.get("ts") in parts:
                parts[params["ts"]] = (parts[params["ts"]][0], [_markdown(params)], _other_blocks(params))
        return [
            Reply(ts, thread_ts, method, "".join(markdown), blocks)
            for ts, (method, markdown, blocks) in parts.items()
        ]

    def _remember(self, body: str) -> None:
        """Note a top-level message delivered, for `_beside`."""
        try:
            event = json.loads(body).get("event") or {}
        except (ValueError, AttributeError):
            return
        if event.get("user") and event.get("channel") and event.get("ts") and not event.get("thread_ts"):
            self._asked[str(event["ts"])] = (str(event["channel"]), str(event["user"]), len(self.slack.calls))

    def _beside(self, call: SlackCall, ts: str) -> bool:
        """An ephemeral reply posted beside message `ts` rather than in its thread (Slack
        shows ephemeral messages only in threads that have replies): to its author, in its
        channel, after it was delivered and before their next message there."""
        if "thread_ts" in call.params or ts not in self._asked:
            return False
        channel, user, start = self._asked[ts]
        if call.params.get("channel") != channel or call.params.get("user") != user:
            return False
        later = [at for c, u, at in self._asked.values() if (c, u) == (channel, user) and at > start]
        position = next(n for n, c in enumerate(self.slack.calls) if c is call or c == call)
        return start <= position < min(later, default=len(self.slack.calls) + 1)

    def said(self, channel: str, thread_ts: str) -> str:
        """Everything Lore wrote in a thread, as one text."""
        return "\n".join(r.text for r in self.replies(channel, thread_ts))

    # -- what a test does -------------------------------------------------------------

    def next_ts(self) -> str:
        """A new message ts from the fake's own clock, the one that stamps Lore's messages,
        so a thread reads back in the order things happened."""
        return self.slack._next_ts()

    async def post(
        self,
        body: str,
        content_type: str = "application/json",
        *,
        timestamp: int | None = None,
        secret: str = SIGNING_SECRET,
        headers: Mapping[str, str] | None = None,
    ) -> tuple[int, str]:
        """POST a signed body to /slack/events; the HTTP status and body Lore answered."""
        if content_type == "application/json":
            self._remember(body)
        signed = {"Content-Type": content_type, **signed_headers(body, secret, timestamp), **(headers or {})}
        response = await self.http.post("/slack/events", data=body.encode(), headers=signed)
        return response.status, await response.text()

    async def deliver(
        self,
        event: Json,
        *,
        event_id: str | None = None,
        settle: bool = True,
        **signing: Any,
    ) -> int:
        """Deliver an Events API callback; with `settle`, wait until Lore is done with it."""
        body = {
            "token": "legacy-verification-token",
            "team_id": TEAM,
            "api_app_id": "A0001",
            "event": event,
            "type": "event_callback",
            "event_id": event_id or f"Ev{next(self._serial):08d}",
            "event_time": int(time.time()),
            "authorizations": [{"team_id": TEAM, "user_id": BOT, "is_bot": True}],
        }
        status, _ = await self.post(json.dumps(body), **signing)
        if settle:
            await self.settle()
        return status

    def mention_event(
        self,
        channel: str,
        user: str,
        text: str,
        *,
        thread_ts: str | None = None,
        files: Sequence[str] = (),
    ) -> Json:
        """An `app_mention` of Lore, also stored in the fake so threads can be read back."""
        ts = self.next_ts()
        text = f"<@{BOT}> {text}"
        self.slack.add_message(channel, ts, text, user, thread_ts=thread_ts, files=list(files) or None)
        event: Json = {
            "type": "app_mention",
            "user": user,
            "text": text,
            "ts": ts,
            "channel": channel,
            "event_ts": ts,
            "team": TEAM,
        }
        if thread_ts:
            event["thread_ts"] = thread_ts
        if files:
            event["files"] = [self.slack.file(f) for f in files]
        return event

    async def mention(
        self,
        channel: str,
        user: str,
        text: str,
        *,
        thread_ts: str | None = None,
        files: Sequence[str] = (),
    ) -> str:
        """Mention Lore in a channel and wait for the work; the mention's ts."""
        event = self.mention_event(channel, user, text, thread_ts=thread_ts, files=files)
        assert await self.deliver(event) == 200
        return str(event["ts"])

    def dm_event(self, user: str, text: str = "", *, files: Sequence[str] = ()) -> Json:
        channel = f"D{user}"
        self.slack.add_channel(channel, "", is_im=True, user=user)
        ts = self.next_ts()
        self.slack.add_message(channel, ts, text, user, files=list(files) or None)
        event: Json = {
            "type": "message",
            "channel_type": "im",
            "user": user,
            "text": text,
            "ts": ts,
            "channel": channel,
            "event_ts": ts,
            "team": TEAM,
        }
        if files:
            event.update(subtype="file_share", files=[self.slack.file(f) for f in files])
        return event

    async def dm(self, user: str, text: str = "", *, files: Sequence[str] = ()) -> str:
        """A message in the user's DM with Lore (a file share when `files`); its ts."""
        event = self.dm_event(user, text, files=files)
        assert await self.deliver(event) == 200
        return str(event["ts"])

    async def press(self, user: str, channel: str, reply: Reply, action_id: str) -> int:
        """Press a button of one of Lore's messages (a signed `block_actions` payload)."""
        button = reply.button(action_id)
        payload = {
            "type": "block_actions",
            "team": {"id": TEAM, "domain": "lore-test"},
            "user": {"id": user, "username": user.lower(), "team_id": TEAM},
            "api_app_id": "A0001",
            "token": "legacy-verification-token",
            "container": {"type": "message", "message_ts": reply.ts, "channel_id": channel},
            "trigger_id": f"{next(self._serial)}.trigger",
            "channel": {"id": channel, "name": channel.lower()},
            "message": {"type": "message", "ts": reply.ts, "thread_ts": reply.thread_ts, "user": BOT},
            "actions": [
                {
                    "type": "button",
                    "action_id": action_id,
                    "block_id": "b",
                    "value": button["value"],
                    "action_ts": self.next_ts(),
                }
            ],
        }
        body = urlencode({"payload": json.dumps(payload)})
        status, _ = await self.post(body, "application/x-www-form-urlencoded")
        await self.settle()
        return status

    async def slash(
        self, user: str, channel: str, text: str, *, channel_name: str = "", settle: bool = True
    ) -> Slash:
        """`/lore <text>` as Slack sends it (form-encoded, signed); what Lore acknowledged
        with, and its response_url (with `settle`, once Lore is done)."""
        response_url = self.slack.response_url()
        form = {
            "token": "legacy-verification-token",
            "team_id": TEAM,
            "team_domain": "lore-test",
            "channel_id": channel,
            "channel_name": channel_name or ("directmessage" if channel.startswith("D") else channel.lower()),
            "user_id": user,
            "user_name": user.lower(),
            "command": "/lore",
            "text": text,
            "api_app_id": "A0001",
            "is_enterprise_install": "false",
            "response_url": response_url,
            "trigger_id": f"{next(self._serial)}.trigger",
        }
        started = time.perf_counter()
        status, acked = await self.post(urlencode(form), "application/x-www-form-urlencoded")
        seconds = time.perf_counter() - started
        if settle:
            await self.settle()
        return Slash(status, acked, response_url.rsplit("/", 1)[1], seconds)

    def responses(self, slash: Slash | str) -> list[Reply]:
        """What Lore sent through a response_url, in order, as replies."""
        key = slash.url if isinstance(slash, Slash) else slash
        return [
            Reply("", "", "response_url", _markdown(c.params), _other_blocks(c.params), dict(c.params))
            for c in self.calls("response_url")
            if c.params.get("url") == key and c.ok
        ]

    async def press_feedback(self, user: str, channel: str, reply: Reply, *, helpful: bool) -> int:
        """Press 👍 or 👎 of an answer's `feedback_buttons` (a signed `block_actions` payload)."""
        element = reply.button("answer_feedback")
        button = element["positive_button" if helpful else "negative_button"]
        action = {
            "type": "feedback_buttons",
            "action_id": "answer_feedback",
            "block_id": "feedback",
            "value": button["value"],
            "text": {"type": "plain_text", "text": "👍" if helpful else "👎"},
            "action_ts": self.next_ts(),
        }
        return await self.interact(user, channel, reply, action)

    async def press_private(self, user: str, channel: str, reply: Reply, action_id: str) -> int:
        """Press a button of a private (`/lore`) reply: Slack sends no message then, says the
        container is ephemeral, and brings a fresh response_url."""
        button = reply.button(action_id)
        action = {"type": "button", "action_id": action_id, "block_id": "b", "value": button["value"]}
        payload = {
            "type": "block_actions",
            "team": {"id": TEAM, "domain": "lore-test"},
            "user": {"id": user, "username": user.lower(), "team_id": TEAM},
            "api_app_id": "A0001",
            "token": "legacy-verification-token",
            "container": {
                "type": "message",
                "message_ts": self.next_ts(),
                "channel_id": channel,
                "is_ephemeral": True,
            },
            "trigger_id": f"{next(self._serial)}.trigger",
            "channel": {"id": channel, "name": channel.lower()},
            "response_url": self.slack.response_url(),
            "actions": [{**action, "action_ts": self.next_ts()}],
        }
        self.last_response_url = payload["response_url"].rsplit("/", 1)[1]
        body = urlencode({"payload": json.dumps(payload)})
        status, _ = await self.post(body, "application/x-www-form-urlencoded")
        await self.settle()
        return status

    async def interact(self, user: str, channel: str, reply: Reply, action: Json) -> int:
        """A signed `block_actions` payload for `action` on one of Lore's messages."""
        payload = {
            "type": "block_actions",
            "team": {"id": TEAM, "domain": "lore-test"},
            "user": {"id": user, "username": user.lower(), "team_id": TEAM},
            "api_app_id": "A0001",
            "token": "legacy-verification-token",
            "container": {"type": "message", "message_ts": reply.ts, "channel_id": channel},
            "trigger_id": f"{next(self._serial)}.trigger",
            "channel": {"id": channel, "name": channel.lower()},
            "message": {"type": "message", "ts": reply.ts, "thread_ts": reply.thread_ts, "user": BOT},
            "response_url": self.slack.response_url(),
            "actions": [action],
        }
        body = urlencode({"payload": json.dumps(payload)})
        status, _ = await self.post(body, "application/x-www-form-urlencoded")
        await self.settle()
        return status

    async def submit_view(self, user: str, view: Json, values: Json) -> tuple[int, str]:
        """Submit a modal Lore opened (`view` as views.open received it) with `values`, in
        Slack's `view_submission` shape (`{block_id: {action_id: value}}`); the HTTP answer."""
        submitted = {**view, "id": "V0SUBMIT", "state": {"values": values}, "hash": "1.h"}
        payload = {
            "type": "view_submission",
            "team": {"id": TEAM, "domain": "lore-test"},
            "user": {"id": user, "username": user.lower(), "team_id": TEAM},
            "api_app_id": "A0001",
            "token": "legacy-verification-token",
            "trigger_id": f"{next(self._serial)}.trigger",
            "view": submitted,
        }
        body = urlencode({"payload": json.dumps(payload)})
        answer = await self.post(body, "application/x-www-form-urlencoded")
        await self.settle()
        return answer

    async def settle(self) -> None:
        """Wait for Bolt's listeners (they run after the ack) and Lore's background work."""
        while True:
            await asyncio.sleep(0)
            listeners = [t for t in asyncio.all_tasks() if _is_listener(t)]
            if listeners:
                await asyncio.wait(listeners)
                continue
            await self.events.drain()
            if not any(_is_listener(t) for t in asyncio.all_tasks()):
                return


def _is_listener(task: asyncio.Task[Any]) -> bool:
    """A task in which Bolt runs a listener after acknowledging the request (Bolt names no
    public hook for it, so this goes by the name of the coroutine in its asyncio runner)."""
    return "run_ack_function_asynchronously" in getattr(task.get_coro(), "__qualname__", "")


def markdown_file(bot: SlackBot, file_id: str, name: str, text: str) -> str:
    """A Markdown file in the fake, to attach to a message; its id."""
    bot.slack.add_file(file_id, name, text.encode(), "text/markdown", "markdown")
    return file_id


def only_reply(bot: SlackBot, channel: str, thread_ts: str) -> Reply:
    replies = bot.replies(channel, thread_ts)
    assert len(replies) == 1, [r.text for r in replies]
    return replies[0]


@asynccontextmanager
async def running_bot(home: Path, *, llm: bool = False, **settings: Any) -> AsyncIterator[SlackBot]:
    """Lore's Slack app on loopback, with its own fakes, database and vectors under `home`."""
    async with AsyncExitStack() as stack:
        slack = await stack.enter_async_context(FakeSlack(BOT_TOKEN, TEAM, BOT))
        fake_llm = await stack.enter_async_context(FakeOpenAI()) if llm else None
        config = lore_settings(home, slack, fake_llm, **settings)
        runtime = await stack.enter_async_context(open_runtime(config, more_syncs=channel_syncs))
        app, events = build_app(runtime, config)
        stack.push_async_callback(events.close)
        http = await stack.enter_async_context(
            TestClient(TestServer(http_app(app, SIGNING_SECRET), host="127.0.0.1"))
        )
        yield SlackBot(slack, fake_llm, runtime, events, http)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def offline_bot(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[SlackBot]:
    """Lore without a language model (extractive answers), shared by a test module."""
    async with running_bot(tmp_path_factory.mktemp("lore-offline"), lore_crawl_allow="127.0.0.1") as bot:
        yield bot


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def llm_bot(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[SlackBot]:
    """Lore with the fake OpenAI server as its model, shared by a test module."""
    async with running_bot(tmp_path_factory.mktemp("lore-llm"), llm=True) as bot:
        yield bot


@pytest.fixture
def bot(offline_bot: SlackBot) -> SlackBot:
    offline_bot.begin()
    return offline_bot


@pytest.fixture
def gpt(llm_bot: SlackBot) -> SlackBot:
    llm_bot.begin()
    return llm_bot
