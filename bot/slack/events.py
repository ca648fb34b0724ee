"""Slack events to router turns: who and where, de-duplicated, with files and thread history.

Listeners return at once (Slack needs an ack within 3 s); the work runs in a background
task. The first thing Slack sees is the "working" signal (the thread's status), before any
lookup. Retries and double deliveries (an `app_mention` and a `message` for one post) are
recognised by event id and by channel + ts: in memory at once, then persisted so a restart
does not answer twice.

Besides mentions and DMs, Lore answers follow-ups in threads it answered in without a
mention (`bot.slack.followups`), and message events of a learned channel keep its history
fresh (`bot.slack.history`). Uploads (files, saved threads) are ingested under their own
concurrency (`LORE_INGEST_CONCURRENCY`), so a big one never holds an answer's place.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import replace
from typing import Any

import aiohttp
from cachetools import FIFOCache
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.app.conversations import Actor
from bot.chat import commands, messages
from bot.chat.runtime import Runtime
from bot.chat.surface import AnsweredByPeople, IncomingFile, ReadThread, ThreadRead, Turn
from bot.slack.assistant import Viewing
from bot.slack.context import installation_team
from bot.slack.files import FileHosts, SlackFiles
from bot.slack.followups import is_follow_up, is_open_post
from bot.slack.helping import offer_to_save
from bot.slack.people import Who
from bot.slack.surface import SlackSurface
from bot.slack.workspaces import Workspace, Workspaces
from knowledge import KnowledgeError
from storage.access import PartnerPolicy
from storage.records import ChannelRef

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
THREAD_PAGES = 5
RECENT_DELIVERIES = 5_000
TITLE_LIMIT = 80


class SlackEvents:
    """Turns Slack events into router turns; owns the background tasks and the caches."""

    def __init__(
        self,
        runtime: Runtime,
        client: AsyncWebClient,
        *,
        per_workspace: bool = False,
        viewing: Viewing | None = None,
        api_session: aiohttp.ClientSession | None = None,
    ) -> None:
        self._runtime = runtime
        self._services = runtime.services
        settings = runtime.services.settings
        self._files = SlackFiles(
            FileHosts.for_api(settings.slack_api_url), runtime.fetcher, settings.max_file_bytes
        )
        self._events = runtime.services.deliveries
        self._tasks: set[asyncio.Task[None]] = set()
        self._api_session = api_session
        """The Web API client's connection pool, closed with the rest."""
        self._gate = asyncio.Semaphore(settings.lore_answer_concurrency)
        """Bounds the messages worked on at once: on a small machine, fifty questions at a
        time would starve the event loop, and with it every acknowledgement."""
        self._ingest_gate = asyncio.Semaphore(settings.lore_ingest_concurrency)
        """Uploads have their own places, so a big file never holds up a question."""
        self._recent: FIFOCache[str, None] = FIFOCache(maxsize=RECENT_DELIVERIES)
        self.viewing = viewing or Viewing()
        self.workspaces = Workspaces(
            runtime.services,
            client,
            per_workspace=per_workspace,
            spawn=self.spawn,
            ingest_gate=self._ingest_gate,
        )

    # --- listener entry points (registered in bot.slack.app) ---

    async def on_event(
        self, body: dict[str, Any], event: dict[str, Any], context: Any, who: Who | None
    ) -> None:
        """`app_mention` and `message`: ack now, work in the background."""
        bot_user_id = str(context.get("bot_user_id") or "")
        space: Workspace | None = context.get("workspace")
        if space is None:
            return
        if event.get("type") == "message" and event.get("channel_type") != "im":
            self.spawn(space.freshener.on_message(installation_team(body, context), event))
        if who is None or self._ignored(event, bot_user_id):
            return
        if event.get("type") == "message" and event.get("channel_type") != "im":
            if is_follow_up(event, bot_user_id):
                self.spawn(self._follow_up(space, body, event, who, bot_user_id))
            elif is_open_post(event, bot_user_id):
                self.spawn(self._open_post(space, body, event, who, bot_user_id))
            return  # other channel messages reach Lore as app_mention
        self.spawn(self._handle(space, body, event, who, bot_user_id))

    async def on_member_joined(self, event: dict[str, Any], context: Any, who: Who | None) -> None:
        """Lore was added to a channel: give the channel its index straight away."""
        space: Workspace | None = context.get("workspace")
        if who is None or space is None or event.get("user") != context.get("bot_user_id"):
            return
        self.spawn(self._prepare_channel(space, who))

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
        if self._api_session is not None:
            await self._api_session.close()

    # --- the work ---

    def _ignored(self, event: Mapping[str, Any], bot_user_id: str | None) -> bool:
        if event.get("bot_id") or event.get("subtype") in IGNORED_SUBTYPES:
            return True
        user = event.get("user")
        return not user or user == bot_user_id

    async def _follow_up(
        self, space: Workspace, body: Mapping[str, Any], event: Mapping[str, Any], who: Who, bot_user_id: str
    ) -> None:
        """A reply in a channel thread without a mention: answered when Lore took part in
        the thread and the conversation does not require mentions."""
        channel, thread_ts = str(event["channel"]), str(event["thread_ts"])
        try:
            if not await space.threads.takes_part(channel, thread_ts):
                return
            actor = await space.people.actor(who)
        except SlackApiError as exc:
            log.info("could not tell whether Lore is in thread %s: %s", thread_ts, exc.response.get("error"))
            return
        except Exception:
            log.exception("could not look at a reply in thread %s of %s", thread_ts, channel)
            return
        if actor.conversation.experts and await self._expert_replied(space, actor, event, thread_ts):
            return  # the experts took the thread over
        if actor.conversation.require_mention:
            return
        await self._handle(space, body, event, who, bot_user_id)

    async def _expert_replied(
        self, space: Workspace, actor: Actor, event: Mapping[str, Any], thread_ts: str
    ) -> bool:
        """In a thread whose question was taken to the experts: Lore answers no follow-up
        there, and offers an expert who replies to save their reply as the answer. Whether
        the thread was taken to the experts."""
        helping = self._services.actions.helping
        escalated = await helping.escalated_in(actor, thread_ts)
        if escalated is None:
            return False
        if await helping.is_expert(actor, space.people.group_members):
            where = {"channel": str(event["channel"]), "thread_ts": thread_ts, "ts": str(event["ts"])}
            await offer_to_save(space.client, actor.user.external_id, where, escalated.question)
        return True

    async def _open_post(
        self, space: Workspace, body: Mapping[str, Any], event: Mapping[str, Any], who: Who, bot_user_id: str
    ) -> None:
        """A top-level post to nobody: in a help channel, answered in its thread when Lore is
        sure enough (`Router.unasked`); nothing is shown while Lore makes up its mind."""
        channel, ts = str(event["channel"]), str(event["ts"])
        keys = [f"event:{body.get('event_id')}" if body.get("event_id") else "", f"message:{channel}:{ts}"]
        if not self._first_here(keys):
            return
        try:
            actor = await space.people.actor(who)
            if not actor.conversation.help_channel:
                return
            if who.partner and self._services.settings.lore_slack_connect == PartnerPolicy.OFF:
                return
            if not await asyncio.to_thread(self._events.first_sighting, keys):
                return
            surface = SlackSurface(
                space.client,
                channel=channel,
                thread_ts=ts,
                message_ts=ts,
                team_id=who.tenant,
                user_id=who.user,
            )
            turn = Turn(
                actor=actor,
                text=" ".join(_addressed_text(event, bot_user_id).split()),
                thread_id=ts,
                answered_by_people=self._answered_by_people(space, channel, ts, who.user, bot_user_id),
                members_of=space.people.group_members,
            )
            async with self._gate:
                if await self._runtime.router.unasked(turn, surface):
                    space.threads.joined(channel, ts)
        except Exception:
            log.exception("failed to look at a post in %s", channel)

    def _answered_by_people(
        self, space: Workspace, channel: str, ts: str, asker: str, bot_user_id: str
    ) -> AnsweredByPeople:
        """Whether someone other than the asker (and Lore) replied to the post already."""

        async def answered() -> bool:
            try:
                found = await space.reader.replies(channel, ts, pages=1)
            except SlackApiError as exc:
                log.info("could not read the replies to %s: %s", ts, exc.response.get("error"))
                return True  # unknown: stay quiet rather than talk over people
            return any(
                m.get("ts") != ts and not m.get("bot_id") and m.get("user") not in (asker, bot_user_id)
                for m in found
            )

        return answered

    async def _handle(
        self, space: Workspace, body: Mapping[str, Any], event: Mapping[str, Any], who: Who, bot_user_id: str
    ) -> None:
        channel, ts = str(event["channel"]), str(event["ts"])
        keys = [
            f"event:{body.get('event_id')}" if body.get("event_id") else "",
            f"message:{channel}:{ts}",
        ]
        if not self._first_here(keys):
            return
        thread_ts = str(event.get("thread_ts") or ts)
        surface = SlackSurface(
            space.client,
            channel=channel,
            thread_ts=thread_ts,
            message_ts=ts,
            team_id=who.tenant,
            user_id=who.user,
        )
        if who.partner and self._services.settings.lore_slack_connect == PartnerPolicy.OFF:
            if await asyncio.to_thread(self._events.first_sighting, keys):
                await surface.tell(messages.PARTNERS_NOT_ANSWERED)
            return
        command = commands.parse(_said(event, bot_user_id))
        signal = _takes_a_while(event, command)
        if signal:
            await surface.working()  # first, even when other messages are ahead in line
        if not await asyncio.to_thread(self._events.first_sighting, keys):
            log.info("skipping a repeated delivery of %s", keys)
            if signal:
                await surface.done()
            return
        if who.is_dm and thread_ts == ts and isinstance(command, commands.Question) and command.text:
            self.spawn(self._title(space, channel, ts, command.text))
        gate = self._ingest_gate if _ingests(event, command, who) else self._gate
        async with gate:
            try:
                turn = replace(await self._turn(space, who, event, bot_user_id), thread_id=thread_ts)
                await self._dispatch(turn, event, surface)
            except Exception:
                log.exception("failed to handle a Slack message in %s", channel)
                await surface.say(messages.internal_error())
        if not who.is_dm:
            space.threads.joined(channel, thread_ts)

    def _first_here(self, keys: Sequence[str]) -> bool:
        """Whether this process sees the delivery for the first time (at once, in memory)."""
        keys = [k for k in keys if k]
        if any(k in self._recent for k in keys):
            log.info("skipping a repeated delivery of %s", keys)
            return False
        for key in keys:
            self._recent[key] = None
        return True

    async def _title(self, space: Workspace, channel: str, thread_ts: str, question: str) -> None:
        """Name a DM thread after its question (Slack's agent view lists threads by title)."""
        title = question if len(question) <= TITLE_LIMIT else question[: TITLE_LIMIT - 1] + "…"
        try:
            await space.client.assistant_threads_setTitle(
                channel_id=channel, thread_ts=thread_ts, title=title
            )
        except SlackApiError as exc:
            log.info("could not title the thread: %s", exc.response.get("error"))

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

    async def _turn(self, space: Workspace, who: Who, event: Mapping[str, Any], bot_user_id: str) -> Turn:
        actor = await space.people.actor(who)
        files = await self._files.incoming(event.get("files"), space.client)
        history: list[dict[str, str]] = []
        thread_files: list[IncomingFile] = []
        in_thread = bool(event.get("thread_ts")) and event.get("thread_ts") != event.get("ts")
        channel, ts = str(event["channel"]), str(event["ts"])
        if in_thread:
            history, parent_files = await self._thread(
                space, channel, str(event["thread_ts"]), ts, bot_user_id
            )
            thread_files = await self._files.incoming(parent_files, space.client)
        text = _addressed_text(event, bot_user_id)
        return Turn(
            actor=actor,
            text=" ".join((await self._spell_channels(space, text)).split()),
            files=files,
            history=history,
            is_dm=who.is_dm,
            thread_files=thread_files,
            thread=self._thread_reader(space, channel, str(event["thread_ts"]), ts) if in_thread else None,
            viewing=await self._viewing(space, who),
            members_of=space.people.group_members,
        )

    def _thread_reader(self, space: Workspace, channel: str, thread_ts: str, asking_ts: str) -> ReadThread:
        """Reads the thread when a command needs it (without the message that asked)."""

        async def read() -> ThreadRead:
            try:
                text, files = await space.reader.thread(channel, thread_ts, skip=[asking_ts], exact_link=True)
            except SlackApiError as exc:
                raise KnowledgeError(messages.thread_unreadable(str(exc.response.get("error")))) from exc
            return ThreadRead(text, await self._files.incoming(files, space.client))

        return read

    async def _viewing(self, space: Workspace, who: Who) -> ChannelRef | None:
        """In a DM, the channel the person is looking at (Slack's agent view), if known."""
        seen = self.viewing.seen(who.tenant, who.user) if who.is_dm else None
        if seen is None:
            return None
        return await space.people.channel(Who(tenant=who.tenant, user=who.user, channel=seen))

    async def _spell_channels(self, space: Workspace, text: str) -> str:
        """Channel links without a name (`<#C123>`) as `#name`, so commands can name them."""
        for channel_id in dict.fromkeys(UNNAMED_CHANNEL.findall(text)):
            text = text.replace(f"<#{channel_id}>", f"#{await space.people.channel_name(channel_id)}")
        return text

    async def _prepare_channel(self, space: Workspace, who: Who) -> None:
        try:
            channel = await space.people.channel(who)
            await self._services.catalog.channel_index(channel)
        except Exception:
            log.exception("could not prepare the index of channel %s", who.channel)

    async def _thread(
        self, space: Workspace, channel: str, thread_ts: str, current_ts: str, bot_user_id: str
    ) -> tuple[list[dict[str, str]], list[Mapping[str, Any]]]:
        """The thread's latest messages as chat history (if Lore took part) and the parent's
        files. Only Lore's own messages are the assistant's; other bots speak as users."""
        try:
            found = await space.reader.replies(channel, thread_ts, pages=THREAD_PAGES)
        except SlackApiError as exc:
            log.warning("conversations.replies failed: %s", exc.response.get("error"))
            return [], []
        parent_files = list(found[0].get("files") or []) if found else []
        if not any(m.get("user") == bot_user_id for m in found):
            return [], parent_files
        space.threads.joined(channel, thread_ts)
        history = []
        for message in found:
            if message.get("ts") == current_ts:
                continue
            role = "assistant" if message.get("user") == bot_user_id else "user"
            text = " ".join(MENTION.sub("", str(message.get("text") or "")).split())
            if text:
                history.append({"role": role, "content": text})
        return history[-HISTORY_LIMIT:], parent_files


def _addressed_text(event: Mapping[str, Any], bot_user_id: str) -> str:
    """The message's text without the mention of Lore (other mentions stay)."""
    return MENTION.sub(
        lambda m: "" if m.group(1) == bot_user_id else m.group(0), str(event.get("text") or "")
    )


def _said(event: Mapping[str, Any], bot_user_id: str) -> str:
    return " ".join(_addressed_text(event, bot_user_id).split())


def _takes_a_while(event: Mapping[str, Any], command: commands.Command) -> bool:
    """Whether the message asks for work worth a "working" signal (a question, files or
    links to add, a thread to save) rather than a command answered at once."""
    if event.get("files"):
        return True
    if isinstance(command, commands.Question):
        return bool(command.text.strip())
    return isinstance(command, commands.AddFiles | commands.AddUrls | commands.SaveThread)


def _ingests(event: Mapping[str, Any], command: commands.Command, who: Who) -> bool:
    """Whether the message is an upload (files to add, a thread to save): it waits for an
    upload's place, not an answer's."""
    if isinstance(command, commands.AddFiles | commands.SaveThread):
        return True
    return who.is_dm and bool(event.get("files"))
