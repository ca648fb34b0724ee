"""The Slack path, measured as Slack sees it: signed Events API requests into Lore's real
Bolt endpoint (aiohttp on a loopback port), the fake Slack Web API recording what Lore
calls back and when.

For each mention: the HTTP acknowledgement, the first Web API call it causes, the
"working" signal (the thread's status) and the answer in its thread (the posted message, or the
end of the stream when a model answers). The channel has three enabled indexes, filled
with synthetic chunks (`bench.scale`) to the size measured; Lore runs as in production,
`lore run` in HTTP mode in a process of its own (the fakes and the driver stay out of it),
so its resident memory is its own: idle, with the indexes loaded, and at its peak under
each load.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import statistics
import sys
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp

from bench.memory import peak_mb, reset_peak, rss_mb
from bot.app.services import build_services
from bot.app.settings import Settings
from storage.access import Place
from storage.records import ChannelRef
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.fakes.slack_server import FakeSlack, SlackCall, signed_headers
from tests.support.ports import free_port

SECRET = "bench-signing-secret"
TEAM, BOT, USER, CHANNEL = "TBENCH", "UBOT", "UBENCH", "CBENCH"
ANSWER_TIMEOUT = 120.0
WORKING_SIGNALS = ("assistant.threads.setStatus", "reactions.add")
"""The "working" signal: the thread's status, or the reaction where Slack refuses a status."""
START_TIMEOUT = 600.0
"""How long `lore run` may take to serve (the wait ends as soon as it does): seconds on a quiet
machine, minutes for a `nice -n 19` run on a shared one (seen: over 120 s at load 23)."""


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


@dataclass(frozen=True)
class Plan:
    """One measured run: `mentions` mentions, `concurrency` in flight at a time."""

    concurrency: int
    mentions: int


async def prepare_channel(
    home: Path, chunks: int, *, indexes: int = 3, seed: int = 0, settings: Settings | None = None
) -> tuple[list[str], dict[str, Any]]:
    """A Lore home whose bench channel has `indexes` enabled indexes (its own and shared
    ones) holding `chunks` chunks between them; questions they answer, and how the fill went.
    `settings`: other stores than the home's (PostgreSQL, a Chroma server)."""
    from bench.scale import fill_index

    services = build_services(settings or _settings(home))
    try:
        channel: ChannelRef = await asyncio.to_thread(
            services.directory.ensure_channel, TEAM, CHANNEL, "bench", is_private=False
        )
        conversation = await asyncio.to_thread(services.directory.channel_conversation, channel)
        own = await services.catalog.channel_index(channel)
        await services.catalog.enable(conversation, own, as_default=True)
        targets = [own]
        place = Place(tenant_id=TEAM, user_id=None)
        for n in range(1, indexes):
            shared = await services.catalog.create_shared(place, f"bench-shared-{n}")
            await services.catalog.enable(conversation, shared)
            targets.append(shared)
        questions: list[str] = []
        filled = []
        for n, index in enumerate(targets):
            share = chunks // indexes + (1 if n < chunks % indexes else 0)
            result = await fill_index(services, index, share, seed=seed * 100 + n)
            questions.extend(result.questions)
            filled.append(result)
        seconds = sum(f.seconds for f in filled)
        return questions, {"chunks": sum(f.chunks for f in filled), "fill_seconds": round(seconds, 1)}
    finally:
        await services.aclose()


async def measure(
    home: Path, questions: Sequence[str], plans: Sequence[Plan], *, llm: bool
) -> dict[str, Any]:
    """`lore run` (HTTP mode) over a prepared home, in a process of its own: its resident
    memory idle and once the indexes are loaded, then each plan's timings and peak memory."""
    run = f"{os.getpid()}{int(time.time())}"  # event ids and message ts never seen by this home
    async with FakeSlack("xoxb-bench", TEAM, BOT) as slack, FakeOpenAI() as model:
        slack.add_channel(CHANNEL, "bench")
        slack.add_user(USER, "bench")
        if llm:
            model.default_reply = Reply("The documents say so [1].")
        port = free_port()
        async with lore_run(home, port, slack.api_url, model.base_url if llm else None) as pid:
            memory: dict[str, Any] = {"idle_mb": rss_mb(pid)}
            runs: dict[str, Any] = {}
            async with aiohttp.ClientSession(f"http://127.0.0.1:{port}") as http:
                driver = Driver(slack, http, run)
                await driver.mention(questions[0])  # warm: the indexes are loaded, caches filled
                memory["loaded_mb"] = rss_mb(pid)
                for plan in plans:
                    memory["peak_resettable"] = reset_peak(pid)
                    asked = list(itertools.islice(itertools.cycle(questions), plan.mentions))
                    timings = await driver.many(asked, plan.concurrency)
                    runs[str(plan.concurrency)] = {
                        "concurrency": plan.concurrency,
                        **report(timings),
                        "peak_mb": peak_mb(pid),
                    }
    return {"llm": llm, "memory": memory, "runs": runs}


