"""Latency of POST /v1/chat/completions over an index, Lore on loopback with the fake model
answering at once (so this is Lore's own cost: auth, retrieval, budget, prompt, formatting).

    .venv/bin/python -m tests.api.latency [N]

Each request asks a different question (the answer cache never hits); the first five warm
the embedder and the token counter and are not counted.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

from tests.api.conftest import running_api
from tests.knowledge.conftest import HANDBOOK

QUESTIONS = [
    "How long does a rollback take?",
    "When do we deploy the API?",
    "Who carries the pager?",
    "What happens to severity one incidents?",
    "How are rollbacks done?",
]
WARM_UP = 5


async def measure(n: int, *, stream: bool) -> list[float]:
    with tempfile.TemporaryDirectory(prefix="lore-latency-") as home:
        async with running_api(Path(home), llm=True, seed=False) as api:
            await api.create_index("bench")
            await api.add_text("bench", "handbook.md", HANDBOOK)
            times = []
            for i in range(n + WARM_UP):
                question = f"{QUESTIONS[i % len(QUESTIONS)]} (request {i})"
                body = {
                    "index_name": "bench",
                    "stream": stream,
                    "messages": [{"role": "user", "content": question}],
                }
                started = time.perf_counter()
                status, answer = await api.call("POST", "/v1/chat/completions", json_body=body)
                elapsed = time.perf_counter() - started
                assert status == 200, answer
                if i >= WARM_UP:
                    times.append(elapsed * 1000)
            return sorted(times)


def percentile(times: list[float], q: float) -> float:
    return times[min(len(times) - 1, round(q * (len(times) - 1)))]


def main() -> None:
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    for stream in (False, True):
        times = asyncio.run(measure(n, stream=stream))
        print(
            f"POST /v1/chat/completions stream={str(stream).lower():5} n={len(times)} "
            f"p50={percentile(times, 0.5):.1f} ms p95={percentile(times, 0.95):.1f} ms max={times[-1]:.1f} ms"
        )


if __name__ == "__main__":
    main()
