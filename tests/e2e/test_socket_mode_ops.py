"""`lore run` in Socket Mode, in a process of its own, with PORT set: it serves /healthz,
/readyz and /metrics there, and counts Slack's answers in /metrics like the API's."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
from pathlib import Path

import aiohttp
import pytest

from tests.fakes.slack_socket import FakeSlackSocket
from tests.support.ports import free_port

LORE = str(Path(sys.executable).with_name("lore"))


async def wait_until_up(base: str, process: asyncio.subprocess.Process, timeout: float) -> None:  # noqa: ASYNC109
    deadline = time.monotonic() + timeout
    async with aiohttp.ClientSession() as http:
        while time.monotonic() < deadline:
            assert process.returncode is None, "lore run ended early"
            with contextlib.suppress(aiohttp.ClientError):
                async with http.get(base + "/healthz") as response:
                    if response.status == 200:
                        return
            await asyncio.sleep(0.2)
    raise TimeoutError("lore run never served /healthz")


@pytest.mark.e2e
@pytest.mark.asyncio
async def test_socket_mode_serves_health_readiness_and_metrics_on_port(tmp_path: Path) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    async with FakeSlackSocket() as slack:
        slack.add_channel("C1", "general")
        slack.add_user("U1", "ada")
        env = {
            **{
                k: v
                for k, v in os.environ.items()
                if not k.startswith(("SLACK_", "OPENAI_", "DATABASE_", "CHROMA_"))
            },
            "LORE_HOME": str(tmp_path / "home"),
            "SLACK_BOT_TOKEN": slack.bot_token,
            "SLACK_APP_TOKEN": slack.app_token,
            "SLACK_API_URL": slack.api_url,
            "PORT": str(port),
        }
        process = await asyncio.create_subprocess_exec(
            LORE, "run", "--host", "127.0.0.1", env=env, cwd=tmp_path,
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        try:
            await wait_until_up(base, process, timeout=120)
            event = {"type": "app_mention", "user": "U1", "text": "<@UBOT> who waters the plants?",
                     "ts": "1700000001.000100", "channel": "C1"}  # fmt: skip
            body = {"type": "event_callback", "team_id": "T0001", "event_id": "Ev1", "event": event,
                    "event_time": 1700000001, "authorizations": [{"team_id": "T0001", "user_id": "UBOT"}]}  # fmt: skip
            await slack.wait_for_ack(await slack.send_event(body))
            [answer] = await slack.wait_for("chat.postMessage", timeout=60)
            assert answer.params["thread_ts"] == "1700000001.000100"
            async with aiohttp.ClientSession() as http:
                async with http.get(base + "/readyz") as response:
                    assert response.status == 200 and (await response.json())["ready"] is True
                async with http.get(base + "/metrics") as response:
                    metrics = await response.text()
                async with http.get(base + "/v1/indexes") as response:
                    assert response.status == 404  # only the operations routes, not the API
        finally:
            process.terminate()
            _, errors = await process.communicate()
        assert process.returncode == 0, errors.decode()[-2000:]
    counted = [line for line in metrics.splitlines() if line.startswith("lore_answers_total{")]
    assert len(counted) == 1 and 'endpoint="slack"' in counted[0] and counted[0].endswith(" 1")
