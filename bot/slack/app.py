"""The Bolt app: listeners registered on an `AsyncApp` whose Web API client may point at
any Slack-compatible server (`SLACK_API_URL`)."""

from __future__ import annotations

import logging
import re
from typing import Any

import aiohttp
from slack_bolt.async_app import AsyncApp
from slack_bolt.context.respond.async_respond import AsyncRespond
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
)
from slack_sdk.web.async_client import AsyncWebClient

from bot.app.settings import Settings
from bot.chat import messages
from bot.chat.runtime import Runtime
from bot.chat.surface import Confirmation, Surface, Turn
from bot.slack.assistant import register_assistant
from bot.slack.connect import ConnectFlow
from bot.slack.context import people_middleware
from bot.slack.events import SlackEvents
from bot.slack.feedback import FeedbackFlow
from bot.slack.helping import HelpFlows
from bot.slack.home import AppHome
from bot.slack.installs import oauth_settings, register_removals
from bot.slack.memberships import attach
from bot.slack.people import People, Who
from bot.slack.shortcut import MemoryShortcut
from bot.slack.slash import ResponseSurface, SlashCommand
from bot.slack.surface import SlackSurface
from knowledge import KnowledgeError
from storage.records import NotFound

log = logging.getLogger(__name__)
API_TIMEOUT_SECONDS = 30


def build_app(runtime: Runtime, settings: Settings) -> tuple[AsyncApp, SlackEvents]:
    """The Bolt app and the event handler behind it (closed by the caller): for the one
    workspace of SLACK_BOT_TOKEN, or for any workspace that installs Lore (OAuth,
    `bot.slack.installs`)."""
    oauth = settings.slack_oauth
    token = None if oauth or settings.slack_bot_token is None else settings.slack_bot_token.get_secret_value()
    # One connection pool for every Web API call: without it each call opens (and, against
    # slack.com, handshakes) a connection of its own, which the first signal would wait on.
    # A 429 waits out its Retry-After and a dropped connection is retried: no answer lost to either.
    session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=API_TIMEOUT_SECONDS))
    retries = [AsyncConnectionErrorRetryHandler(), AsyncRateLimitErrorRetryHandler(max_retry_count=2)]
    client = AsyncWebClient(
        token=token, base_url=settings.slack_api_url, session=session, retry_handlers=retries
    )
    secret = settings.slack_signing_secret.get_secret_value() if settings.slack_signing_secret else None
    services = attach(runtime.services)  # restrictions to channels and user groups read their members
    installs = oauth_settings(settings, services.db, services.removals) if oauth else None
    app = AsyncApp(
        client=client,
        signing_secret=secret,
        request_verification_enabled=secret is not None,
        raise_error_for_unhandled_request=False,
        ignoring_self_events_enabled=True,
        oauth_settings=installs,
        installation_store=installs.installation_store if installs else None,
        installation_store_bot_only=True if installs else None,
    )
    events = SlackEvents(runtime, client, per_workspace=oauth, api_session=session)
    app.middleware(people_middleware(events.workspaces, services.removals))
    register_listeners(app, runtime, events)
    register_removals(app, services.removals, installs.installation_store if installs else None)
    return app, events


def register_listeners(app: AsyncApp, runtime: Runtime, events: SlackEvents) -> None:
    app.event("app_mention")(events.on_event)
    app.event("message")(events.on_event)
    app.event("member_joined_channel")(events.on_member_joined)
    register_assistant(app, events.viewing)
    MemoryShortcut(runtime, events).register(app)
    HelpFlows(runtime, events.spawn, events.workspaces).register(app)
    ConnectFlow(runtime, events).register(app)

    FeedbackFlow(runtime).register(app)
    SlashCommand(runtime, events).register(app)
    AppHome(runtime, events).register(app)

    @app.action(re.compile(rf"^(confirm|cancel)_{Confirmation.DELETE_INDEX}$"))
    async def confirm(
        ack: Any,
        body: dict[str, Any],
        action: dict[str, Any],
        client: AsyncWebClient,
        respond: AsyncRespond,
        who: Who | None,
        people: People,
    ) -> None:
        await ack()
        if who is not None:
            surface = _reply_surface(client, respond, body, who)
            events.spawn(_confirmed(runtime, surface, action, who, people))

    @app.error
    async def on_error(error: Exception, body: dict[str, Any]) -> None:
        log.error("unhandled error in a Slack listener: %s", error, exc_info=error)


def _reply_surface(client: AsyncWebClient, respond: AsyncRespond, body: dict[str, Any], who: Who) -> Surface:
    """Where a button's outcome goes: privately for a button on a private (`/lore`)
    message, else in the thread of the message with the button."""
    if (body.get("container") or {}).get("is_ephemeral"):
        return ResponseSurface(
            respond, client, channel=who.channel or who.user, user_id=who.user, shareable=False
        )
    message = body.get("message", {})
    thread_ts = str(message.get("thread_ts") or message.get("ts") or "")
    return SlackSurface(
        client,
        channel=who.channel or "",
        thread_ts=thread_ts,
        message_ts=str(message.get("ts") or thread_ts),
        team_id=who.tenant,
        user_id=who.user,
    )


async def _confirmed(
    runtime: Runtime,
    surface: Surface,
    action: dict[str, Any],
    who: Who,
    people: People,
) -> None:
    """A yes/no button was pressed."""
    try:
        turn = Turn(actor=await people.actor(who), text="")
        if action["action_id"].startswith("cancel_"):
            index = await runtime.services.actions.indexes.get(turn.actor.place, int(action["value"]))
            await surface.say(messages.delete_cancelled(index.name))
            return
        await runtime.router.confirmed(turn, surface, Confirmation.DELETE_INDEX, str(action["value"]))
    except (NotFound, KnowledgeError):  # pressed again after the index was deleted
        await surface.say(messages.INDEX_GONE)
    except Exception:
        log.exception("failed to handle %s in %s", action["action_id"], who.channel)
        await surface.say(messages.internal_error())
