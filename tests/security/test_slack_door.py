"""`/slack/events` as an attacker meets it (finding 7, and the signature checks that held).

The body limit (2 MB) is enforced while reading, chunked bodies without Content-Length
included: 413 within seconds, and eight at once cannot make Lore buffer them. The signature
is verified before the body is parsed: unsigned or forged requests get 401 whatever they
hold; signed but malformed bodies get 400; neither leaves a traceback in the log.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import io
import json
import logging
import time
from contextlib import suppress
from urllib.parse import urlencode

import pytest

from tests.fakes.slack_server import signed_headers
from tests.security.conftest import Lore

pytestmark = pytest.mark.asyncio(loop_scope="module")

MB = 1024 * 1024
CHUNK = 64 * 1024


async def chunked_post(lore: Lore, total: int, headers: dict[str, str] | None = None) -> tuple[int, float]:
    """POST `total` bytes to /slack/events chunked, with no Content-Length, over a raw
    socket; the status Lore answered and the seconds it took, or (0, seconds) if Lore only
    closed the connection. Sending stops as soon as an answer arrives."""
    port = lore.http.server.port
    assert port is not None
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    head = ["POST /slack/events HTTP/1.1", "Host: 127.0.0.1", "Content-Type: application/json"]
    head += [f"{k}: {v}" for k, v in (headers or {}).items()]
    head += ["Transfer-Encoding: chunked", "", ""]
    started = time.monotonic()

    async def pump() -> None:
        writer.write("\r\n".join(head).encode())
        piece = b"{" + b"x" * (CHUNK - 1)
        for _ in range(total // CHUNK):
            writer.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
            await writer.drain()
        writer.write(b"0\r\n\r\n")
        await writer.drain()

    sending = asyncio.create_task(pump())
    try:
        line = await asyncio.wait_for(reader.readline(), 30)
    finally:
        sending.cancel()
        with suppress(asyncio.CancelledError, ConnectionError):
            await sending
        writer.close()
        with suppress(ConnectionError):
            await writer.wait_closed()
    seconds = time.monotonic() - started
    parts = line.split()
    return (int(parts[1]) if len(parts) > 1 else 0), seconds


async def test_an_unsigned_chunked_8mb_body_gets_413_within_seconds(lore: Lore) -> None:
    status, seconds = await chunked_post(lore, 8 * MB)
    assert status == 413
    assert seconds < 5


async def test_eight_chunked_bodies_at_once_all_get_413(lore: Lore) -> None:
    results = await asyncio.gather(*(chunked_post(lore, 8 * MB) for _ in range(8)))
    assert [status for status, _ in results] == [413] * 8
    assert max(seconds for _, seconds in results) < 10


async def test_a_declared_oversize_body_is_refused_before_it_is_read(lore: Lore) -> None:
    body = io.BytesIO(b"{" + b" " * (3 * MB) + b"}")
    response = await lore.http.post("/slack/events", data=body, headers={"Content-Type": "application/json"})
    assert response.status == 413


async def test_a_signed_body_just_under_the_limit_is_still_read(lore: Lore) -> None:
    body = json.dumps({"type": "url_verification", "challenge": "c", "pad": "x" * (2 * MB - 200)})
    headers = {"Content-Type": "application/json", **signed_headers(body, "secret")}
    response = await lore.http.post("/slack/events", data=io.BytesIO(body.encode()), headers=headers)
    assert response.status == 200 and json.loads(await response.text()) == {"challenge": "c"}


MALFORMED = [
    ("application/json", "{not json"),
    ("application/json", "[1, 2, 3]"),
    ("application/json", '"a string"'),
    ("application/x-www-form-urlencoded", urlencode({"payload": "{broken"})),
    ("application/x-www-form-urlencoded", urlencode({"payload": "[]"})),
    ("text/plain", "\x00\x01garbage"),
]


@pytest.mark.parametrize(("content_type", "body"), MALFORMED)
async def test_unsigned_junk_is_401_and_leaves_no_traceback(
    lore: Lore, caplog: pytest.LogCaptureFixture, content_type: str, body: str
) -> None:
    caplog.set_level(logging.INFO)
    response = await lore.http.post(
        "/slack/events", data=body.encode(), headers={"Content-Type": content_type}
    )
    assert response.status == 401
    assert [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR] == []


@pytest.mark.parametrize(("content_type", "body"), MALFORMED)
async def test_signed_junk_is_400_and_leaves_no_traceback(
    lore: Lore, caplog: pytest.LogCaptureFixture, content_type: str, body: str
) -> None:
    caplog.set_level(logging.INFO)
    lore.begin()
    status, _ = await lore.post(body, content_type)
    assert status == 400
    assert [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR] == []
    assert lore.calls() == []


async def test_bytes_that_are_not_utf8_are_400_when_signed_and_401_when_not(
    lore: Lore, caplog: pytest.LogCaptureFixture
) -> None:
    raw = b'{"type": "\xff\xfe"}'
    stamp = str(int(time.time()))
    digest = hmac.new(b"secret", b"v0:" + stamp.encode() + b":" + raw, hashlib.sha256).hexdigest()
    signed = {"X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": f"v0={digest}"}
    response = await lore.http.post(
        "/slack/events", data=raw, headers={"Content-Type": "application/json", **signed}
    )
    assert response.status == 400
    response = await lore.http.post("/slack/events", data=raw, headers={"Content-Type": "application/json"})
    assert response.status == 401
    assert [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR] == []


async def test_forged_stale_replayed_and_unsigned_requests_are_401(lore: Lore) -> None:
    """Held: the signature checks that already worked."""
    challenge = json.dumps({"type": "url_verification", "challenge": "c"})
    assert (await lore.post(challenge, secret="not-the-secret"))[0] == 401
    assert (await lore.post(challenge, timestamp=int(time.time()) - 6 * 60))[0] == 401
    assert (await lore.post(challenge, timestamp=int(time.time()) + 6 * 60))[0] == 401
    signed = signed_headers(challenge, "secret")
    tampered = challenge.replace('"c"', '"d"')
    response = await lore.http.post(
        "/slack/events", data=tampered.encode(), headers={"Content-Type": "application/json", **signed}
    )
    assert response.status == 401
    bare = await lore.http.post(
        "/slack/events", data=challenge.encode(), headers={"Content-Type": "application/json"}
    )
    assert bare.status == 401
    only_stamp = {"X-Slack-Request-Timestamp": signed["X-Slack-Request-Timestamp"]}
    response = await lore.http.post("/slack/events", data=challenge.encode(), headers=only_stamp)
    assert response.status == 401
