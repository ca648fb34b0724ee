"""Follow-ups without a mention: which channel messages Lore answers although nobody
mentioned it, and which threads it takes part in. In a help channel, top-level posts to nobody
(`is_open_post`) are questions Lore may answer unasked.

A reply in a thread is a follow-up when Lore has answered in that thread, it comes from a
person, it does not mention Lore (that is an `app_mention`, answered as such), it is not
addressed to someone else (it starts with another person's mention) and it is more than a
thank-you. Where a conversation requires mentions (`require mentions here`) none is.
Whether Lore took part is remembered for the threads it answered in; other threads are
asked of Slack (`conversations.replies`) and a "no" is remembered for a minute, so a busy
thread of other people costs one call a minute.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from cachetools import LRUCache, TTLCache

from bot.slack.reader import ChannelReader

CHANNEL_TYPES = frozenset({"channel", "group", "mpim"})
KNOWN_THREADS = 10_000
NOT_IN_THREAD_SECONDS = 60.0
_LEADING_MENTION = re.compile(r"^\s*<@([A-Z0-9]+)(?:\|[^>]*)?>")
_ACKNOWLEDGEMENT = re.compile(
    r"^(?:thanks?(?: you)?|thx|ty|cheers|great|perfect|nice|cool|ok(?:ay)?|got it|makes sense|"
    r"(?::[a-z0-9_+-]+:\s*)+|[\W_]*)[\s.!]*$",
    re.I,
)


def is_follow_up(event: Mapping[str, Any], bot_user_id: str) -> bool:
    """Whether a channel `message` event could be a follow-up to Lore (before asking whether
    Lore takes part in its thread)."""
    if event.get("channel_type") not in CHANNEL_TYPES or event.get("subtype") not in (None, "file_share"):
        return False
    thread_ts, ts = event.get("thread_ts"), event.get("ts")
    if not thread_ts or thread_ts == ts:
        return False
    text = str(event.get("text") or "")
    if f"<@{bot_user_id}" in text:
        return False  # an app_mention too: answered as one
    if (leading := _LEADING_MENTION.match(text)) and leading.group(1) != bot_user_id:
        return False  # addressed to someone else
    return bool(event.get("files")) or not _ACKNOWLEDGEMENT.match(text)


_ADDRESSED = re.compile(r"<@[UW][A-Z0-9]+(?:\|[^>]*)?>|<!subteam\^[A-Z0-9]+(?:\|[^>]*)?>")
_ANNOUNCEMENT = re.compile(r"<!(?:channel|here|everyone)(?:\|[^>]*)?>")


def is_open_post(event: Mapping[str, Any], bot_user_id: str) -> bool:
    """Whether a channel `message` event is a person's top-level post to nobody in particular,
    which Lore may answer in a help channel: not a reply in a thread, not an edit or a join,
    not addressed to a person or a group (a mention anywhere), not an announcement
    (@channel, @here, @everyone); one mentioning Lore is an `app_mention`, answered as one."""
    if event.get("channel_type") not in CHANNEL_TYPES or event.get("subtype") is not None:
        return False
    thread_ts, ts = event.get("thread_ts"), event.get("ts")
    if thread_ts and thread_ts != ts:
        return False
    text = str(event.get("text") or "")
    if f"<@{bot_user_id}" in text:
        return False
    return not (_ADDRESSED.search(text) or _ANNOUNCEMENT.search(text))


class Threads:
    """Which threads Lore takes part in (has posted in)."""

    def __init__(self, reader: ChannelReader) -> None:
        self._reader = reader
        self._joined: LRUCache[tuple[str, str], None] = LRUCache(maxsize=KNOWN_THREADS)
        self._not_in: TTLCache[tuple[str, str], None] = TTLCache(
            maxsize=KNOWN_THREADS, ttl=NOT_IN_THREAD_SECONDS
        )
        """Threads Lore was found not to be in, not read again for a while."""

    def joined(self, channel: str, thread_ts: str) -> None:
        """Lore replied in this thread."""
        key = (channel, thread_ts)
        self._not_in.pop(key, None)
        self._joined[key] = None

    async def takes_part(self, channel: str, thread_ts: str) -> bool:
        key = (channel, thread_ts)
        if key in self._joined:
            return True
        if key in self._not_in:
            return False
        bot = await self._reader.bot_user_id()
        found = await self._reader.replies(channel, thread_ts, pages=5)
        if any(m.get("user") == bot for m in found):
            self.joined(channel, thread_ts)
            return True
        self._not_in[key] = None
        return False
