"""The Slack path with more processes: one `lore run` against two behind a round robin, both
on PostgreSQL and a Chroma server, with two `lore worker` processes running beside them.

The channel's three enabled indexes are filled once (`bench.slack_path.prepare_channel`,
into the shared stores); then, for one replica and for two, the Slack bench's burst (50
mentions in flight) is sent through the real Events API endpoint, alternately to each
replica, and the acknowledgement and answer times are what Slack would see
(`bench.slack_path.Driver`). Extractive answers (no model), so the figures are Lore's own.

The second replica is started beside the first (which stays warm) for the second burst.
`python -m bench.replicas [--quick]` prints the JSON; `python -m bench --only replicas`.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import AsyncExitStack, contextmanager
from pathlib import Path
from typing import Any

import aiohttp

from bench import run_alone
from bench.slack_path import BOT, CHANNEL, TEAM, USER, Driver, Plan, lore_run, prepare_channel, report
from bench.stores import Servers, shared_stores
from bot.app.services import build_services
from bot.app.settings import Settings
from storage.vectors import ChromaVectorStore
from tests.fakes.slack_server import FakeSlack
from tests.support.ports import free_port

CHUNKS, QUICK_CHUNKS = 10_000, 150
PLAN, QUICK_PLAN = Plan(50, 150), Plan(10, 20)
WORKERS = 2
ANSWER_WAIT = 600.0
"""Seconds an answer may take: fifty in flight on a shared 2-core machine queue for minutes."""


async def run(workdir: Path, quick: bool, servers: Servers | None = None) -> dict[str, Any]:
    """One replica, then two, on shared stores (on `servers` when given, else on servers
    of its own), with `WORKERS` workers beside them (JSON-ready)."""
    chunks, plan = (QUICK_CHUNKS, QUICK_PLAN) if quick else (CHUNKS, PLAN)
    with shared_stores(servers) as shared:
        stores = shared.environment()
        settings = Settings(
            _env_file=None,
            lore_home=workdir / "prepare",
            database_url=shared.database_url,
            chroma_host=shared.chroma_host,
            chroma_port=shared.chroma_port,
            slack_bot_token=None,
        )
        questions, filled = await prepare_channel(workdir / "prepare", chunks, settings=settings)
        results: dict[str, Any] = {"chunks": filled["chunks"], "fill_seconds": filled["fill_seconds"]}
        with workers(workdir, stores):
            results.update(await bursts(workdir, stores, questions, plan))
        await _drop_vectors(settings)
    results["workers"] = WORKERS
    results["load_average_1m"] = round(os.getloadavg()[0], 2)
    return results


async def bursts(workdir: Path, stores: dict[str, str], questions: list[str], plan: Plan) -> dict[str, Any]:
    """The burst on one replica, then on it and a second one started beside it (alternate
    mentions to each, as a round robin would); each replica warmed by a mention first."""
    results: dict[str, Any] = {}
    async with AsyncExitStack() as stack:
        slack = await stack.enter_async_context(FakeSlack("xoxb-bench", TEAM, BOT))
        slack.add_channel(CHANNEL, "bench")
        slack.add_user(USER, "bench")
        sessions: list[aiohttp.ClientSession] = []
        for replicas in (1, 2):
            home = workdir / f"replica-{replicas}"
            home.mkdir()
            port = free_port()
            await stack.enter_async_context(lore_run(home, port, slack.api_url, None, stores=stores))
            sessions.append(
                await stack.enter_async_context(aiohttp.ClientSession(f"http://127.0.0.1:{port}"))
            )
            driver = Driver(slack, sessions, f"{os.getpid()}{int(time.time())}{replicas}")
            for question in questions[:replicas]:  # warm each replica
                await driver.mention(question, wait=ANSWER_WAIT)
            asked = list(itertools.islice(itertools.cycle(questions), plan.mentions))
            timings = await driver.many(asked, plan.concurrency, wait=ANSWER_WAIT)
            results[f"replicas_{replicas}"] = {
                "concurrency": plan.concurrency,
                **report(timings),
                "load_average_1m": round(os.getloadavg()[0], 2),
            }
    return results


async def _drop_vectors(settings: Settings) -> None:
    """Remove this deployment's collections from the Chroma server (its database is dropped)."""
    services = build_services(settings)
    try:
        if isinstance(services.vectors, ChromaVectorStore):
            await asyncio.to_thread(services.vectors.drop_namespace)
    finally:
        await services.aclose()


@contextmanager
def workers(workdir: Path, stores: dict[str, str]) -> Iterator[None]:
    """`WORKERS` `lore worker` processes on the shared stores, for the duration."""
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "OPENAI_", "LORE_", "DATABASE_"))
    }
    env.update(stores, LORE_HOME=str(workdir / "workers"), ANONYMIZED_TELEMETRY="False")
    lore = str(Path(sys.executable).with_name("lore"))
    started = [
        subprocess.Popen([lore, "worker"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(WORKERS)
    ]
    try:
        yield
    finally:
        for process in started:
            process.terminate()
        for process in started:
            process.wait(timeout=60)


def main() -> None:
    run_alone("replicas", run, "a smoke run (150 chunks, 20 mentions, 10 in flight)")


if __name__ == "__main__":
    main()
