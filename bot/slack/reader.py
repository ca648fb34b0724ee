"""Reading conversations out of Slack as text Lore can keep: a thread, or one hour of a
channel's top-level messages, with who said what and when and a permalink.

Messages are spelled as people read them: `<@U123>` becomes `@Ada`, `<#C1|eng>` `#eng`,
`<https://x|the doc>` `the doc (https://x)`; files are named. Lore's own messages (its
answers, which quote documents already kept) and Slack's notices (joins, topic changes) are
left out, and so are commands to Lore. Reads page through Slack's cursors; 429s are waited out by the client's retry
handler (`build_client`).
"""

from __future__ import annotations

import html
import logging
import re
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
from slack_sdk.web.async_client import AsyncWebClient

from bot.app.actions.threads import ThreadMessage, ThreadText

log = logging.getLogger(__name__)
Message = Mapping[str, Any]
PAGE_SIZE = 200
MAX_PAGES = 50
"""At most this many pages of one thread (10,000 messages)."""
RETRIES_ON_429 = 5
NOTICES = {
    "channel_join",
    "channel_leave",
    "channel_topic",
    "channel_purpose",
    "channel_name",
    "channel_archive",
    "channel_unarchive",
    "group_join",
    "group_leave",
    "pinned_item",
    "unpinned_item",
    "bot_add",
    "bot_remove",
    "ekm_access_denied",
    "tombstone",
}
_USER = re.compile(r"<@([A-Z0-9]+)(?:\|([^>]*))?>")
_CHANNEL = re.compile(r"<#([A-Z0-9]+)(?:\|([^>]*))?>")
_SPECIAL = re.compile(r"<!(here|channel|everyone)(?:\|[^>]*)?>|<!subteam\^[A-Z0-9]+(?:\|([^>]*))?>")
_LINK = re.compile(r"<((?:https?|mailto):[^|>]+)(?:\|([^>]*))?>")


def display_name(info: Mapping[str, Any]) -> str:
    """How someone is named: the display name they chose, else their real name, else
    their profile's names, else their handle ("" when Slack said nothing)."""
    profile = info.get("profile") or {}
    for name in (
        profile.get("display_name"),
        info.get("real_name"),
        profile.get("real_name"),
        profile.get("display_name_normalized"),
        profile.get("real_name_normalized"),
        info.get("name"),
    ):
        if isinstance(name, str) and name.strip():
            return name.strip()
    return ""


def build_client(token: str, base_url: str) -> AsyncWebClient:
    """A Web API client that waits out rate limits (429 with Retry-After) a few times."""
    client = AsyncWebClient(token=token, base_url=base_url)
    client.retry_handlers.append(AsyncRateLimitErrorRetryHandler(max_retry_count=RETRIES_ON_429))
    return client


def thread_key(channel: str, thread_ts: str) -> str:
    return f"slack:{channel}:{thread_ts}"


def hour_key(channel: str, hour: datetime) -> str:
    return f"slack:{channel}:hour:{hour:%Y-%m-%dT%H}"


def key_place(key: str) -> tuple[str | None, datetime | None]:
    """Where a learned document's key points: (thread ts, None) for a thread, (None, hour)
    for an hour of top-level messages."""
    _, _, rest = key.partition(":")
    _, _, where = rest.partition(":")
    if where.startswith("hour:"):
        return None, datetime.strptime(where.removeprefix("hour:"), "%Y-%m-%dT%H").replace(tzinfo=UTC)
    return where, None


def hour_of(ts: str) -> datetime:
    """The start of the UTC hour a message was posted in."""
    return when(ts).replace(minute=0, second=0, microsecond=0)


def when(ts: str) -> datetime:
    return datetime.fromtimestamp(float(ts), UTC)


IsCommand = Callable[[str], bool]
"""Whether a message to Lore (its text without the mention) is a command rather than a question."""


