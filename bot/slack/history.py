"""A learned channel's history: the indexing job that reads it (`ChannelSync`, the
`SourceSync` of source kind `slack-channel`) and the freshener that keeps it in step with
new messages, edits and deletions as their events arrive (`Freshener`).

Each thread is one document, and so is each UTC hour of the channel's top-level messages
(an hour, not a day, so that a new message in a busy channel costs re-reading an hour, not
a day); both are keyed by where they are (`bot.slack.reader`), so reading one again
replaces it and an unchanged one costs no embedding. The first sync, and any refresh
someone asks for, lists the whole history (newest first, paged) and removes documents of
threads and hours that are gone; a scheduled sync lists only the day before the newest
message it read and re-reads the hours and threads that changed. The documents go only into the channel's
own index (`ThreadActions.check_learnable`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from datetime import datetime
from typing import Any

from slack_sdk.errors import SlackApiError

from bot.app.actions.threads import SLACK_CHANNEL, Learned, ThreadActions, ThreadText
from bot.app.services import Services
from bot.chat.commands import is_command
from bot.slack.reader import ChannelReader, Message, build_client, hour_key, hour_of, thread_key
from knowledge import Count, IngestError, JobContext, JobCounters, KnowledgeError, Outcome, SourceSync
from storage.records import IndexRef, SourceConfigRef

log = logging.getLogger(__name__)
OVERLAP_SECONDS = 86_400.0
"""A scheduled sync reaches back this far before the newest message the last one read."""
GONE = ("thread_not_found", "message_not_found", "channel_not_found")


def channel_syncs(services: Services) -> dict[str, SourceSync]:
    """The sync of learned channels, for a job worker (none without Slack): with the bot
    token, or with each workspace's installation's."""
    settings = services.settings
    if settings.slack_oauth:
        from bot.slack.installs import InstalledTokens

        tokens = InstalledTokens(settings, services.db, services.removals)

        async def installed(tenant: str) -> ChannelReader:
            return ChannelReader(await tokens.client(tenant), is_command)

        return {SLACK_CHANNEL: ChannelSync(installed, services.actions.threads)}
    if settings.slack_bot_token is None:
        return {}
    reader = ChannelReader(
        build_client(settings.slack_bot_token.get_secret_value(), settings.slack_api_url), is_command
    )

    async def configured(_tenant: str) -> ChannelReader:
        return reader

    return {SLACK_CHANNEL: ChannelSync(configured, services.actions.threads)}


class ChannelSync:
    """Runs a learned channel's indexing job, reading it with its workspace's token."""

    def __init__(self, readers: Callable[[str], Awaitable[ChannelReader]], threads: ThreadActions) -> None:
        self._readers = readers
        self._threads = threads

    async def sync(self, context: JobContext, source: SourceConfigRef, index: IndexRef) -> None:
        try:
            reader = await self._readers(index.tenant_id)
        except LookupError as exc:
            raise KnowledgeError(str(exc)) from exc
        channel = source.folders[0]
        await self._threads.check_learnable(index, channel)
        learned = Learned(index, source)
        newest = source.options.get("newest")
        full = newest is None or context.job.trigger == "refresh"
        oldest = None if full else f"{float(str(newest)) - OVERLAP_SECONDS:.6f}"
        done = await context.done_before()
        what = "the whole history" if full else "what changed since the last sync"
        await context.say(f"running on {context.worker}: reading {source.name}, {what}")
        hours: dict[datetime, list[Message]] = {}
        threads: list[str] = []
        latest = float(str(newest)) if newest else 0.0
        async for message in reader.history(channel, oldest=oldest):
            hours.setdefault(hour_of(str(message["ts"])), []).append(message)
            if message.get("reply_count") and (full or float(message.get("latest_reply") or 0) > latest):
                threads.append(str(message["ts"]))
            latest = max(latest, float(message["ts"]), float(message.get("latest_reply") or 0))
            context.counters["pages_found"] = len(hours) + len(threads)
            if context.stopped():
                return
        kept: set[str] = set()
        for hour, found in sorted(hours.items()):
            key = hour_key(channel, hour)
            kept.add(key)
            if key not in done:  # a listing from `oldest` may hold only part of its first hour
                text = await (reader.hour_text(channel, hour, found) if full else reader.hour(channel, hour))
                await self._keep(context, learned, key, text)
            if context.stopped():
                return
        for thread_ts in threads:
            key = thread_key(channel, thread_ts)
            kept.add(key)
            if key not in done:
                await self._keep(context, learned, key, await _thread(reader, channel, thread_ts))
            if context.stopped():
                return
        if full:
            removed = await self._threads.drop(learned, sorted(await self._threads.kept(learned) - kept))
            context.count(Count.DOCUMENTS_REMOVED, removed)
        await self._threads.synced(learned, f"{latest:.6f}" if latest else None)
        await context.say(_summary(context.counters))

    async def _keep(self, context: JobContext, learned: Learned, key: str, text: ThreadText | None) -> None:
        if text is None or not text.messages:  # gone, or nothing but Lore and commands to it
            context.count(Count.PAGES_GONE)
            context.count(Count.DOCUMENTS_REMOVED, await self._threads.drop(learned, [key]))
            await context.handled(key, "gone")
            return
        try:
            result = await self._threads.keep(learned, text)
        except IngestError as exc:
            context.skip(exc.reason)
            await context.say(f"skipped: {text.title}: {exc.reason}", "warning")
            await context.handled(key, "skipped")
            return
        unchanged = result.outcome == Outcome.UNCHANGED
        context.count(Count.PAGES_UNCHANGED if unchanged else Count.PAGES_FETCHED)
        context.count(Count.document(result.outcome.value))
        context.count(Count.CHUNKS, 0 if unchanged else result.chunks)
        await context.handled(key, result.outcome.value)


def _summary(counters: Mapping[str, int]) -> str:
    c = JobCounters(counters)
    return (
        f"done: documents {c[Count.DOCUMENTS_ADDED]} added, {c[Count.DOCUMENTS_UPDATED]} updated, "
        f"{c[Count.DOCUMENTS_UNCHANGED]} unchanged, {c[Count.DOCUMENTS_REMOVED]} removed; {c[Count.CHUNKS]} chunks"
    )


Spawn = Callable[[Coroutine[Any, Any, None]], None]


async def _thread(reader: ChannelReader, channel: str, thread_ts: str) -> ThreadText | None:
    try:
        text, _ = await reader.thread(channel, thread_ts)
    except SlackApiError as exc:
        if exc.response.get("error") in GONE:
            return None
        raise
    return text if len(text.messages) > 1 else None  # a lone message lives in its hour


class Freshener:
    """Re-reads the thread or hour a message event touched in a learned channel, a moment
    later (`delay`), so a burst of messages or a series of edits is read once."""

    def __init__(
        self,
        reader: ChannelReader,
        threads: ThreadActions,
        spawn: Spawn,
        gate: asyncio.Semaphore,
        *,
        delay: float,
    ) -> None:
        self._reader = reader
        self._threads = threads
        self._spawn = spawn
        self._gate = gate
        self._delay = delay
        self._pending: set[str] = set()

    async def on_message(self, tenant: str, event: Mapping[str, Any]) -> None:
        """A `message` event (new, changed or deleted) in any channel."""
        channel = str(event.get("channel") or "")
        if not channel or event.get("channel_type") == "im":
            return
        learned = await self._threads.learned(tenant, channel)
        if learned is None:
            return
        for thread_ts, hour in touched(event):
            if thread_ts is not None:
                self._later(thread_key(channel, thread_ts), self._thread(learned, thread_ts))
            if hour is not None:
                self._later(hour_key(channel, hour), self._hour(learned, hour))

    def _later(self, key: str, work: Coroutine[Any, Any, None]) -> None:
        if key in self._pending:
            work.close()  # already due to be read
            return
        self._pending.add(key)
        self._spawn(self._after_delay(key, work))

    async def _after_delay(self, key: str, work: Coroutine[Any, Any, None]) -> None:
        try:
            await asyncio.sleep(self._delay)
            self._pending.discard(key)
            async with self._gate:
                await work
        except Exception:
            log.exception("could not refresh %s of a learned channel", key)
        finally:
            self._pending.discard(key)
            work.close()

    async def _thread(self, learned: Learned, thread_ts: str) -> None:
        key = thread_key(learned.channel, thread_ts)
        try:
            text, _ = await self._reader.thread(learned.channel, thread_ts)
        except SlackApiError as exc:
            if exc.response.get("error") not in GONE:
                raise
            text = None
        await self._store(learned, key, text, thread=True)

    async def _hour(self, learned: Learned, hour: datetime) -> None:
        text = await self._reader.hour(learned.channel, hour)
        await self._store(learned, hour_key(learned.channel, hour), text)

    async def _store(
        self, learned: Learned, key: str, text: ThreadText | None, *, thread: bool = False
    ) -> None:
        """Keep the text, or drop its document when nothing is left (a thread needs replies:
        a lone message lives in its hour)."""
        if text is None or not text.messages or (thread and len(text.messages) < 2):
            await self._threads.drop(learned, [key])
            return
        try:
            await self._threads.keep(learned, text)
        except IngestError as exc:
            log.warning("could not keep %s: %s", key, exc)


def touched(event: Mapping[str, Any]) -> list[tuple[str | None, datetime | None]]:
    """The threads and hours a message event changes: (thread ts, None) for a thread,
    (None, hour) for an hour of top-level messages."""
    subtype = event.get("subtype")
    if subtype == "message_deleted":
        message: Mapping[str, Any] = event.get("previous_message") or {"ts": event.get("deleted_ts")}
    elif subtype == "message_changed":
        message = event.get("message") or {}
    else:
        message = event
    ts = str(message.get("ts") or "")
    if not ts:
        return []
    thread_ts = str(message.get("thread_ts") or "")
    found: list[tuple[str | None, datetime | None]] = []
    if thread_ts and thread_ts != ts:  # a reply
        found.append((thread_ts, None))
        if subtype == "thread_broadcast" or message.get("subtype") == "thread_broadcast":
            found.append((None, hour_of(ts)))
        return found
    found.append((None, hour_of(ts)))
    if thread_ts or message.get("reply_count"):  # a thread's parent
        found.append((ts, None))
    return found
