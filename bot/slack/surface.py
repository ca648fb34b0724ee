"""`SlackSurface`: replies in the thread of the message that asked.

Work is shown at once with the thread's status (`assistant.threads.setStatus` with loading
messages; Slack clears it when the reply lands), or where Slack refuses that, with a
reaction (removed when the answer lands). Generated answers stream into the thread with
`chat.startStream`/`appendStream`/`stopStream`, falling back to posting then updating in
place; link previews are always off. An answer's top-level text (notifications, screen
readers) is the answer itself (`answer_text`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.chat import messages
from bot.chat.surface import Confirmation
from bot.slack.blocks import (
    answer_messages,
    answer_text,
    confirm_blocks,
    fallback_text,
    form_button_blocks,
    notice_blocks,
    tail_blocks,
)
from knowledge.answer import Answer
from knowledge.llm import Delta

log = logging.getLogger(__name__)
WORKING_REACTION = "mag"
UPDATE_INTERVAL = 1.0


class SlackSurface:
    def __init__(
        self,
        client: AsyncWebClient,
        *,
        channel: str,
        thread_ts: str,
        message_ts: str,
        team_id: str,
        user_id: str,
    ) -> None:
        self._client = client
        self._channel = channel
        self._thread_ts = thread_ts
        self._message_ts = message_ts
        self._team_id = team_id
        self._user_id = user_id
        self._reacted = False
        self._status = False
        self._posted = False

    async def working(self) -> None:
        if self._reacted or self._status:
            return
        if await self._set_status(messages.STATUS, list(messages.LOADING_MESSAGES)):
            self._status = True
            return
        try:
            await self._client.reactions_add(
                channel=self._channel, timestamp=self._message_ts, name=WORKING_REACTION
            )
            self._reacted = True
        except SlackApiError as exc:
            log.info("could not add the working reaction: %s", exc.response.get("error"))

    async def _set_status(self, status: str, loading: list[str] | None = None) -> bool:
        try:
            await self._client.assistant_threads_setStatus(
                channel_id=self._channel, thread_ts=self._thread_ts, status=status, loading_messages=loading
            )
        except SlackApiError as exc:
            log.info("could not set the thread's status: %s", exc.response.get("error"))
            return False
        return True

    async def done(self) -> None:
        if self._status:
            self._status = False
            if not self._posted:  # a reply clears the status; without one, clear it here
                await self._set_status("")
        if not self._reacted:
            return
        self._reacted = False
        try:
            await self._client.reactions_remove(
                channel=self._channel, timestamp=self._message_ts, name=WORKING_REACTION
            )
        except SlackApiError as exc:
            log.info("could not remove the working reaction: %s", exc.response.get("error"))

    async def say(self, text: str) -> None:
        await self.post(text, None)
        await self.done()

    async def confirm(self, text: str, action: Confirmation, value: str) -> None:
        await self.post(text, confirm_blocks(text, action, value))

    async def offer_form(self, text: str, form: str) -> bool:
        await self.post(text, form_button_blocks(text, form))
        await self.done()
        return True

    async def progress(self, text: str) -> Callable[[str], Awaitable[None]]:
        ts = await self.post(text, None)

        async def update(new_text: str) -> None:
            try:
                await self._client.chat_update(channel=self._channel, ts=ts, text=new_text)
            except SlackApiError as exc:  # rate limited or deleted: the next update tries again
                log.info("could not update the progress message: %s", exc.response.get("error"))

        return update

    async def post(self, text: str, blocks: list[dict[str, Any]] | None) -> str:
        response = await self._client.chat_postMessage(
            channel=self._channel,
            thread_ts=self._thread_ts,
            text=text,
            blocks=blocks,
            unfurl_links=False,
            unfurl_media=False,
        )
        self._posted = True
        return str(response.get("ts"))

    async def answer(
        self, events: AsyncIterator[Delta | Answer], answer_id: Callable[[Answer], Awaitable[int]]
    ) -> Answer | None:
        first = await anext(events, None)
        if first is None:
            return None
        if isinstance(first, Answer):
            await self._post_answer(first, await answer_id(first))
            return first
        final = await self._stream(first, events)
        if final is not None:
            await self._finish_stream(final, await answer_id(final))
        return final

    async def _post_answer(self, answer: Answer, answer_id: int) -> None:
        for n, blocks in enumerate(answer_messages(answer, answer_id)):
            await self.post(answer_text(answer) if n == 0 else fallback_text(blocks), blocks)
        await self.done()

    async def _stream(self, first: Delta, events: AsyncIterator[Delta | Answer]) -> Answer | None:
        self._streamed = ""
        self._streamer: Any = None
        self._placeholder: str | None = None
        self._last_update = 0.0
        await self._append(first.text)
        final: Answer | None = None
        async for event in events:
            if isinstance(event, Delta):
                await self._append(event.text)
            else:
                final = event
        return final

    async def _append(self, text: str) -> None:
        self._streamed += text
        if self._placeholder is None and self._streamer is None:
            self._streamer = await self._client.chat_stream(
                channel=self._channel,
                thread_ts=self._thread_ts,
                recipient_team_id=self._team_id,
                recipient_user_id=self._user_id,
            )
            self._posted = True
        if self._streamer is not None:
            try:
                await self._streamer.append(markdown_text=text)
            except SlackApiError as exc:
                self._unstreamable(exc)
                self._placeholder = await self.post(self._streamed, None)
                self._last_update = time.monotonic()
        elif time.monotonic() - self._last_update >= UPDATE_INTERVAL:
            await self._update(self._streamed, None)

    def _unstreamable(self, exc: SlackApiError) -> None:
        """The stream failed. Before it started (streaming unavailable here), drop it so the
        caller posts instead; once started, re-raise. The streamer buffers its first 256
        characters, so the failure shows on a later append or at stop, not at creation."""
        if self._streamer is None or self._streamer.ts is not None:
            raise exc
        log.info("streaming unavailable (%s); posting and updating instead", exc.response.get("error"))
        self._streamer = None

    async def _update(self, text: str, blocks: list[dict[str, Any]] | None) -> None:
        assert self._placeholder is not None
        await self._client.chat_update(channel=self._channel, ts=self._placeholder, text=text, blocks=blocks)
        self._last_update = time.monotonic()

    async def _finish_stream(self, answer: Answer, answer_id: int) -> None:
        """Close the stream (or the placeholder) with the final text, sources and buttons."""
        tail = [*notice_blocks(answer), *tail_blocks(answer, answer_id)]
        if self._streamer is not None:
            try:
                await self._streamer.stop(blocks=tail[:50] or None)
            except SlackApiError as exc:
                self._unstreamable(exc)
                await self._post_answer(answer, answer_id)
                return
        else:
            messages = answer_messages(answer, answer_id)
            await self._update(answer_text(answer), messages[0])
            for blocks in messages[1:]:
                await self.post(fallback_text(blocks), blocks)
        await self.done()