def is_content(message: Message, bot_user_id: str, is_command: IsCommand) -> bool:
    """A message people wrote (or another bot posted): not Lore's own, not a notice, not a
    command to Lore ("@lore remember this thread")."""
    text = str(message.get("text") or "")
    if message.get("subtype") in NOTICES or message.get("user") == bot_user_id:
        return False
    if f"<@{bot_user_id}>" in text and is_command(text.replace(f"<@{bot_user_id}>", " ").strip()):
        return False
    return bool(text.strip() or message.get("files"))


class ChannelReader:
    """Reads threads and channel hours; names people and channels (cached for its life)."""

    def __init__(
        self, client: AsyncWebClient, is_command: IsCommand, *, bot_user_id: str | None = None
    ) -> None:
        self._client = client
        self._is_command = is_command
        self._bot_user_id = bot_user_id
        self._names: dict[str, str] = {}
        self._channels: dict[str, str] = {}
        self._permalink_base: str | None = None

    async def bot_user_id(self) -> str:
        if self._bot_user_id is None:
            self._bot_user_id = str((await self._client.auth_test()).get("user_id") or "")
        return self._bot_user_id

    # --- raw reads ---

    async def replies(self, channel: str, thread_ts: str, *, pages: int = MAX_PAGES) -> list[Message]:
        """The thread, oldest first (`SlackApiError` `thread_not_found` when it is gone)."""
        found: list[Message] = []
        cursor: str | None = None
        for _ in range(pages):
            page = await self._client.conversations_replies(
                channel=channel, ts=thread_ts, limit=PAGE_SIZE, cursor=cursor
            )
            found.extend(page.get("messages") or [])
            cursor = (page.get("response_metadata") or {}).get("next_cursor") or None
            if cursor is None:
                break
        return found

    async def history(
        self, channel: str, *, oldest: str | None = None, latest: str | None = None
    ) -> AsyncIterator[Message]:
        """The channel's top-level messages, newest first, paged."""
        cursor: str | None = None
        while True:
            page = await self._client.conversations_history(
                channel=channel,
                limit=PAGE_SIZE,
                cursor=cursor,
                oldest=oldest,
                latest=latest,
                inclusive=True if oldest or latest else None,
            )
            for message in page.get("messages") or []:
                yield message
            cursor = (page.get("response_metadata") or {}).get("next_cursor") or None
            if cursor is None:
                return

    # --- as text ---

    async def thread(
        self, channel: str, thread_ts: str, *, skip: Sequence[str] = (), exact_link: bool = False
    ) -> tuple[ThreadText, list[Message]]:
        """The thread as text (without the messages in `skip`), and the files on its messages."""
        return await self.thread_of(
            channel, thread_ts, await self.replies(channel, thread_ts), skip=skip, exact_link=exact_link
        )

    async def thread_of(
        self,
        channel: str,
        thread_ts: str,
        found: Sequence[Message],
        *,
        skip: Sequence[str] = (),
        exact_link: bool = False,
    ) -> tuple[ThreadText, list[Message]]:
        """`found` (a thread's messages, as read) as the thread's text, and its files."""
        kept = [m for m in found if str(m.get("ts")) not in skip]
        text = await self.as_text(channel, kept, key=thread_key(channel, thread_ts))
        link = await self.permalink(channel, thread_ts, exact=exact_link)
        files = [f for m in kept if m.get("user") != await self.bot_user_id() for f in m.get("files") or []]
        return ThreadText(text.key, text.where, link, text.messages), files

    async def hour(self, channel: str, hour: datetime) -> ThreadText:
        """One UTC hour of the channel's top-level messages (no messages: an empty text)."""
        end = hour + timedelta(hours=1) - timedelta(microseconds=1)
        found = [m async for m in self.history(channel, oldest=_ts(hour), latest=_ts(end))]
        return await self.hour_text(channel, hour, found)

    async def hour_text(self, channel: str, hour: datetime, found: Sequence[Message]) -> ThreadText:
        ordered = sorted(found, key=lambda m: float(m["ts"]))
        text = await self.as_text(channel, ordered, key=hour_key(channel, hour))
        link = await self.permalink(channel, text_ts(ordered, text)) if text.messages else None
        return ThreadText(text.key, text.where, link, text.messages, hour=hour)

    async def as_text(self, channel: str, messages: Sequence[Message], *, key: str) -> ThreadText:
        bot = await self.bot_user_id()
        said = [
            ThreadMessage(await self._author(m), when(str(m["ts"])), await self.plain(m))
            for m in messages
            if is_content(m, bot, self._is_command)
        ]
        return ThreadText(key, await self.where(channel), None, tuple(said))

    async def plain(self, message: Message) -> str:
        """The message as people read it; its files named."""
        text = str(message.get("text") or "")
        text = _CHANNEL.sub(lambda m: "#" + (m.group(2) or m.group(1)), text)
        text = _SPECIAL.sub(lambda m: "@" + (m.group(1) or m.group(2) or "group"), text)
        text = _LINK.sub(lambda m: f"{m.group(2)} ({m.group(1)})" if m.group(2) else m.group(1), text)
        names = {user: label or await self.name(user) for user, label in _USER.findall(text)}
        text = _USER.sub(lambda m: "@" + names[m.group(1)], text)
        text = html.unescape(text)
        files = [str(f.get("name") or f.get("title") or "a file") for f in message.get("files") or []]
        if files:
            text = (text + "\n" if text else "") + " ".join(f"[file: {n}]" for n in files)
        return text.strip()

    # --- names and links ---

    async def name(self, user: str) -> str:
        if user not in self._names:
            try:
                info = (await self._client.users_info(user=user)).get("user") or {}
            except SlackApiError as exc:
                log.info("users.info %s failed: %s", user, exc.response.get("error"))
                return user
            self._names[user] = display_name(info) or user
        return self._names[user]

    async def where(self, channel: str) -> str:
        """`#eng`, or "a group DM" / "a DM"."""
        if channel not in self._channels:
            try:
                info = (await self._client.conversations_info(channel=channel)).get("channel") or {}
            except SlackApiError as exc:
                log.info("conversations.info %s failed: %s", channel, exc.response.get("error"))
                return f"#{channel}"
            if info.get("is_im"):
                self._channels[channel] = "a DM"
            elif info.get("is_mpim"):
                self._channels[channel] = "a group DM"
            else:
                self._channels[channel] = f"#{info.get('name') or channel}"
        return self._channels[channel]

    async def permalink(self, channel: str, ts: str, *, exact: bool = False) -> str | None:
        """A message's permalink: asked of Slack (chat.getPermalink) the first time, or when
        `exact`; otherwise made the way Slack makes them, from the workspace's address."""
        if self._permalink_base is None or exact:
            try:
                link = str(
                    (await self._client.chat_getPermalink(channel=channel, message_ts=ts))["permalink"]
                )
            except SlackApiError as exc:
                log.info("chat.getPermalink failed: %s", exc.response.get("error"))
                return None
            self._permalink_base = link.split("/archives/", 1)[0]
            return link
        return f"{self._permalink_base}/archives/{channel}/p{ts.replace('.', '')}"

    async def _author(self, message: Message) -> str:
        if message.get("user"):
            return await self.name(str(message["user"]))
        profile = message.get("bot_profile") or {}
        return str(profile.get("name") or message.get("username") or "a bot")


def text_ts(ordered: Sequence[Message], text: ThreadText) -> str:
    """The ts of the first message `text` kept (its link points there)."""
    first = text.messages[0].at
    return next((str(m["ts"]) for m in ordered if when(str(m["ts"])) == first), str(ordered[0]["ts"]))


def _ts(moment: datetime) -> str:
    return f"{moment.timestamp():.6f}"
