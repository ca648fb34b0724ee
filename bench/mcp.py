"""MCP's `search_knowledge` over Streamable HTTP, next to the same search through the HTTP API
(`POST /v1/indexes/{index}/query`), both answered by the real `lore serve` in a process of
its own over one index of synthetic chunks (`bench.scale`).

The lanes take turns question by question (so that the machine's noise falls on all of them
alike), each asking questions no lane asked before (no query-embedding cache helps one), the
same `k` and the same hybrid search. The MCP lanes go through the SDK's own client, as an
agent's requests do: the `initialize`-handshake revision (`legacy`, what Claude Code and
Cursor speak) and the 2026 one (`auto`); the API lane through aiohttp, as a script's would.

`python -m bench.mcp [--quick]` prints the JSON.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from bench import run_alone
from bench.retrieval import machine, summary
from bench.scale import create_index, embedded_pool, fill_index, questions
from bot.app.keys import ApiKeys
from bot.app.services import build_services
from bot.app.settings import Settings
from tests.support.ports import free_port

CHUNKS, QUICK_CHUNKS = 10_000, 300
QUERIES, QUICK_QUERIES = 100, 6
WARM_UP = 5
K = 8
TENANT, INDEX = "bench", "handbook"
START_TIMEOUT = 600.0
"""How long `lore serve` may take to answer (the wait ends as soon as it does): a `nice -n 19`
run on a shared machine at load ~22 took over 120 s."""
Lane = Callable[[str], Awaitable[None]]


async def run(workdir: Path, quick: bool) -> dict[str, Any]:
    chunks, count = (QUICK_CHUNKS, QUICK_QUERIES) if quick else (CHUNKS, QUERIES)
    home = workdir / "lore"
    secret, asked = await _prepare(home, chunks, count)
    async with lore_serve(home) as base, AsyncExitStack() as stack:
        http = await stack.enter_async_context(aiohttp.ClientSession())
        lanes: dict[str, Lane] = {"api_query": _api_lane(http, base, secret)}
        for mode in ("legacy", "auto"):
            lanes[f"mcp_{mode}"] = await _mcp_lane(stack, base, secret, mode)
        times = await _take_turns(lanes, asked)
    latency = {name: summary(values) for name, values in times.items()}
    api = latency["api_query"]["p95_ms"]
    return {
        "machine": machine(),
        "quick": quick,
        "chunks": chunks,
        "queries": count,
        "k": K,
        "latency": latency,
        "p95_vs_api": {
            name: round(latency[name]["p95_ms"] / api, 2) for name in latency if name != "api_query"
        },
    }


async def _prepare(home: Path, chunks: int, count: int) -> tuple[str, dict[str, list[str]]]:
    """A home whose shared index holds `chunks` synthetic chunks, a service key of its tenant,
    and each lane's questions (warm-up first), none asked twice."""
    services = build_services(
        Settings(_env_file=None, lore_home=home, database_url=None, chroma_host=None, slack_bot_token=None)
    )
    try:
        index = await create_index(services, INDEX, tenant=TENANT)
        await fill_index(services, index, chunks)
        pool = await embedded_pool(services.embedder)
        secret = ApiKeys(services.db).create(TENANT, "bench").secret
    finally:
        await services.aclose()
    lanes = ("api_query", "mcp_legacy", "mcp_auto")
    every = questions(pool, len(lanes) * (WARM_UP + count))
    return secret, {lane: every[n :: len(lanes)] for n, lane in enumerate(lanes)}


def _api_lane(http: aiohttp.ClientSession, base: str, secret: str) -> Lane:
    url = f"{base}/v1/indexes/{INDEX}/query"
    headers = {"Authorization": f"Bearer {secret}"}

    async def search(question: str) -> None:
        body = {"query": question, "query_type": "hybrid", "top_k": K}
        async with http.post(url, json=body, headers=headers) as response:
            found = await response.json()
            assert response.status == 200 and found["matches"], found

    return search


async def _mcp_lane(stack: AsyncExitStack, base: str, secret: str, mode: str) -> Lane:
    http = await stack.enter_async_context(
        create_mcp_http_client(headers={"Authorization": f"Bearer {secret}"})
    )
    client = await stack.enter_async_context(
        Client(streamable_http_client(f"{base}/mcp", http_client=http), mode=mode)
    )

    async def search(question: str) -> None:
        result = await client.call_tool("search_knowledge", {"query": question, "indexes": [INDEX], "k": K})
        assert not result.is_error and isinstance(result.structured_content, dict), result.content
        assert result.structured_content["passages"], result.structured_content

    return search


async def _take_turns(lanes: dict[str, Lane], asked: dict[str, list[str]]) -> dict[str, list[float]]:
    """Milliseconds per question of each lane, the lanes taking turns, after the warm-up."""
    times: dict[str, list[float]] = {name: [] for name in lanes}
    for turn in range(len(next(iter(asked.values())))):
        for name, lane in lanes.items():
            began = time.perf_counter()
            await lane(asked[name][turn])
            if turn >= WARM_UP:
                times[name].append((time.perf_counter() - began) * 1000)
    return times


@asynccontextmanager
async def lore_serve(home: Path) -> AsyncIterator[str]:
    """`lore serve` on a free loopback port over `home`; its base URL once it answers."""
    port = free_port()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SLACK_", "OPENAI_", "LORE_", "DATABASE_", "CHROMA_"))
    }
    env.update(LORE_HOME=str(home), LORE_JOBS_IN_PROCESS="false", ANONYMIZED_TELEMETRY="False")
    lore = str(Path(sys.executable).with_name("lore"))
    base = f"http://127.0.0.1:{port}"
    with (home / "lore-serve.log").open("ab") as log:
        process = await asyncio.create_subprocess_exec(
            lore, "serve", "--host", "127.0.0.1", "--port", str(port), env=env, stdout=log, stderr=log
        )
        try:
            await _answering(base, process)
            yield base
        finally:
            if process.returncode is None:
                process.terminate()
                await asyncio.wait_for(process.wait(), 60)


async def _answering(base: str, process: asyncio.subprocess.Process) -> None:
    async with asyncio.timeout(START_TIMEOUT), aiohttp.ClientSession() as http:
        while process.returncode is None:
            try:
                async with http.get(f"{base}/healthz") as response:
                    if response.status == 200:
                        return
            except aiohttp.ClientConnectionError:
                pass
            await asyncio.sleep(0.2)
    raise RuntimeError(f"lore serve exited with {process.returncode}; see lore-serve.log in its home")


if __name__ == "__main__":
    run_alone("mcp", run, "a seconds-long run (300 chunks, 6 questions a lane)")
