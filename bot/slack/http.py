"""Slack's request URL on aiohttp: `/slack/events` carries events, interactivity and slash
commands to the Bolt app.

The door is checked in this order, each step before any work the next one costs:

1. size: the body is read up to `SLACK_BODY_LIMIT` and no further, also when it comes
   chunked without a Content-Length (413);
2. signature: Slack's v0 signature over the raw bytes, and a timestamp within five minutes
   (401), before the body is parsed at all;
3. shape: a signed body that is not UTF-8, a JSON object or a form (a slash command, or a
   JSON `payload`), or that is none of Slack's requests, is a 400.

Refusals are logged as one line, never with a traceback: they are the client's doing.
Bolt verifies the signature again, as it always does.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import time
from collections.abc import Mapping, Sequence

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response
from slack_bolt.async_app import AsyncApp
from slack_bolt.request.async_request import AsyncBoltRequest

SLACK_BODY_LIMIT = 2 * 1024 * 1024
EVENTS_PATH = "/slack/events"
READ_CHUNK = 64 * 1024
MAX_AGE = 5 * 60
"""Seconds a signed request stays valid either way (Slack's own rule against replays)."""
BODY_ERRORS = (ValueError, TypeError, AttributeError, KeyError, IndexError)
"""What building a Bolt request raises for a body that is not JSON (UnicodeDecodeError and
JSONDecodeError are ValueErrors), or JSON of another shape than an object."""
SLACK_SHAPES = ("type", "command", "ssl_check")
"""A request from Slack has one of these: events and interaction payloads a `type`, slash
commands a `command`, Slack's certificate checks `ssl_check`."""

log = logging.getLogger(__name__)


class Refused(Exception):
    """The request is refused with `status`; the message is for the log."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status


def install_slack(web_app: web.Application, app: AsyncApp, signing_secret: str) -> None:
    """Route Slack's requests on `web_app` to `app`, checked with `signing_secret`."""
    secret = signing_secret.encode()

    async def events(request: web.Request) -> web.Response:
        try:
            bolt_request = await checked_request(request, secret)
        except Refused as refused:
            log.info("refused a request to %s: %s (%d)", EVENTS_PATH, refused, refused.status)
            return web.json_response({"error": "invalid request"}, status=refused.status)  # as Bolt says it
        return await to_aiohttp_response(await app.async_dispatch(bolt_request))

    web_app.router.add_post(EVENTS_PATH, events)
    install_oauth(web_app, app)


def install_oauth(web_app: web.Application, app: AsyncApp) -> None:
    """With OAuth installs, Bolt's two pages: the install page (`/slack/install`, which
    issues the state) and Slack's redirect back (`/slack/oauth_redirect`, which checks it).
    Browsers come here, not Slack: nothing is signed, the state is the check."""
    flow = app.oauth_flow
    if flow is None:
        return

    async def install(request: web.Request) -> web.Response:
        return await to_aiohttp_response(await flow.handle_installation(_get(request)))

    async def redirected(request: web.Request) -> web.Response:
        return await to_aiohttp_response(await flow.handle_callback(_get(request)))

    web_app.router.add_get(flow.install_path, install)
    web_app.router.add_get(flow.redirect_uri_path, redirected)


def _get(request: web.Request) -> AsyncBoltRequest:
    headers: dict[str, str | Sequence[str]] = {k.lower(): v for k, v in request.headers.items()}
    return AsyncBoltRequest(body="", query=request.query_string, headers=headers)


async def checked_request(request: web.Request, secret: bytes) -> AsyncBoltRequest:
    """The request for Bolt, once its size, signature and shape are known good (`Refused`)."""
    raw = await read_at_most(request, SLACK_BODY_LIMIT)
    if not is_signed(raw, request.headers, secret, time.time()):
        raise Refused(401, "invalid or missing signature, or a stale timestamp")
    headers: dict[str, str | Sequence[str]] = {k.lower(): v for k, v in request.headers.items()}
    try:
        bolt_request = AsyncBoltRequest(body=raw.decode("utf-8"), query=request.query_string, headers=headers)
    except BODY_ERRORS as exc:  # Bolt reads fields of the body while building the request
        raise Refused(400, f"the body cannot be read ({type(exc).__name__})") from None
    body = bolt_request.body
    if not isinstance(body, dict) or not any(key in body for key in SLACK_SHAPES):
        raise Refused(400, "the body is not an event, an interaction payload or a command")
    return bolt_request


def is_signed(raw: bytes, headers: Mapping[str, str], secret: bytes, now: float) -> bool:
    """Slack's v0 signature: HMAC-SHA256 of `v0:{timestamp}:{body}` over the raw bytes (so a
    body that is not UTF-8 is judged too), with a timestamp within `MAX_AGE` of `now`.
    `headers` must ignore case, as aiohttp's do."""
    stamp = headers.get("X-Slack-Request-Timestamp", "")
    signature = headers.get("X-Slack-Signature", "")
    if not (stamp.isascii() and stamp.isdigit()) or abs(now - int(stamp)) > MAX_AGE:
        return False
    digest = hmac.new(secret, b"v0:" + stamp.encode() + b":" + raw, hashlib.sha256).hexdigest()
    return hmac.compare_digest(f"v0={digest}".encode(), signature.encode("utf-8", "replace"))


async def read_at_most(request: web.Request, limit: int) -> bytes:
    """The whole body, or `Refused(413)` as soon as it passes `limit` bytes (declared or not)."""
    if request.content_length is not None and request.content_length > limit:
        raise Refused(413, f"the body is over {limit} bytes")
    data = bytearray()
    async for chunk in request.content.iter_chunked(READ_CHUNK):
        data += chunk
        if len(data) > limit:
            raise Refused(413, f"the body is over {limit} bytes")
    return bytes(data)
