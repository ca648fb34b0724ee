"""`python -m bench.learn_history [--messages N …]`: learning a channel's history, as Slack
sees it: `lore run` (HTTP mode, a process of its own, indexing jobs in process) is told
"learn this channel" by a signed mention, against the fake Slack Web API holding a channel
of N messages (one every 20 seconds, every 25th a thread with three replies); until its
summary arrives. Reports the time and the resident memory of the `lore run` process: at
rest before, at its peak while learning, and the peak's growth, so memory can be compared
across history lengths (it should stay flat: the listing is streamed).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp

from bench.memory import peak_mb, reset_peak, rss_mb
from bench.slack_path import SECRET, TEAM, lore_run
from tests.fakes.slack_server import FakeSlack, signed_headers
from tests.support.ports import free_port

BOT, USER, CHANNEL = "UBOT", "UHIST", "CHIST"
START = 1_690_000_000
WORDS = [
    "deploy",
    "billing",
    "review",
    "rota",
    "incident",
    "pager",
    "cluster",
    "region",
    "standup",
    "release",
    "budget",
    "design",
]
TIMEOUT = 3600.0


def fill(slack: FakeSlack, messages: int) -> None:
    """`messages` messages in the channel, oldest first, replies counted among them."""
    made, n = 0, 0
    while made < messages:
        ts = f"{START + 20 * n}.000100"
        words = " ".join(WORDS[(n + k) % len(WORDS)] for k in range(12))
        slack.add_message(CHANNEL, ts, f"Note {n}: the {words} plan number {n * 7} is agreed.", USER)
        made += 1
        if n % 25 == 0:
            for r in range(min(3, messages - made)):
                reply = f"{START + 20 * n + r + 1}.000200"
                slack.add_message(CHANNEL, reply, f"Reply {r} to note {n}: confirmed.", USER, thread_ts=ts)
                made += 1
        n += 1


async def learn(home: Path, messages: int) -> dict[str, Any]:
    async with FakeSlack("xoxb-bench", TEAM, BOT) as slack:
        slack.add_channel(CHANNEL, "history")
        slack.add_user(USER, "historian")
        fill(slack, messages)
        port = free_port()
        async with (
            lore_run(home, port, slack.api_url, None, jobs_in_process=True) as pid,
            aiohttp.ClientSession() as http,
        ):
            at_rest = rss_mb(pid)
            resettable = reset_peak(pid)
            started = time.monotonic()
            await mention(http, port, slack, "learn this channel")
            summary = await finished(slack)
            return {
                "messages": messages,
                "seconds": round(time.monotonic() - started, 1),
                "rest_mb": at_rest,
                "peak_mb": peak_mb(pid),
                "peak_growth_mb": round((peak_mb(pid) or 0) - (at_rest or 0), 1) if resettable else None,
                "summary": summary,
            }


async def mention(http: aiohttp.ClientSession, port: int, slack: FakeSlack, text: str) -> None:
    ts = slack._next_ts()
    slack.add_message(CHANNEL, ts, f"<@{BOT}> {text}", USER)
    event = {"type": "app_mention", "user": USER, "text": f"<@{BOT}> {text}", "ts": ts, "channel": CHANNEL,
             "event_ts": ts, "team": TEAM}  # fmt: skip
    body = json.dumps({"team_id": TEAM, "api_app_id": "A0B", "event": event, "type": "event_callback",
                       "event_id": f"EvLEARN{ts.replace('.', '')}", "event_time": int(time.time()),
                       "authorizations": [{"team_id": TEAM, "user_id": BOT, "is_bot": True}]})  # fmt: skip
    headers = {"Content-Type": "application/json", **signed_headers(body, SECRET)}
    async with http.post(f"http://127.0.0.1:{port}/slack/events", data=body, headers=headers) as response:
        assert response.status == 200


async def finished(slack: FakeSlack) -> str:
    """The summary Lore posts when the job ends."""
    async with asyncio.timeout(TIMEOUT):
        while True:
            for call in reversed(slack.calls):
                said = json.dumps(call.params)
                if call.method.startswith("chat.") and ("Done reading" in said or "failed after" in said):
                    return str(call.params.get("text") or said)[:300]
            await asyncio.sleep(0.5)


async def main(lengths: list[int], only_listing: bool) -> None:
    for messages in lengths:
        if only_listing:
            print(json.dumps(await listing(messages)), flush=True)
            continue
        with tempfile.TemporaryDirectory(prefix="lore-learn-") as home:
            print(json.dumps(await learn(Path(home), messages)), flush=True)


# --- the listing alone ------------------------------------------------------------------------
# `--listing`: what a sync holds while it lists a history, without the cost of keeping it:
# the real `ChannelSync` and `ChannelReader` against the fake Slack Web API, with a keeper
# that only counts what it is given, under tracemalloc. Messages carry a rich-text block and
# the fields Slack's conversations.history gives, so their size is a real message's.


class CountingKeeper:
    """Stands in for `ThreadActions` on a learned channel: counts what it is asked to keep."""

    def __init__(self) -> None:
        self.documents = 0

    async def check_learnable(self, index: object, channel: str) -> None:
        return None

    async def keep(self, learned: object, text: object) -> object:
        self.documents += 1
        return _Kept()

    async def drop(self, learned: object, keys: object) -> int:
        return 0

    async def kept(self, learned: object) -> set[str]:
        return set()

    async def synced(self, learned: object, newest: str | None) -> None:
        return None


class _Kept:
    outcome = type("Outcome", (), {"value": "added"})()
    chunks = 1


def realistic(slack: FakeSlack, messages: int) -> None:
    """`fill`, with each message as Slack shows it (blocks, client ids, team)."""
    fill(slack, messages)
    for message in slack._messages.values():
        text = message["text"]
        message.update(
            client_msg_id=f"{abs(hash(message['ts'])):032x}"[:32],
            team=TEAM,
            blocks=[{"type": "rich_text", "block_id": message["ts"][-6:], "elements": [
                {"type": "rich_text_section", "elements": [{"type": "text", "text": text}]}]}],
        )  # fmt: skip


def _serve_fake(messages: int, pipe: Any) -> None:
    """The fake Slack Web API with a realistic channel, in a process of its own (so its
    records do not count as the sync's memory); sends its URL, then serves until told."""

    async def serve() -> None:
        async with FakeSlack("xoxb-bench", TEAM, BOT) as slack:
            slack.add_channel(CHANNEL, "history")
            slack.add_user(USER, "historian")
            realistic(slack, messages)
            pipe.send(slack.api_url)
            await asyncio.get_running_loop().run_in_executor(None, pipe.recv)

    asyncio.run(serve())


async def listing(messages: int) -> dict[str, Any]:
    import multiprocessing
    import tracemalloc
    from datetime import UTC, datetime

    from bot.slack.history import ChannelSync
    from bot.slack.reader import ChannelReader, build_client
    from storage.records import IndexRef, JobRef, SourceConfigRef
    from storage.values import JobState, Scope

    ours, theirs = multiprocessing.Pipe()
    fake = multiprocessing.get_context("spawn").Process(target=_serve_fake, args=(messages, theirs))
    fake.start()
    try:
        api_url = await asyncio.get_running_loop().run_in_executor(None, ours.recv)
        reader = ChannelReader(build_client("xoxb-bench", api_url), lambda text: False)
        keeper = CountingKeeper()
        sync = ChannelSync(reader, keeper)  # type: ignore[arg-type]
        now = datetime.now(UTC)
        index = IndexRef(1, TEAM, "history", Scope.CHANNEL, None, 1, False, "m", 3, 0, now)
        source = SourceConfigRef(1, 1, 1, "slack-channel", "#history", [CHANNEL], {}, "daily", None, now)
        job = JobRef(
            1, 1, 1, None, "manual", JobState.RUNNING, {}, now, now, None, None, "bench", None, False
        )
        tracemalloc.start()
        started = time.monotonic()
        await sync.sync(_Context(job), source, index)  # type: ignore[arg-type]
        seconds = time.monotonic() - started
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    finally:
        ours.send("stop")
        fake.join(30)
    return {"messages": messages, "listing_seconds": round(seconds, 1), "peak_traced_mb": round(peak / 2**20, 1),
            "documents_kept": keeper.documents}  # fmt: skip


class _Context:
    def __init__(self, job: Any) -> None:
        self.job, self.counters, self.worker = job, {}, "bench"

    def count(self, name: Any, n: int = 1) -> None:
        self.counters[str(name)] = self.counters.get(str(name), 0) + n

    def skip(self, reason: str) -> None:
        return None

    async def say(self, message: str, level: str = "info") -> None:
        return None

    def stopped(self) -> bool:
        return False

    async def done_before(self) -> set[str]:
        return set()

    async def handled(self, key: str, outcome: str) -> None:
        return None


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, nargs="+", default=[2_000, 8_000])
    parser.add_argument("--listing", action="store_true", help="Only the listing, under tracemalloc.")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.messages, arguments.listing))
