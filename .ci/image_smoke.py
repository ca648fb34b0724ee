"""Smoke test of Lore's image, run by `.ci/image` after it is built (`python .ci/image_smoke.py IMAGE`).

Inside the image (with `buildah run`, chroot isolation, sharing the host's loopback):
  1. `lore doctor` with no network configured: every component OK, the embedder offline;
  2. `lore ingest` of a file and `lore ask` about it: the answer quotes the file;
  3. `lore run` in HTTP mode, against the fake Slack Web API running here on the host: a
     signed `app_mention` sent from the host is answered in its thread.
Each step prints what it saw and how long it took; any failure exits 1.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fakes.slack_server import FakeSlack, signed_headers  # noqa: E402
from tests.support.ports import free_port  # noqa: E402

SECRET = "smoke-secret"
TOKEN = "xoxb-smoke"
TEAM = "T0SMOKE"


def container(image: str) -> str:
    return subprocess.run(
        ["buildah", "from", "--pull=never", image], check=True, capture_output=True, text=True
    ).stdout.strip()


def command(name: str, *args: str, env: dict[str, str] | None = None) -> list[str]:
    flags = [f"--env={k}={v}" for k, v in (env or {}).items()]
    return ["buildah", "run", "--isolation", "chroot", *flags, name, "--", *args]


def run(name: str, *args: str, env: dict[str, str] | None = None, stdin: bytes | None = None) -> str:
    started = time.monotonic()
    done = subprocess.run(command(name, *args, env=env), input=stdin, capture_output=True, timeout=600)
    out = done.stdout.decode() + done.stderr.decode()
    print(f"$ {' '.join(args)}   ({time.monotonic() - started:.1f} s, exit {done.returncode})")
    print("  " + "\n  ".join(out.strip().splitlines()[-25:]))
    if done.returncode != 0:
        raise SystemExit(f"smoke: `{' '.join(args)}` failed")
    return out


def doctor_and_ask(name: str) -> None:
    out = run(name, "lore", "doctor")
    assert "FAIL" not in out, "lore doctor reported a failure"
    assert "local:all-MiniLM-L6-v2" in out
    run(name, "sh", "-c", "mkdir -p /tmp/docs && printf '%s\\n' '# Runbook' '' "
        "'To roll back, run deploy --previous on the bastion.' > /tmp/docs/runbook.md")  # fmt: skip
    run(name, "lore", "ingest", "/tmp/docs")
    answer = run(name, "lore", "ask", "how do I roll back?", "--json")
    assert "deploy --previous" in answer, "the answer does not quote the ingested file"


async def answers_slack(name: str) -> None:
    port = free_port()
    async with FakeSlack(TOKEN, TEAM, "UBOT") as slack:
        slack.add_channel("C1", "general")
        slack.add_user("U1", "ada")
        env = {
            "SLACK_BOT_TOKEN": TOKEN,
            "SLACK_SIGNING_SECRET": SECRET,
            "SLACK_API_URL": slack.api_url,
            "PORT": str(port),
            "LORE_HOME": "/var/lib/lore/slack",
        }
        started = time.monotonic()
        with tempfile.TemporaryFile() as log:
            process = await asyncio.create_subprocess_exec(
                *command(name, "lore", "run", env=env), stdout=log, stderr=log
            )
            try:
                base = f"http://127.0.0.1:{port}"
                async with aiohttp.ClientSession() as http:
                    await up(http, base, process)
                    print(f"lore run answers /healthz after {time.monotonic() - started:.1f} s")
                    await mention(http, base, slack)
            finally:
                process.terminate()
                try:
                    await asyncio.wait_for(process.wait(), 60)
                except TimeoutError:
                    process.kill()
                log.seek(0)
                print("  " + "\n  ".join(log.read().decode(errors="replace").strip().splitlines()[-10:]))


async def up(http: aiohttp.ClientSession, base: str, process: asyncio.subprocess.Process) -> None:
    async with asyncio.timeout(120):
        while True:
            assert process.returncode is None, "lore run ended early"
            try:
                async with http.get(base + "/healthz") as response:
                    if response.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.5)


async def mention(http: aiohttp.ClientSession, base: str, slack: FakeSlack) -> None:
    ts = "1700000001.000100"
    slack.add_message("C1", ts, "<@UBOT> help", "U1")
    event = {"type": "app_mention", "user": "U1", "text": "<@UBOT> help", "ts": ts, "channel": "C1",
             "event_ts": ts, "team": TEAM}  # fmt: skip
    body = json.dumps({"team_id": TEAM, "api_app_id": "A1", "event": event, "type": "event_callback",
                       "event_id": "EvSMOKE1", "event_time": int(time.time()),
                       "authorizations": [{"team_id": TEAM, "user_id": "UBOT", "is_bot": True}]})  # fmt: skip
    started = time.monotonic()
    headers = {"Content-Type": "application/json", **signed_headers(body, SECRET)}
    async with http.post(base + "/slack/events", data=body, headers=headers) as response:
        assert response.status == 200, f"Slack's request was refused: {response.status}"
    forged = {"Content-Type": "application/json", **signed_headers(body, "not-the-secret")}
    async with http.post(base + "/slack/events", data=body, headers=forged) as response:
        assert response.status == 401, "a forged request was accepted"

    def replied(call: object) -> bool:
        return getattr(call, "method", "") in ("chat.postMessage", "chat.postEphemeral") and bool(
            getattr(call, "ok", False)
        )

    reply = await slack.wait_until(replied, timeout=60, what="Lore's reply")
    print(
        f"answered the signed mention in {time.monotonic() - started:.2f} s: {json.dumps(reply.params)[:160]}"
    )


def main() -> None:
    image = sys.argv[1] if len(sys.argv) > 1 else "localhost/lore:dev"
    name = container(image)
    try:
        doctor_and_ask(name)
        asyncio.run(answers_slack(name))
    finally:
        subprocess.run(["buildah", "rm", name], capture_output=True, check=False)
    print("smoke test passed")


if __name__ == "__main__":
    main()
