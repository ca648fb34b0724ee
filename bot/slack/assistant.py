"""Slack's agent surfaces (Agents & AI apps): suggested prompts when someone opens Lore's
Messages tab or starts an assistant thread, and the channel they are looking at while they
talk to Lore, which a DM question then searches too (when they may search it from there).

Event shapes, as Slack sends them (bolt-python's assistant docs):
- `app_home_opened` with `tab: "messages"` and the DM's `channel`;
- `assistant_thread_started` / `assistant_thread_context_changed` with `assistant_thread`
  (`user_id`, `channel_id`, `thread_ts`, `context.channel_id`);
- `app_context_changed` (agent view) with `context.entities`, the most relevant first, each
  `{"type": "slack#/types/channel_id", "value": "C…"}`; `{}` when nothing is in view.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.async_context import AsyncBoltContext
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.chat import messages
from bot.slack.context import installation_team

log = logging.getLogger(__name__)
VIEW_SECONDS = 3600.0
"""A channel someone looked at counts as in view this long after Slack last said so."""
CHANNEL_ENTITY = "slack#/types/channel_id"


class Viewing:
    """Which channel each person is looking at, as Slack's context events say."""

    def __init__(self) -> None:
        self._seen: dict[tuple[str, str], tuple[str, float]] = {}

    def see(self, tenant: str, user: str, channel: str | None) -> None:
        if channel and not channel.startswith("D"):
            self._seen[(tenant, user)] = (channel, time.monotonic())
        else:
            self._seen.pop((tenant, user), None)

    def seen(self, tenant: str, user: str) -> str | None:
        found = self._seen.get((tenant, user))
        if found is None or time.monotonic() - found[1] > VIEW_SECONDS:
            return None
        return found[0]


def prompts() -> list[dict[str, str]]:
    return [{"title": title, "message": message} for title, message in messages.SUGGESTED_PROMPTS]


async def suggest(client: AsyncWebClient, channel: str, thread_ts: str | None = None) -> None:
    try:
        await client.assistant_threads_setSuggestedPrompts(
            channel_id=channel, thread_ts=thread_ts, title=messages.PROMPTS_TITLE, prompts=prompts()
        )
    except SlackApiError as exc:  # not an agent-enabled app, or an old workspace: nothing to show
        log.info("could not suggest prompts: %s", exc.response.get("error"))


def register_assistant(app: AsyncApp, viewing: Viewing) -> None:
    """Listeners for the Messages tab, assistant threads and the agent view's context."""

    async def messages_tab_opened(event: dict[str, Any]) -> bool:
        return event.get("tab") == "messages"

    @app.event("app_home_opened", matchers=[messages_tab_opened])
    async def messages_tab(event: dict[str, Any], client: AsyncWebClient) -> None:
        if event.get("channel"):
            await suggest(client, str(event["channel"]))

    @app.event("assistant_thread_started")
    async def thread_started(
        body: dict[str, Any], event: dict[str, Any], context: AsyncBoltContext, client: AsyncWebClient
    ) -> None:
        thread = event.get("assistant_thread") or {}
        _remember(viewing, body, context, thread)
        if thread.get("channel_id") and thread.get("thread_ts"):
            await suggest(client, str(thread["channel_id"]), str(thread["thread_ts"]))

    @app.event("assistant_thread_context_changed")
    async def thread_context(body: dict[str, Any], event: dict[str, Any], context: AsyncBoltContext) -> None:
        _remember(viewing, body, context, event.get("assistant_thread") or {})

    @app.event("app_context_changed")
    async def app_context(body: dict[str, Any], event: dict[str, Any], context: AsyncBoltContext) -> None:
        user = event.get("user") or context.user_id
        if user:
            viewing.see(installation_team(body, context), str(user), in_view(event.get("context") or {}))


def in_view(context: Mapping[str, Any]) -> str | None:
    """The most relevant channel of an `app_context_changed` context, if any."""
    for entity in context.get("entities") or []:
        if entity.get("type") == CHANNEL_ENTITY and entity.get("value"):
            return str(entity["value"])
        if isinstance(entity.get("value"), Mapping) and entity["value"].get("channel_id"):
            return str(entity["value"]["channel_id"])  # a message in view: its channel
    return None


def _remember(
    viewing: Viewing, body: Mapping[str, Any], context: AsyncBoltContext, thread: Mapping[str, Any]
) -> None:
    user = thread.get("user_id") or context.user_id
    if user:
        channel = (thread.get("context") or {}).get("channel_id")
        viewing.see(installation_team(body, context), str(user), str(channel) if channel else None)
