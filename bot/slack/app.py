"""The Bolt app: listeners registered on an `AsyncApp` whose Web API client may point at
any Slack-compatible server (`SLACK_API_URL`)."""

from __future__ import annotations

import asyncio
import logging
import re
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
)
from slack_sdk.web.async_client import AsyncWebClient

from bot.app.conversations import enter_channel, enter_dm, place_of
from bot.app.settings import Settings
from bot.chat import messages
from bot.chat.runtime import Runtime
from bot.chat.surface import Turn
from bot.slack.connect import ConnectFlow
from bot.slack.events import SlackEvents
from bot.slack.surface import SlackSurface
from storage.records import NotFound

log = logging.getLogger(__name__)


def build_app(runtime: Runtime, settings: Settings) -> tuple[AsyncApp, SlackEvents]:
    """The Bolt app and the event handler behind it (closed by the caller)."""
    assert settings.slack_bot_token is not None
    token = settings.slack_bot_token.get_secret_value()
    # A 429 waits out its Retry-After and a dropped connection is retried: no answer lost to either
    retries = [AsyncConnectionErrorRetryHandler(), AsyncRateLimitErrorRetryHandler(max_retry_count=2)]
    client = AsyncWebClient(token=token, base_url=settings.slack_api_url, retry_handlers=retries)
    secret = settings.slack_signing_secret.get_secret_value() if settings.slack_signing_secret else None
    app = AsyncApp(
        client=client,
        signing_secret=secret,
        request_verification_enabled=secret is not None,
        raise_error_for_unhandled_request=False,
        ignoring_self_events_enabled=True,
    )
    events = SlackEvents(runtime, client, token)
    register_listeners(app, runtime, events)
    return app, events


def register_listeners(app: AsyncApp, runtime: Runtime, events: SlackEvents) -> None:
    app.event("app_mention")(events.on_event)
    app.event("message")(events.on_event)
    app.event("member_joined_channel")(events.on_member_joined)
    ConnectFlow(runtime, events).register(app)

    @app.action(re.compile(r"^feedback_(helpful|not_helpful)$"))
    async def feedback(
        ack: Any, body: dict[str, Any], action: dict[str, Any], client: AsyncWebClient
    ) -> None:
        await ack()
        helpful = action["action_id"] == "feedback_helpful"
        team = str(body.get("team", {}).get("id") or body.get("user", {}).get("team_id") or "")
        user = await asyncio.to_thread(runtime.services.directory.ensure_user, team, body["user"]["id"])
        place = place_of(runtime.services, user)
        try:
            answer_id = int(action["value"])
        except ValueError:
            return
        if not await runtime.services.actions.answers.feedback(place, answer_id, helpful):
            return
        channel = body.get("channel", {}).get("id")
        if channel:
            await client.chat_postEphemeral(
                channel=channel, user=body["user"]["id"], text=messages.feedback_thanks(helpful)
            )

    @app.action(re.compile(r"^(confirm|cancel)_delete_index$"))
    async def confirm(ack: Any, body: dict[str, Any], action: dict[str, Any], client: AsyncWebClient) -> None:
        await ack()
        events.spawn(_confirmed(runtime, client, body, action))

    @app.error
    async def on_error(error: Exception, body: dict[str, Any]) -> None:
        log.error("unhandled error in a Slack listener: %s", error, exc_info=error)


async def _confirmed(
    runtime: Runtime, client: AsyncWebClient, body: dict[str, Any], action: dict[str, Any]
) -> None:
    """A yes/no button was pressed; the reply goes to the question's thread."""
    channel = str(body.get("channel", {}).get("id") or "")
    message = body.get("message", {})
    thread_ts = str(message.get("thread_ts") or message.get("ts") or "")
    surface = SlackSurface(
        client,
        channel=channel,
        thread_ts=thread_ts,
        message_ts=thread_ts,
        team_id=str(body.get("team", {}).get("id") or ""),
        user_id=body["user"]["id"],
    )
    try:
        await _confirm(runtime, client, surface, body, action)
    except NotFound:  # pressed again after the index was deleted
        await surface.say(messages.INDEX_GONE)
    except Exception:
        log.exception("failed to handle %s in %s", action["action_id"], channel)
        await surface.say(messages.internal_error())


async def _confirm(
    runtime: Runtime,
    client: AsyncWebClient,
    surface: SlackSurface,
    body: dict[str, Any],
    action: dict[str, Any],
) -> None:
    team = str(body.get("team", {}).get("id") or "")
    channel = str(body.get("channel", {}).get("id") or "")
    services = runtime.services
    user = await asyncio.to_thread(services.directory.ensure_user, team, body["user"]["id"])
    if channel.startswith("D"):
        actor = await enter_dm(services, user)
    else:
        info = (await client.conversations_info(channel=channel)).get("channel") or {}
        ref = await asyncio.to_thread(
            services.directory.ensure_channel,
            team,
            channel,
            str(info.get("name") or channel),
            is_private=bool(info.get("is_private")),
        )
        actor = await enter_channel(services, user, ref)
    turn = Turn(actor=actor, text="")
    if action["action_id"].startswith("cancel_"):
        index = await asyncio.to_thread(services.indexes.get, int(action["value"]))
        await surface.say(messages.delete_cancelled(index.name))
        return
    await runtime.router.confirmed(turn, surface, "delete_index", str(action["value"]))
