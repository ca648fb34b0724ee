"""`SlackSurface`: replies in the thread of the message that asked; what is for the asker
alone (listings, errors, refusals) as an ephemeral message in that thread, or in their DM
with Lore when Slack refuses the ephemeral one (never publicly).

Work is shown at once with the thread's status (`assistant.threads.setStatus` with loading
messages; Slack clears it when the reply lands), or where Slack refuses that, with a
reaction (removed when the answer lands). Generated answers stream into the thread with
`chat.startStream`/`appendStream`/`stopStream`, falling back to posting then updating in
place; link previews are always off. An answer's top-level text (notifications, screen
readers) is the answer itself (`answer_text`). The model's text is defused on the way
(`bot.chat.mrkdwn`): it cannot mention or notify anyone.

Rate limits (429 with Retry-After) are waited out by the Web API client's retry handler
(`bot.slack.app`). What still fails is never dropped in silence: intermediate updates are
skipped, and a stream or placeholder that broke is replaced by the answer posted whole.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.chat import messages
from bot.chat.mrkdwn import StreamDefuser, escape
from bot.chat.surface import Confirmation, Offers
from bot.slack.blocks import (
    BLOCKS_PER_MESSAGE,
    Block,
    answer_messages,
    answer_text,
    confirm_blocks,
    fallback_text,
    form_button_blocks,
    not_sure_blocks,
    notice_blocks,
    offers_for,
    page_text,
    paginate,
    split_text,
    tail_blocks,
)
from knowledge import Answer, Delta

log = logging.getLogger(__name__)
WORKING_REACTION = "mag"
UPDATE_INTERVAL = 1.0
PLAIN_TEXT_LIMIT = 3_900
"""Slack shows plain message text up to about 4,000 characters without truncating it."""


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
        self._private_place = channel.startswith("D")
        """A DM: everything said there is private already."""
        self._thread_active = message_ts != thread_ts
        """Whether the thread has replies: Slack shows an ephemeral message in a thread only
        then, so a private reply to a message that starts no thread yet goes beside it."""
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

    async def tell(self, text: str, *, note: str | None = None) -> None:
        if self._private_place:
            await self.say(text)
            return
        try:
            await self._client.chat_postEphemeral(
                channel=self._channel,
                user=self._user_id,
                thread_ts=self._thread_ts if self._thread_active else None,
                text=text,
            )
        except SlackApiError as exc:  # e.g. the asker left the channel: their DM with Lore
            log.info("could not reply ephemerally (%s); replying in a DM", exc.response.get("error"))
            await self._client.chat_postMessage(channel=self._user_id, text=text, unfurl_links=False)
        if note:
            await self.post(note, None)
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
        self._thread_active = True
        self._posted = True
        return str(response.get("ts"))

    async def not_sure(self, text: str, answer_id: int | None) -> None:
        """Privately, beside the message: Lore is not sure enough to answer here (with "Ask an
        expert" when there are experts)."""
        blocks = not_sure_blocks(text, answer_id) if answer_id is not None else None
        try:
            await self._client.chat_postEphemeral(
                channel=self._channel, user=self._user_id, text=text, blocks=blocks
            )
        except SlackApiError as exc:  # the asker left: nothing to say unasked elsewhere
            log.info("could not tell the asker privately (%s)", exc.response.get("error"))

    async def answer(
        self,
        events: AsyncIterator[Delta | Answer],
        answer_id: Callable[[Answer], Awaitable[int]],
        offers: Offers = Offers(),
    ) -> Answer | None:
        """The answer at a glance (`answer_messages`); a model's answer streams in, then is
        cut to its glance when it ran longer."""
        self._offers = offers
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

    def _messages(self, answer: Answer, answer_id: int | None) -> list[list[Block]]:
        offers = getattr(self, "_offers", Offers())
        return answer_messages(answer, answer_id, offers_for(offers, answer))

    async def _post_answer(self, answer: Answer, answer_id: int) -> None:
        """The whole answer as new messages, each as plain text if Slack refuses its blocks.
        Rate limits are waited out by the client's retry handler; should Slack still refuse,
        the loss is logged with the answer's opening, never dropped in silence."""
        try:
            for n, blocks in enumerate(self._messages(answer, answer_id)):
                await self._deliver(blocks, answer_text(answer) if n == 0 else None)
        except SlackApiError as exc:
            log.error(
                "could not post answer %s in %s (%s): %.200r",
                answer_id,
                self._channel,
                exc.response.get("error"),
                answer.text,
            )
            raise
        await self.done()

    async def _deliver(self, blocks: list[Block], text: str | None = None) -> None:
        """One message of an answer (`text` its notification text, else its blocks' own).
        If Slack refuses it (blocks it can't show, a message too long), the same words
        follow as plain text in pieces it takes: an answer is never lost to its formatting."""
        try:
            await self.post(text or fallback_text(blocks), blocks)
        except SlackApiError as exc:
            log.warning(
                "Slack refused an answer's blocks (%s); posting it as text", exc.response.get("error")
            )
            for piece in split_text(page_text(blocks), PLAIN_TEXT_LIMIT):
                await self.post(piece, None)

    async def _stream(self, first: Delta, events: AsyncIterator[Delta | Answer]) -> Answer | None:
        self._streamed = ""
        self._streamer: Any = None
        self._placeholder: str | None = None
        self._lost = False
        """The stream (or the placeholder) broke after it started: the answer is posted
        again, whole, when it is complete."""
        self._defuser = StreamDefuser()
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
        if self._lost:
            return
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
                await self._streamer.append(markdown_text=self._defuser.feed(text))
            except SlackApiError as exc:
                if not self._stream_broke(exc):
                    await self._start_placeholder()
        elif time.monotonic() - self._last_update >= UPDATE_INTERVAL:
            try:
                await self._update(escape(self._streamed), None)
            except SlackApiError as exc:  # the next update (or the final one) tries again
                log.info("could not update the streamed answer: %s", exc.response.get("error"))

    async def _start_placeholder(self) -> None:
        try:
            self._placeholder = await self.post(escape(self._streamed), None)
        except SlackApiError as exc:
            log.warning("could not post the answer's placeholder (%s)", exc.response.get("error"))
            self._lost = True
        self._last_update = time.monotonic()

    def _stream_broke(self, exc: SlackApiError) -> bool:
        """The stream failed. Before it started (streaming unavailable here): False, and the
        caller posts instead. Once started (rate limited past the retries, expired): True,
        and the complete answer is posted as a new message at the end. The streamer buffers
        its first 256 characters, so a failure shows on a later append or at stop."""
        started = self._streamer is not None and self._streamer.ts is not None
        if started:
            log.warning("the answer's stream broke (%s); posting it whole instead", exc.response.get("error"))
            self._lost = True
        else:
            log.info("streaming unavailable (%s); posting and updating instead", exc.response.get("error"))
        self._streamer = None
        return started

    async def _glance(self, answer: Answer, answer_id: int) -> None:
        """A streamed answer longer than a glance is cut to it once complete ("Show more"
        gives it whole)."""
        ts = self._streamer.ts if self._streamer is not None else None
        if answer.brief.complete or ts is None:
            return
        [blocks, *_] = self._messages(answer, answer_id)
        try:
            await self._client.chat_update(
                channel=self._channel, ts=ts, text=answer_text(answer), blocks=blocks
            )
        except SlackApiError as exc:  # it stays whole: too long, never lost
            log.info("could not cut the streamed answer to its glance: %s", exc.response.get("error"))

    async def _update(self, text: str, blocks: list[dict[str, Any]] | None) -> None:
        assert self._placeholder is not None
        await self._client.chat_update(channel=self._channel, ts=self._placeholder, text=text, blocks=blocks)
        self._last_update = time.monotonic()

    async def _finish_stream(self, answer: Answer, answer_id: int) -> None:
        """Close the stream (or the placeholder) with the final text, sources and buttons;
        what does not fit in one message (50 blocks) follows in more; if either broke, post
        the answer whole instead."""
        offers = offers_for(getattr(self, "_offers", Offers()), answer)
        tail = [*notice_blocks(answer), *tail_blocks(answer, answer_id, offers)]
        first, rest = tail[:BLOCKS_PER_MESSAGE], tail[BLOCKS_PER_MESSAGE:]
        if self._streamer is not None and not self._lost:
            try:
                await self._streamer.stop(markdown_text=self._defuser.flush() or None, blocks=first or None)
            except SlackApiError as exc:
                self._stream_broke(exc)
                self._lost = True
            else:
                await self._glance(answer, answer_id)
                for blocks in paginate(rest):
                    await self._deliver(blocks)
        elif self._placeholder is not None and not self._lost:
            messages = self._messages(answer, answer_id)
            try:
                await self._update(answer_text(answer), messages[0])
            except SlackApiError as exc:
                log.warning(
                    "could not finish the answer in place (%s); posting it whole", exc.response.get("error")
                )
                self._lost = True
            else:
                for blocks in messages[1:]:
                    await self._deliver(blocks)
        if self._lost or (self._streamer is None and self._placeholder is None):
            await self._post_answer(answer, answer_id)
            return
        await self.done()