@asynccontextmanager
async def lore_run(
    home: Path,
    port: int,
    slack_api_url: str,
    llm_url: str | None,
    *,
    jobs_in_process: bool = False,
    stores: dict[str, str] | None = None,
    settings: dict[str, str] | None = None,
) -> AsyncIterator[int]:
    """`lore run --host 127.0.0.1 --port PORT` talking to the fakes; its pid once it serves.
    `stores`: DATABASE_URL, CHROMA_HOST and CHROMA_PORT of shared stores; `settings`: settings of
    the run's own (`LORE_HELP_CONFIDENCE`)."""
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "OPENAI_", "LORE_", "DATABASE_"))
    }
    env.update(
        LORE_HOME=str(home),
        SLACK_BOT_TOKEN="xoxb-bench",
        SLACK_SIGNING_SECRET=SECRET,
        SLACK_API_URL=slack_api_url,
        LLM_MODEL="instant",
        LORE_JOBS_IN_PROCESS=str(jobs_in_process).lower(),
        ANONYMIZED_TELEMETRY="False",
    )
    if llm_url:
        env.update(OPENAI_API_KEY="bench", OPENAI_BASE_URL=llm_url)
    env.update(stores or {})
    env.update(settings or {})
    lore = str(Path(sys.executable).with_name("lore"))
    with (home / "lore-run.log").open("ab") as log:
        process = await asyncio.create_subprocess_exec(
            lore, "run", "--host", "127.0.0.1", "--port", str(port), env=env, stdout=log, stderr=log
        )
        try:
            await _serving(port, process)
            yield process.pid
        finally:
            if process.returncode is None:
                process.terminate()
                try:
                    await asyncio.wait_for(process.wait(), 60)
                except TimeoutError:  # a loaded machine: the figures are in, the process goes
                    process.kill()
                    await process.wait()


async def _serving(port: int, process: asyncio.subprocess.Process) -> None:
    async with asyncio.timeout(START_TIMEOUT), aiohttp.ClientSession() as http:
        while process.returncode is None:
            try:
                async with http.get(f"http://127.0.0.1:{port}/healthz") as response:
                    if response.status == 200:
                        return
            except aiohttp.ClientConnectionError:
                pass
            await asyncio.sleep(0.2)
    raise RuntimeError(f"lore run exited with {process.returncode}; see lore-run.log in its home")


def _settings(home: Path) -> Settings:
    """Settings for preparing a home: the storage and embedder `lore run` will use there."""
    return Settings(_env_file=None, lore_home=home, database_url=None, chroma_host=None, slack_bot_token=None)


class Driver:
    """Sends mentions as Slack does; to several replicas, in turn (a load balancer's round
    robin), when given several sessions."""

    def __init__(
        self, slack: FakeSlack, http: aiohttp.ClientSession | Sequence[aiohttp.ClientSession], run: str
    ) -> None:
        self._slack = slack
        self._replicas = itertools.cycle([http] if isinstance(http, aiohttp.ClientSession) else list(http))
        self._run = run
        self._ids = itertools.count(1)

    async def many(
        self, questions: Sequence[str], concurrency: int, wait: float = ANSWER_TIMEOUT
    ) -> list[Timing]:
        """Mention Lore with each question, `concurrency` at a time; `wait`: the seconds an
        answer may take before the run fails."""
        gate = asyncio.Semaphore(concurrency)

        async def one(question: str) -> Timing:
            async with gate:
                return await self.mention(question, wait=wait)

        return await asyncio.gather(*(one(q) for q in questions))

    async def mention(self, question: str, files: Sequence[str] = (), wait: float = ANSWER_TIMEOUT) -> Timing:
        """Mention Lore with `question` (and files from `FakeSlack.add_file`); the timings of
        what Slack sees, up to the first reply in the thread."""
        n = next(self._ids)
        ts = f"{1_800_000_000 + n}.{self._run[-6:]}"
        text = f"<@{BOT}> {question}"
        self._slack.add_message(CHANNEL, ts, text, USER, files=list(files) or None)
        shared = {"subtype": "file_share", "files": [self._slack.file(f) for f in files]} if files else {}
        event = {
            **shared,
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
                "event_id": f"EvBENCH{self._run}{n:08d}",
                "event_time": int(time.time()),
                "authorizations": [{"team_id": TEAM, "user_id": BOT, "is_bot": True}],
            }
        )
        headers = {"Content-Type": "application/json", **signed_headers(body, SECRET)}
        sent = time.monotonic()
        async with next(self._replicas).post("/slack/events", data=body, headers=headers) as response:
            assert response.status == 200, await response.text()
        acked = time.monotonic()
        answer = await self._slack.wait_until(
            lambda call: self._answers(call, ts), wait, f"answer to {question!r}"
        )
        calls = [c for c in self._slack.calls if c.received_at >= sent and _about(c, ts)]
        working = next((c for c in calls if c.method in WORKING_SIGNALS), answer)
        return Timing(
            ack=_ms(acked - sent),
            first_call=_ms(min(c.received_at for c in calls) - sent),
            working=_ms(working.received_at - sent),
            answer=_ms(answer.received_at - sent),
        )

    def _answers(self, call: SlackCall, ts: str) -> bool:
        """Whether `call` completes the answer to the mention at `ts`: the reply posted in its
        thread, the end of a stream started there, or the thread's status cleared (what ends
        a reply only the asker sees, such as a refused file: Slack shows it beside a message
        that has no thread yet, so it carries no `thread_ts`)."""
        params = call.params
        if call.method == "chat.postMessage":
            return bool(params.get("thread_ts") == ts)
        if call.method == "assistant.threads.setStatus":
            return params.get("thread_ts") == ts and not params.get("status")
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
