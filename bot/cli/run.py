"""`lore run` with Slack: Socket Mode when SLACK_APP_TOKEN is set, otherwise HTTP mode on
aiohttp at `/slack/events` (`bot.slack.http`), with the HTTP API (`bot.api`) and the admin
console (`bot.web`, at `/console`) served by the same application. In Socket Mode, which
needs no public URL, the operations routes (`/healthz`, `/readyz`, `/metrics`) and the
console are served on PORT when it is set. Either way Slack's
answers are counted in `/metrics` beside the API's. Composing the surfaces is the entry
point's job, so neither imports the other."""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from aiohttp import web
from slack_bolt.async_app import AsyncApp

from bot.api import ops
from bot.api.app import api_state, install_api
from bot.api.metrics import Metrics
from bot.api.state import ApiState
from bot.app.audit import Origin, Surface, attribute_to
from bot.app.services import Services
from bot.app.settings import Settings
from bot.app.signin import IdentityProvider
from bot.chat.runtime import Runtime, open_runtime
from bot.cli.mcp import mount_mcp
from bot.slack.app import build_app
from bot.slack.history import channel_syncs
from bot.slack.http import SLACK_BODY_LIMIT, install_slack
from bot.slack.installs import oauth_problem
from bot.web import install_console

log = logging.getLogger(__name__)
HTTP_PORT = 3000
"""HTTP mode's port when neither --port nor PORT says."""
SLACK = "slack"


def http_app(
    app: AsyncApp,
    signing_secret: str,
    services: Services | None = None,
    *,
    api: ApiState | None = None,
    runtime: Runtime | None = None,
    signin: IdentityProvider | None = None,
) -> web.Application:
    """An aiohttp application serving Slack's events and interactivity at /slack/events
    (checked with `signing_secret`), and, given the services (or the API's state), the HTTP
    API and the console beside them (Sign in with Slack through `signin`), and given the
    runtime, MCP at /mcp. Slack's route reads at most `SLACK_BODY_LIMIT` whatever
    `client_max_size` allows."""

    async def health(_request: web.Request) -> web.Response:
        return web.json_response({"ok": True})

    if api is None and services is not None:
        api = api_state(services)
    web_app = web.Application(client_max_size=api.limits.upload_bytes if api else SLACK_BODY_LIMIT)
    install_slack(web_app, app, signing_secret)
    if api is None:
        web_app.router.add_get("/healthz", health)
    else:
        install_api(web_app, api)  # its own /healthz, /readyz, /metrics and /v1/…
        install_console(web_app, api.services, signin)
        if runtime is not None:
            mount_mcp(web_app, runtime, api)
    return web_app


def ops_app(api: ApiState, signin: IdentityProvider | None = None) -> web.Application:
    """`/healthz`, `/readyz` and `/metrics` (what probes and Prometheus ask for), and the
    console."""
    web_app = web.Application(client_max_size=api.limits.upload_bytes)
    install_api(web_app, api, ops.ROUTES)
    install_console(web_app, api.services, signin)
    return web_app


def slack_signin(settings: Settings, services: Services) -> IdentityProvider | None:
    """Sign in with Slack for the console, when the app's client credentials are set (OAuth
    installs); the bot token of the person's workspace says who they are there."""
    if not settings.slack_oauth:
        return None
    from bot.slack.installs import InstalledTokens
    from bot.slack.signin import SlackSignIn

    tokens = InstalledTokens(settings, services.db, services.removals)
    return SlackSignIn(settings, tokens.client)


def count_answers(runtime: Runtime, metrics: Metrics) -> None:
    """Count each answer Slack gets in `lore_answers_total{endpoint="slack"}`."""
    runtime.router.on_answer(
        lambda answer: metrics.answer(
            SLACK, answer.mode.value, answer.fallback.value if answer.fallback else None
        )
    )


async def run_slack(settings: Settings, *, host: str, port: int | None) -> None:
    problem = oauth_problem(settings)
    if problem is not None:
        raise SystemExit(f"lore: {problem}")
    attribute_to(Origin(Surface.LORE))  # a server: each request says where it comes from
    async with open_runtime(settings, more_syncs=channel_syncs, serving=True) as runtime:
        app, events = build_app(runtime, settings)
        api = api_state(runtime.services)
        signin = slack_signin(settings, runtime.services)
        count_answers(runtime, api.metrics)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        try:
            if settings.slack_app_token is not None:
                async with serving(ops_app(api, signin), host, port):
                    await _socket_mode(app, settings, stop)
            else:
                if settings.slack_signing_secret is None:
                    raise SystemExit(
                        "lore: HTTP mode needs SLACK_SIGNING_SECRET (or set SLACK_APP_TOKEN for Socket Mode)"
                    )
                secret = settings.slack_signing_secret.get_secret_value()
                served = http_app(app, secret, api=api, runtime=runtime, signin=signin)
                async with serving(served, host, port or HTTP_PORT):
                    log.info(
                        "Lore listens for Slack at /slack/events, and serves its HTTP API, MCP and console there"
                    )
                    if settings.slack_oauth:
                        log.info("Lore installs into any workspace from /slack/install")
                    await stop.wait()
        finally:
            await events.close()


@asynccontextmanager
async def serving(web_app: web.Application, host: str, port: int | None) -> AsyncIterator[None]:
    """Serve `web_app` on host:port while the block runs (nothing when `port` is None)."""
    if port is None:
        yield
        return
    runner = web.AppRunner(web_app)
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
        log.info("serving http://%s:%d", host, port)
        yield
    finally:
        await runner.cleanup()


async def _socket_mode(app: AsyncApp, settings: Settings, stop: asyncio.Event) -> None:
    from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler

    assert settings.slack_app_token is not None
    handler = AsyncSocketModeHandler(app, settings.slack_app_token.get_secret_value())
    await handler.connect_async()  # type: ignore[no-untyped-call]
    log.info("Lore is connected to Slack (Socket Mode)")
    await stop.wait()
    await handler.close_async()  # type: ignore[no-untyped-call]
