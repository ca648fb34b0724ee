"""`lore run` with Slack: Socket Mode when SLACK_APP_TOKEN is set, otherwise HTTP mode on
aiohttp at `/slack/events` (`bot.slack.http`), with the HTTP API (`bot.api`) served by the
same application. Composing the two surfaces is the entry point's job, so neither imports
the other."""

from __future__ import annotations

import asyncio
import logging
import signal

from aiohttp import web
from slack_bolt.async_app import AsyncApp

from bot.api.app import api_state, install_api
from bot.app.services import Services
from bot.app.settings import Settings
from bot.chat.runtime import open_runtime
from bot.slack.app import build_app
from bot.slack.history import channel_syncs
from bot.slack.http import SLACK_BODY_LIMIT, install_slack

log = logging.getLogger(__name__)


def http_app(app: AsyncApp, services: Services | None = None) -> web.Application:
    """An aiohttp application serving Slack's events and interactivity at /slack/events,
    and, given the services, the HTTP API beside them."""

    async def health(_request: web.Request) -> web.Response:
        return web.json_response({"ok": True})

    api = api_state(services) if services is not None else None
    web_app = web.Application(client_max_size=api.limits.upload_bytes if api else SLACK_BODY_LIMIT)
    install_slack(web_app, app)
    if api is None:
        web_app.router.add_get("/healthz", health)
    else:
        install_api(web_app, api)  # its own /healthz, /readyz, /metrics and /v1/…
    return web_app


async def run_slack(settings: Settings, *, host: str, port: int) -> None:
    async with open_runtime(settings, more_syncs=channel_syncs) as runtime:
        app, events = build_app(runtime, settings)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        try:
            if settings.slack_app_token is not None:
                await _socket_mode(app, settings, stop)
            else:
                await _http_mode(app, settings, host, port, stop, runtime.services)
        finally:
            await events.close()


async def _socket_mode(app: AsyncApp, settings: Settings, stop: asyncio.Event) -> None:
    from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler

    assert settings.slack_app_token is not None
    handler = AsyncSocketModeHandler(app, settings.slack_app_token.get_secret_value())
    await handler.connect_async()  # type: ignore[no-untyped-call]
    log.info("Lore is connected to Slack (Socket Mode)")
    await stop.wait()
    await handler.close_async()  # type: ignore[no-untyped-call]


async def _http_mode(
    app: AsyncApp, settings: Settings, host: str, port: int, stop: asyncio.Event, services: Services
) -> None:
    if settings.slack_signing_secret is None:
        raise SystemExit(
            "lore: HTTP mode needs SLACK_SIGNING_SECRET (or set SLACK_APP_TOKEN for Socket Mode)"
        )
    runner = web.AppRunner(http_app(app, services))
    await runner.setup()
    await web.TCPSite(runner, host, port).start()
    log.info("Lore listens for Slack on http://%s:%d/slack/events, and serves its HTTP API there", host, port)
    await stop.wait()
    await runner.cleanup()
