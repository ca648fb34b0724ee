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
from dataclasses import dataclass
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
class Reply:
    """One message Lore posted in a thread, put together from the Web API calls that made it."""

    ts: str
    thread_ts: str
    method: str
    markdown: str
    """The answer text: the markdown blocks, the streamed chunks, or the plain text."""
    blocks: list[Json]

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
        """Lore's messages in a thread, in order, as the recorded calls built them."""
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
            elif call.method in ("chat.appendStream", "chat.stopStream") and params.get("ts") in parts:
                method, markdown, blocks = parts[params["ts"]]
                parts[params["ts"]] = (method, [*markdown, _markdown(params)], blocks + _other_blocks(params))
            elif call.method == "chat.update" and params.get("ts") in parts:
                parts[params["ts"]] = (parts[params["ts"]][0], [_markdown(params)], _other_blocks(params))
        return [
            Reply(ts, thread_ts, method, "".join(markdown), blocks)
            for ts, (method, markdown, blocks) in parts.items()
        ]

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
        self.slack.add_channel(channel, "", is_im=True)
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
        http = await stack.enter_async_context(TestClient(TestServer(http_app(app), host="127.0.0.1")))
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
