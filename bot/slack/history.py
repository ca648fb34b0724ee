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

The listing is streamed: each hour is kept as soon as the listing has passed it (it comes
newest first), and each thread as it is met, so memory holds one hour and one thread at a
time whatever the history's length. A sync reads at most `LORE_LEARN_MAX_MESSAGES`
messages (replies included) and says so when it stops there.

The same setting bounds what a channel holds (`hold`): after each sync, and after a message
event adds to it, a channel with more messages than that keeps only the newest (documents
ordered by their newest message): the documents past the limit are removed through the
ingestor, as `forget` removes them, and the one the limit falls in is read again and cut to
its newest messages. The first time a channel reaches the limit, the sync's summary says
so, and `status` says it from then on (the limit reached is kept in the attachment's options).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from slack_sdk.errors import SlackApiError

from bot.app.actions.threads import CAPPED, HELD, SLACK_CHANNEL, Learned, ThreadActions, ThreadText
from bot.app.services import Services
from bot.chat.commands import is_command
from bot.slack.reader import (
    ChannelReader,
    Message,
    build_client,
    hour_key,
    hour_of,
    key_place,
    thread_key,
)
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

        return {
            SLACK_CHANNEL: ChannelSync(installed, services.actions.threads, settings.lore_learn_max_messages)
        }
    if settings.slack_bot_token is None:
        return {}
    reader = ChannelReader(
        build_client(settings.slack_bot_token.get_secret_value(), settings.slack_api_url), is_command
    )

    async def configured(_tenant: str) -> ChannelReader:
        return reader

    return {
        SLACK_CHANNEL: ChannelSync(configured, services.actions.threads, settings.lore_learn_max_messages)
    }


@dataclass
class _Listing:
    """What one sync has met so far: the hour being listed (its messages), the keys of the
    documents it kept, how many messages it read, the newest message seen."""

    reader: ChannelReader
    channel: str
    full: bool
    since: float
    """The newest message the previous sync read (0: none): threads with later replies are read again."""
    done: set[str]
    hour: datetime | None = None
    found: list[Message] = field(default_factory=list)
    kept: set[str] = field(default_factory=set)
    read: int = 0
    latest: float = 0.0


class ChannelSync:
    """Runs a learned channel's indexing job, reading it with its workspace's token."""

    def __init__(
        self,
        readers: Callable[[str], Awaitable[ChannelReader]],
        threads: ThreadActions,
        max_messages: int = 50_000,
    ) -> None:
        self._readers = readers
        self._threads = threads
        self._max_messages = max_messages

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
        since = float(str(newest)) if newest else 0.0
        listing = _Listing(reader, channel, full, since, await context.done_before(), latest=since)
        what = "the whole history" if full else "what changed since the last sync"
        await context.say(f"running on {context.worker}: reading {source.name}, {what}")
        capped = False
        async for message in reader.history(channel, oldest=oldest):
            if not await self._list(context, learned, listing, message) or context.stopped():
                return
            if listing.read >= self._max_messages:
                capped = True
                break
        if listing.hour is not None and not await self._hour(context, learned, listing):
            return
        if full and not capped:
            gone = sorted(await self._threads.kept(learned) - listing.kept)
            context.count(Count.DOCUMENTS_REMOVED, await self._threads.drop(learned, gone))
        if capped:
            context.counters[CAPPED] = self._max_messages
            await context.say(messages_capped(self._max_messages), "warning")
        removed, first = await hold(listing.reader, self._threads, learned, self._max_messages)
        context.count(Count.DOCUMENTS_REMOVED, removed)
        if first:
            context.counters[HELD] = self._max_messages
            await context.say(messages_held(self._max_messages), "warning")
        await self._threads.synced(learned, f"{listing.latest:.6f}" if listing.latest else None)
        await context.say(_summary(context.counters))

    async def _list(self, context: JobContext, learned: Learned, listing: _Listing, message: Message) -> bool:
        """One message of the listing (newest first): the hour before it is kept once the
        listing has passed it, a thread as it is met. False when the job was stopped."""
        at = hour_of(str(message["ts"]))
        if (
            listing.hour is not None
            and at != listing.hour
            and not await self._hour(context, learned, listing)
        ):
            return False
        listing.hour = at
        listing.found.append(message)
        listing.read += 1 + int(message.get("reply_count") or 0)
        last_reply = float(message.get("latest_reply") or 0)
        listing.latest = max(listing.latest, float(message["ts"]), last_reply)
        context.counters["pages_found"] = len(listing.kept) + 1
        if message.get("reply_count") and (listing.full or last_reply > listing.since):
            key = thread_key(listing.channel, str(message["ts"]))
            listing.kept.add(key)
            context.counters["pages_found"] = len(listing.kept) + 1
            if key not in listing.done:
                thread = await _thread(listing.reader, listing.channel, str(message["ts"]))
                await self._keep(context, learned, key, thread)
        return not context.stopped()

    async def _hour(self, context: JobContext, learned: Learned, listing: _Listing) -> bool:
        """Keep the hour the listing has passed, and start afresh. False when stopped."""
        assert listing.hour is not None
        key = hour_key(listing.channel, listing.hour)
        listing.kept.add(key)
        if key not in listing.done:  # a listing from `oldest` may hold only part of its first hour
            reader, channel, hour = listing.reader, listing.channel, listing.hour
            text = await (
                reader.hour_text(channel, hour, listing.found) if listing.full else reader.hour(channel, hour)
            )
            await self._keep(context, learned, key, text)
        listing.found = []
        context.counters["pages_found"] = len(listing.kept)
        return not context.stopped()

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


async def hold(
    reader: ChannelReader, threads: ThreadActions, learned: Learned, limit: int
) -> tuple[int, bool]:
    """Keep a learned channel at `limit` messages, the newest: forget the documents past the
    limit and cut the one it falls in to its newest messages. The documents removed, and
    whether the channel reached the limit for the first time."""
    held = await threads.held(learned)
    if sum(h.messages for h in held) <= limit:
        return 0, False
    room = limit
    gone: list[str] = []
    for document in held:
        if room <= 0:
            gone.append(document.key)
        elif document.messages > room:
            if not await _cut(reader, threads, learned, document.key, room):
                gone.append(document.key)
            room = 0
        else:
            room -= document.messages
    removed = await threads.drop(learned, gone)
    return removed, await threads.reached(learned, limit)


async def _cut(reader: ChannelReader, threads: ThreadActions, learned: Learned, key: str, room: int) -> bool:
    """Keep the newest `room` messages of the thread or hour `key`; False when it is gone."""
    thread_ts, hour = key_place(key)
    if hour is not None:
        text: ThreadText | None = await reader.hour(learned.channel, hour)
    else:
        text = await _thread(reader, learned.channel, str(thread_ts))
    if text is None or not text.messages:
        return False
    try:
        await threads.keep(learned, replace(text, messages=text.messages[-room:]))
    except IngestError as exc:
        log.warning("could not cut %s to the message limit: %s", key, exc)
        return False
    return True


def messages_held(limit: int) -> str:
    return (
        f"the channel reached {limit:,} messages (LORE_LEARN_MAX_MESSAGES): it keeps the newest {limit:,} "
        "messages, and the oldest are forgotten as new ones arrive"
    )


def messages_capped(limit: int) -> str:
    return (
        f"stopped at {limit:,} messages (LORE_LEARN_MAX_MESSAGES): the channel's older history was not read"
    )


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
        max_messages: int = 50_000,
    ) -> None:
        self._reader = reader
        self._max_messages = max_messages
        self._threads = threads
        self._spawn = spawn
        self._gate = gate
        self._delay = delay
        self._pending: set[str] = set()
        self._reading: dict[str, asyncio.Lock] = {}
        """One read at a time of each thread or hour (a lock per one touched: a few bytes)."""

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
        """Read `key` again after the delay, after any read of it still under way: two
        reads of one thread or hour at once could keep the older text last (a deleted
        message would come back)."""
        lock = self._reading.setdefault(key, asyncio.Lock())
        try:
            await asyncio.sleep(self._delay)
            self._pending.discard(key)
            async with lock, self._gate:
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
        a lone message lives in its hour), and hold the channel to its message limit."""
        if text is None or not text.messages or (thread and len(text.messages) < 2):
            await self._threads.drop(learned, [key])
            return
        try:
            result = await self._threads.keep(learned, text)
        except IngestError as exc:
            log.warning("could not keep %s: %s", key, exc)
            return
        if result.outcome != Outcome.UNCHANGED:  # past the limit, the oldest are forgotten
            await hold(self._reader, self._threads, learned, self._max_messages)


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
