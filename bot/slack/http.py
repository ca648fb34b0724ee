"""Slack's request URL on aiohttp: `/slack/events` carries events, interactivity and slash
commands to the Bolt app (signatures verified, stale timestamps refused by Bolt)."""

from __future__ import annotations

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
from slack_bolt.async_app import AsyncApp

SLACK_BODY_LIMIT = 2 * 1024 * 1024
EVENTS_PATH = "/slack/events"


def install_slack(web_app: web.Application, app: AsyncApp) -> None:
    """Route Slack's requests on `web_app` to `app`."""

    async def events(request: web.Request) -> web.Response:
        if (request.content_length or 0) > SLACK_BODY_LIMIT:
            return web.Response(status=413)
        return await to_aiohttp_response(await app.async_dispatch(await to_bolt_request(request)))

    web_app.router.add_post(EVENTS_PATH, events)
