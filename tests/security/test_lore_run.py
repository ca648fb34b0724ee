"""The real `lore run` (HTTP mode, a process of its own) against the fake Slack Web API and a
second loopback host: no token and no content from a foreign file host, no raw `<!channel>`
posted, an unsigned chunked 8 MB body refused with 413 within seconds, and an answer that
still arrives after a 429 on posting it."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import aiohttp
import pytest

from tests.fakes.slack_server import FakeSlack
from tests.security.conftest import HostileHost, raw_mentions
from tests.support.lore_run import BOT, TEAM, TOKEN, Door, dm, lore_run, reply_to

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio]

LEAK = b"# Internal\n\nThe vault combination is 31-41-59.\n"


async def chunked_unsigned(base: str, total: int) -> tuple[int, float]:
    port = int(base.rsplit(":", 1)[1])
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    head = b"POST /slack/events HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    started = time.monotonic()
    piece = b"x" * 65536

    async def pump() -> None:
        writer.write(head)
        for _ in range(total // len(piece)):
            writer.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
            await writer.drain()

    sending = asyncio.create_task(pump())
    try:
        line = await asyncio.wait_for(reader.readline(), 30)
    finally:
        sending.cancel()
        await asyncio.gather(sending, return_exceptions=True)
        writer.close()
    return int(line.split()[1]), time.monotonic() - started


async def test_lore_run_holds(tmp_path: Path) -> None:
    async with (
        FakeSlack(TOKEN, TEAM, BOT) as slack,
        HostileHost({"/files/vault.md": (LEAK, "text/markdown")}) as foreign,
        lore_run(tmp_path, slack) as base,
        aiohttp.ClientSession() as http,
    ):
        door = Door(http, base, slack)
        slack.add_user("URUN", "runner")
        url = foreign.url("/files/vault.md")
        remote = {"id": "FREMOTE", "name": "vault.md", "mimetype": "text/markdown", "is_external": True,
                  "url_private": url, "url_private_download": url}  # fmt: skip
        event = dm(slack, "URUN", "", [remote])
        await door.deliver(event)
        said = json.dumps((await reply_to(slack, str(event["ts"]))).params)
        assert "LORE_CRAWL_ALLOW" in said and "31-41-59" not in said
        assert foreign.hits.snapshot() == [] and foreign.authorizations == []

        slack.add_file(
            "FLOUD", "<!channel> minutes.md", b"# Minutes\n\nThe kiwi launch is on Friday.\n", "text/markdown"
        )
        event = dm(slack, "URUN", "", [slack.file("FLOUD")])
        await door.deliver(event)
        await reply_to(slack, str(event["ts"]))

        status, seconds = await chunked_unsigned(base, 8 * 1024 * 1024)
        assert status == 413 and seconds < 5

        slack.rate_limit("chat.postMessage")
        event = dm(slack, "URUN", "when is the kiwi launch?")
        await door.deliver(event)
        answer = await reply_to(slack, str(event["ts"]))
        assert "Friday" in json.dumps(answer.params)
        assert any(c.status == 429 for c in slack.calls_to("chat.postMessage"))

        posted = "\n".join(json.dumps(c.params) for c in slack.calls if c.method.startswith("chat."))
        assert raw_mentions(posted) == []
