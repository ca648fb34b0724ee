"""The Slack path, measured as Slack sees it: signed Events API requests into Lore's real
Bolt endpoint (aiohttp on a loopback port), the fake Slack Web API recording what Lore
calls back and when.

For each mention: the HTTP acknowledgement, the first Web API call it causes, the
"working" signal (the reaction) and the answer in its thread (the posted message, or the
end of the stream when a model answers).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

from bot.runtime import open_runtime
from bot.settings import Settings
from bot.slack.app import build_app
from bot.slack.runner import http_app
from knowledge.ingest import Source
from storage.records import ChannelRef
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.fakes.slack_server import FakeSlack, SlackCall, signed_headers

SECRET = "bench-signing-secret"
TEAM, BOT, USER, CHANNEL = "TBENCH", "UBOT", "UBENCH", "CBENCH"
ANSWER_TIMEOUT = 120.0


@dataclass(frozen=True)
class Timing:
    """Milliseconds from sending one mention to each thing Slack would see."""

    ack: float
    first_call: float
    working: float
    answer: float


def summary(values: Sequence[float]) -> dict[str, float]:
    ordered = sorted(values)

    def at(q: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 1)

    return {"p50_ms": round(statistics.median(ordered), 1), "p95_ms": at(0.95), "p99_ms": at(0.99)}


def report(timings: Sequence[Timing]) -> dict[str, Any]:
    return {
        "mentions": len(timings),
        "ack": summary([t.ack for t in timings]),
        "first_call": summary([t.first_call for t in timings]),
        "working": summary([t.working for t in timings]),
        "answer": summary([t.answer for t in timings]),
    }


async def measure_mentions(
    home: Path,
    documents: Sequence[tuple[str, str]],
    questions: Sequence[str],
    *,
    concurrency: int = 1,
    llm: bool = False,
) -> dict[str, Any]:
    """Fill a channel's index with `documents`, then mention Lore once per question,
    `concurrency` at a time; p50/p95/p99 of each step."""
    async with FakeSlack("xoxb-bench", TEAM, BOT) as slack, FakeOpenAI() as model:
        slack.add_channel(CHANNEL, "bench")
        slack.add_user(USER, "bench")
        settings = Settings(
            _env_file=None,
            lore_home=home,
            database_url=None,
            chroma_host=None,
            slack_bot_token="xoxb-bench",
            slack_signing_secret=SECRET,
            slack_app_token=None,
            slack_api_url=slack.api_url,
            openai_api_key="bench" if llm else None,
            openai_base_url=model.base_url if llm else None,
            llm_model="instant",
        )
        if llm:
            model.default_reply = Reply("The documents say so [1].")
        async with open_runtime(settings) as runtime:
            chunks = await _fill(runtime.services, documents)
            app, events = build_app(runtime, settings)
            runner = web.AppRunner(http_app(app), access_log=None)
            await runner.setup()
            site = web.TCPSite(runner, "127.0.0.1", 0)
            await site.start()
            port = runner.addresses[0][1]
            try:
                async with aiohttp.ClientSession(f"http://127.0.0.1:{port}") as http:
                    driver = _Driver(slack, http)
                    await driver.mention("hello")  # warm: the channel is known, caches are loaded
                    timings = await driver.many(questions, concurrency)
            finally:
                await events.close()
                await runner.cleanup()
    return {"concurrency": concurrency, "llm": llm, "chunks": chunks, **report(timings)}


async def _fill(services: Any, documents: Sequence[tuple[str, str]]) -> int:
    """The channel's index, filled; its chunk count."""
    channel: ChannelRef = await asyncio.to_thread(
        services.directory.ensure_channel, TEAM, CHANNEL, "bench", is_private=False
    )
    index = await services.catalog.channel_index(channel)
    sources = [
        Source(name=f"doc-{n}.md", data=f"# {title}\n\n{text}\n".encode(), mime_type="text/markdown")
        for n, (title, text) in enumerate(documents)
    ]
    await services.ingestor.add_many(index, sources)
    return int(services.indexes.stats(index.id).chunks)


class _Driver:
    def __init__(self, slack: FakeSlack, http: aiohttp.ClientSession) -> None:
        self._slack = slack
        self._http = http
        self._ids = itertools.count(1)
        self._clock = itertools.count(1)

    async def many(self, questions: Sequence[str], concurrency: int) -> list[Timing]:
        gate = asyncio.Semaphore(concurrency)

        async def one(question: str) -> Timing:
            async with gate:
                return await self.mention(question)

        return await asyncio.gather(*(one(q) for q in questions))

    async def mention(self, question: str) -> Timing:
        n = next(self._ids)
        ts = f"1800000000.{n:06d}"
        text = f"<@{BOT}> {question}"
        self._slack.add_message(CHANNEL, ts, text, USER)
        event = {
            "type": "app_mention",
            "user": USER,
            "text": text,
            "ts": ts,
            "channel": CHANNEL,
            "team": TEAM,
        }
        body = json.dumps(
            {
                "type": "event_callback",
                "team_id": TEAM,
                "api_app_id": "ABENCH",
                "event": {**event, "event_ts": ts},
                "event_id": f"EvBENCH{n:08d}",
                "event_time": int(time.time()),
                "authorizations": [{"team_id": TEAM, "user_id": BOT, "is_bot": True}],
            }
        )
        headers = {"Content-Type": "application/json", **signed_headers(body, SECRET)}
        sent = time.monotonic()
        async with self._http.post("/slack/events", data=body, headers=headers) as response:
            assert response.status == 200, await response.text()
        acked = time.monotonic()
        answer = await self._slack.wait_until(
            lambda call: self._answers(call, ts), ANSWER_TIMEOUT, f"answer to {question!r}"
        )
        calls = [c for c in self._slack.calls if c.received_at >= sent and _about(c, ts)]
        working = next((c for c in calls if c.method == "reactions.add"), answer)
        return Timing(
            ack=_ms(acked - sent),
            first_call=_ms(min(c.received_at for c in calls) - sent),
            working=_ms(working.received_at - sent),
            answer=_ms(answer.received_at - sent),
        )

    def _answers(self, call: SlackCall, ts: str) -> bool:
        """Whether `call` completes the answer to the mention at `ts`: the reply posted in its
        thread, or the end of a stream started there."""
        params = call.params
        if call.method == "chat.postMessage":
            return bool(params.get("thread_ts") == ts)
        if call.method == "chat.stopStream":
            stream = self._slack.message(str(params.get("channel")), str(params.get("ts"))) or {}
            return bool(stream.get("thread_ts") == ts)
        return False


def _about(call: SlackCall, ts: str) -> bool:
    """Whether a Web API call concerns the mention at `ts` (its reaction, thread or reply)."""
    params = call.params
    return ts in (params.get("timestamp"), params.get("thread_ts"), params.get("ts"))


def _ms(seconds: float) -> float:
    return seconds * 1000
