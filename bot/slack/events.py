"""Slack events to router turns: who and where, de-duplicated, with files and thread history.

Listeners return at once (Slack needs an ack within 3 s); the work runs in a background
task. Retries and double deliveries (an `app_mention` and a `message` for one post) are
recognised by event id and by channel + ts, persisted so a restart does not answer twice.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Coroutine, Mapping
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.chat import commands, messages
from bot.chat.runtime import Runtime
from bot.chat.surface import IncomingFile, Turn
from bot.slack.files import FileHosts, SlackFiles
from bot.slack.people import People, Who
from bot.slack.surface import SlackSurface

log = logging.getLogger(__name__)
IGNORED_SUBTYPES = {
    "bot_message",
    "message_changed",
    "message_deleted",
    "channel_join",
    "channel_leave",
    "channel_topic",
    "channel_purpose",
    "channel_name",
    "thread_broadcast",
    "pinned_item",
    "ekm_access_denied",
}
MENTION = re.compile(r"<@([A-Z0-9]+)(?:\|[^>]*)?>")
UNNAMED_CHANNEL = re.compile(r"<#([A-Z0-9]+)>")
HISTORY_LIMIT = 30
THREAD_PAGE_SIZE = 200
THREAD_PAGES = 5


class SlackEvents:
    """Turns Slack events into router turns; owns the background tasks and the caches."""

    def __init__(self, runtime: Runtime, client: AsyncWebClient, token: str, people: People) -> None:
        self._runtime = runtime
        self._people = people
        self._services = runtime.services
        self._client = client
        settings = runtime.services.settings
        self._files = SlackFiles(
            token, FileHosts.for_api(settings.slack_api_url), runtime.fetcher, settings.max_file_bytes, client
        )
        self._events = runtime.services.deliveries
        self._tasks: set[asyncio.Task[None]] = set()
        self._gate = asyncio.Semaphore(runtime.services.settings.lore_answer_concurrency)
        """Bounds the messages worked on at once: on a small machine, fifty questions at a
        time would starve the event loop, and with it every acknowledgement."""

    # --- listener entry points (registered in bot.slack.app) ---

    async def on_event(
        self, body: dict[str, Any], event: dict[str, Any], context: Any, who: Who | None
    ) -> None:
        """`app_mention` and `message`: ack now, work in the background."""
        if who is None or self._ignored(event, context.get("bot_user_id")):
            return
        if event.get("type") == "message" and event.get("channel_type") != "im":
            return  # channel messages reach Lore as app_mention
        self.spawn(self._handle(body, event, who, str(context.get("bot_user_id") or "")))

    async def on_member_joined(self, event: dict[str, Any], context: Any, who: Who | None) -> None:
        """Lore was added to a channel: give the channel its index straight away."""
        if who is None or event.get("user") != context.get("bot_user_id"):
            return
        self.spawn(self._prepare_channel(who))

    def spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def drain(self) -> None:
        """Wait for background work (at shutdown, and in tests)."""
        while self._tasks:
            await asyncio.wait(set(self._tasks))

    async def close(self) -> None:
        await self.drain()
        await self._files.close()

    # --- the work ---

    def _ignored(self, event: Mapping[str, Any], bot_user_id: str | None) -> bool:
        if event.get("bot_id") or event.get("subtype") in IGNORED_SUBTYPES:
            return True
        user = event.get("user")
        return not user or user == bot_user_id

    async def _handle(
        self, body: Mapping[str, Any], event: Mapping[str, Any], who: Who, bot_user_id: str
    ) -> None:
        channel, ts = str(event["channel"]), str(event["ts"])
        keys = [
            f"event:{body.get('event_id')}" if body.get("event_id") else "",
            f"message:{channel}:{ts}",
        ]
        if not await asyncio.to_thread(self._events.first_sighting, keys):
            log.info("skipping a repeated delivery of %s", keys)
            return
        surface = SlackSurface(
            self._client,
            channel=channel,
            thread_ts=str(event.get("thread_ts") or ts),
            message_ts=ts,
            team_id=who.tenant,
            user_id=who.user,
        )
        if _takes_a_while(event, bot_user_id):
            await surface.working()  # at once, even when other messages are ahead in line
        async with self._gate:
            try:
                turn = await self._turn(who, event, bot_user_id)
                await self._dispatch(turn, event, surface)
            except Exception:
                log.exception("failed to handle a Slack message in %s", channel)
                await surface.say(messages.internal_error())

    async def _dispatch(self, turn: Turn, event: Mapping[str, Any], surface: SlackSurface) -> None:
        router = self._runtime.router
        text_command = turn.command
        if turn.is_dm and turn.files and isinstance(text_command, (commands.Question, commands.AddFiles)):
            await surface.working()
            names = await router.add_files(turn, surface, turn.files)
            if names:
                await surface.say(messages.dm_files_added(names))
            if isinstance(text_command, commands.AddFiles) or not text_command.text:
                return
        await router.handle(turn, surface)

    async def _turn(self, who: Who, event: Mapping[str, Any], bot_user_id: str) -> Turn:
        actor = await self._people.actor(who)
        files = await self._files.incoming(event.get("files"))
        history: list[dict[str, str]] = []
        thread_files: list[IncomingFile] = []
        if event.get("thread_ts") and event.get("thread_ts") != event.get("ts"):
            history, parent_files = await self._thread(
                str(event["channel"]), str(event["thread_ts"]), str(event["ts"]), bot_user_id
            )
            thread_files = await self._files.incoming(parent_files)
        text = _addressed_text(event, bot_user_id)
        return Turn(
            actor=actor,
            text=" ".join((await self._spell_channels(text)).split()),
            files=files,
            history=history,
            is_dm=who.is_dm,
            thread_files=thread_files,
        )

    async def _spell_channels(self, text: str) -> str:
        """Channel links without a name (`<#C123>`) as `#name`, so commands can name them."""
        for channel_id in dict.fromkeys(UNNAMED_CHANNEL.findall(text)):
            text = text.replace(f"<#{channel_id}>", f"#{await self._people.channel_name(channel_id)}")
        return text

    async def _prepare_channel(self, who: Who) -> None:
        try:
            channel = await self._people.channel(who)
            await self._services.catalog.channel_index(channel)
        except Exception:
            log.exception("could not prepare the index of channel %s", who.channel)

    async def _thread(
        self, channel: str, thread_ts: str, current_ts: str, bot_user_id: str
    ) -> tuple[list[dict[str, str]], list[Mapping[str, Any]]]:
        """The thread's latest messages as chat history (if Lore took part) and the parent's
        files. Only Lore's own messages are the assistant's; other bots speak as users."""
        try:
            found = await self._replies(channel, thread_ts)
        except SlackApiError as exc:
            log.warning("conversations.replies failed: %s", exc.response.get("error"))
            return [], []
        parent_files = list(found[0].get("files") or []) if found else []
        if not any(m.get("user") == bot_user_id for m in found):
            return [], parent_files
        history = []
        for message in found:
            if message.get("ts") == current_ts:
                continue
            role = "assistant" if message.get("user") == bot_user_id else "user"
            text = " ".join(MENTION.sub("", str(message.get("text") or "")).split())
            if text:
                history.append({"role": role, "content": text})
        return history[-HISTORY_LIMIT:], parent_files

    async def _replies(self, channel: str, thread_ts: str) -> list[Mapping[str, Any]]:
        """The thread, oldest first. Slack pages a thread from its start, so reaching its
        latest messages means reading every page (up to `THREAD_PAGES`)."""
        found: list[Mapping[str, Any]] = []
        cursor: str | None = None
        for _ in range(THREAD_PAGES):
            page = await self._client.conversations_replies(
                channel=channel, ts=thread_ts, limit=THREAD_PAGE_SIZE, cursor=cursor
            )
            found.extend(page.get("messages") or [])
            cursor = (page.get("response_metadata") or {}).get("next_cursor") or None
            if cursor is None:
                break
        return found


def _addressed_text(event: Mapping[str, Any], bot_user_id: str) -> str:
    """The message's text without the mention of Lore (other mentions stay)."""
    return MENTION.sub(
        lambda m: "" if m.group(1) == bot_user_id else m.group(0), str(event.get("text") or "")
    )


def _takes_a_while(event: Mapping[str, Any], bot_user_id: str) -> bool:
    """Whether the message asks for work worth a "working" signal (a question, files or
    links to add) rather than a command answered at once."""
    if event.get("files"):
        return True
    command = commands.parse(" ".join(_addressed_text(event, bot_user_id).split()))
    if isinstance(command, commands.Question):
        return bool(command.text.strip())
    return isinstance(command, commands.AddFiles | commands.AddUrls)
