"""`lore run` in a process of its own. In Socket Mode with PORT set it serves /healthz,
/readyz and /metrics there, and counts Slack's answers in /metrics like the API's; in HTTP
mode, signed requests on its request URL get `/lore` answered to the caller alone and the
Home tab published."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

import aiohttp
import pytest

from tests.fakes.slack_server import FakeSlack, signed_headers
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


@pytest.mark.e2e
@pytest.mark.asyncio
async def test_lore_run_in_http_mode_answers_a_slash_command_privately_and_publishes_the_home(
    tmp_path: Path,
) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    async with FakeSlack("xoxb-test", "T0001", "UBOT") as slack:
        slack.add_channel("C1", "general")
        slack.add_user("U1", "ada")
        env = {
            **{
                k: v
                for k, v in os.environ.items()
                if not k.startswith(("SLACK_", "OPENAI_", "DATABASE_", "CHROMA_"))
            },
            "LORE_HOME": str(tmp_path / "home"),
            "SLACK_BOT_TOKEN": "xoxb-test",
            "SLACK_SIGNING_SECRET": "secret",
            "SLACK_API_URL": slack.api_url,
        }
        process = await asyncio.create_subprocess_exec(
            LORE, "run", "--host", "127.0.0.1", "--port", str(port), env=env, cwd=tmp_path,
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        try:
            await wait_until_up(base, process, timeout=120)
            response_url = slack.response_url()
            form = urlencode({"team_id": "T0001", "channel_id": "C1", "channel_name": "general", "user_id": "U1",
                              "command": "/lore", "text": "list indexes", "response_url": response_url,
                              "trigger_id": "1.t", "api_app_id": "A1"})  # fmt: skip
            home = json.dumps({"type": "event_callback", "team_id": "T0001", "event_id": "EvHome",
                               "authorizations": [{"team_id": "T0001", "user_id": "UBOT"}],
                               "event": {"type": "app_home_opened", "user": "U1", "channel": "DU1", "tab": "home"}})  # fmt: skip
            async with aiohttp.ClientSession() as http:
                for body, kind in ((form, "application/x-www-form-urlencoded"), (home, "application/json")):
                    headers = {**signed_headers(body, "secret"), "Content-Type": kind}
                    async with http.post(base + "/slack/events", data=body, headers=headers) as response:
                        assert response.status == 200
            [reply] = await slack.wait_for("response_url", timeout=60)
            [published] = await slack.wait_for("views.publish", timeout=60)
        finally:
            process.terminate()
            _, errors = await process.communicate()
        assert process.returncode == 0, errors.decode()[-2000:]
    assert reply.params["response_type"] == "ephemeral" and "Indexes you can use here" in reply.params["text"]
    assert not [c for c in slack.calls if c.method in ("chat.postMessage", "chat.postEphemeral")]
    assert published.params["user_id"] == "U1" and published.params["view"]["type"] == "home"
