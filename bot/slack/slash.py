"""`/lore <question or command>`: Lore privately. The command goes through the same router
as a mention, but every reply (answer, listing, confirmation, error) is for the caller
alone, sent through the command's `response_url` (Bolt's `respond`), else as an ephemeral
message, else in their DM with Lore; never publicly. Slack wants an answer within 3 s, so
the command is acknowledged at once (a question with "looking…", which only the caller
sees) and the work goes on in the background.

Answers carry a "Share in channel" button: pressed by the person who asked, in the channel
where they asked, it posts the recorded answer there for everyone (and removes the private
copy). Nothing is shared from a DM.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import aiohttp
from slack_bolt.async_app import AsyncApp
from slack_bolt.context.respond.async_respond import AsyncRespond
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.chat import commands, messages
from bot.chat.mrkdwn import escape, source
from bot.chat.runtime import Runtime
from bot.chat.surface import Offers, Turn
from bot.slack.blocks import (
    BLOCKS_PER_MESSAGE,
    Block,
    answer_messages,
    confirm_blocks,
    fallback_text,
    feedback_block,
    form_button_blocks,
    markdown_blocks,
    paginate,
)
from bot.slack.events import SlackEvents
from bot.slack.people import People, Who
from knowledge import Answer, Delta, KnowledgeError
from storage.records import AnswerRecord

log = logging.getLogger(__name__)
Json = dict[str, Any]
COMMAND = "/lore"
SHARE_ACTION = "share_answer"


class ResponseSurface:
    """Replies only one person sees: through a response_url, falling back to an ephemeral
    message in `channel`, then to the person's DM with Lore. A private reply cannot be
    edited, so progress shows its first line and then the summary."""

    def __init__(
        self,
        respond: AsyncRespond,
        client: AsyncWebClient,
        *,
        channel: str,
        user_id: str,
        shareable: bool,
    ) -> None:
        self._respond = respond
        self._client = client
        self._channel = channel
        self._user_id = user_id
        self._shareable = shareable

    async def working(self) -> None:
        """Nothing: the acknowledgement already said so."""

    async def say(self, text: str) -> None:
        await self.send(text)

    async def tell(self, text: str, *, note: str | None = None) -> None:
        await self.send(text)  # no one else waits in a private exchange: no public note

    async def confirm(self, text: str, action: str, value: str) -> None:
        await self.send(text, confirm_blocks(text, action, value))

    async def offer_form(self, text: str, form: str) -> bool:
        await self.send(text, form_button_blocks(text, form))
        return True

    async def progress(self, text: str) -> Callable[[str], Awaitable[None]]:
        await self.send(text)

        async def unchanged(new_text: str) -> None:
            return None

        return unchanged

    async def not_sure(self, text: str, answer_id: int | None) -> None:
        await self.send(text)

    async def answer(
        self,
        events: AsyncIterator[Delta | Answer],
        answer_id: Callable[[Answer], Awaitable[int]],
        offers: Offers = Offers(),
    ) -> Answer | None:
        """A private message can't be streamed into: the whole answer, when it is ready."""
        final: Answer | None = None
        async for event in events:
            if isinstance(event, Answer):
                final = event
        if final is None:
            return None
        recorded = await answer_id(final)
        pages = answer_messages(final, recorded)
        if self._shareable and not final.abstained:
            pages = _with_share_button(pages, recorded)
        for blocks in pages:
            await self.send(fallback_text(blocks), blocks)
        return final

    async def send(self, text: str, blocks: list[Block] | None = None) -> None:
        """To the caller alone, whichever way still works."""
        try:
            sent = await self._respond(
                text=text, blocks=blocks, response_type="ephemeral", replace_original=False
            )
            if sent.status_code == 200:
                return
            log.info("the response_url refused a reply (%s %s)", sent.status_code, sent.body)
        except (aiohttp.ClientError, OSError, ValueError) as exc:
            log.info("could not reply through the response_url: %s", exc)
        try:
            await self._client.chat_postEphemeral(
                channel=self._channel, user=self._user_id, text=text, blocks=blocks
            )
        except SlackApiError as exc:
            log.info("could not reply ephemerally (%s); replying in a DM", exc.response.get("error"))
            await self._client.chat_postMessage(channel=self._user_id, text=text, blocks=blocks)


def share_block(answer_id: int) -> Block:
    return {
        "type": "actions",
        "block_id": f"share:{answer_id}",
        "elements": [
            {
                "type": "button",
                "action_id": SHARE_ACTION,
                "value": str(answer_id),
                "text": {"type": "plain_text", "text": "Share in channel"},
                "accessibility_label": "Post this answer in the channel for everyone",
            }
        ],
    }


def _with_share_button(pages: list[list[Block]], answer_id: int) -> list[list[Block]]:
    last = pages[-1]
    if len(last) < BLOCKS_PER_MESSAGE:
        return [*pages[:-1], [*last, share_block(answer_id)]]
    return [*pages, [share_block(answer_id)]]


def shared_blocks(answer: AnswerRecord, user: str) -> list[list[Block]]:
    """A recorded answer as the channel sees it when its asker shares it."""
    lead = {
        "type": "context",
        "elements": [{"type": "mrkdwn", "text": messages.shared_by(user, answer.question)}],
    }
    blocks: list[Block] = [lead, *markdown_blocks(answer.text or "")]
    sources = [_source_line(c) for c in answer.cited]
    if sources:
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": "*Sources*"}]})
        blocks.extend({"type": "section", "text": {"type": "mrkdwn", "text": line}} for line in sources)
    if not answer.abstained:
        blocks.append(feedback_block(answer.id))
    return paginate(blocks)


def _source_line(cited: Json) -> str:
    """A recorded source, as every answer shows its sources (`bot.chat.mrkdwn.source`)."""
    url = cited.get("url")
    title = source(str(cited.get("name") or "a document"), url if isinstance(url, str) else None)
    where = f" — in {escape(str(cited['index']))}" if cited.get("index") else ""
    number = cited.get("n")
    return f"[{number if isinstance(number, int) else '•'}] {title}{where}"[:3000]


class SlashCommand:
    """The `/lore` listener, and the share button of its answers."""

    def __init__(self, runtime: Runtime, events: SlackEvents) -> None:
        self._runtime = runtime
        self._events = events
        self._gate = asyncio.Semaphore(runtime.services.settings.lore_answer_concurrency)

    def register(self, app: AsyncApp) -> None:
        app.command(COMMAND)(self.run)
        app.action(SHARE_ACTION)(self.share)

    async def run(
        self,
        ack: Any,
        command: Json,
        client: AsyncWebClient,
        respond: AsyncRespond,
        who: Who | None,
        people: People,
    ) -> None:
        text = " ".join(str(command.get("text") or "").split()) or "help"
        parsed = commands.parse(text)
        if isinstance(parsed, commands.Question):
            await ack(text=messages.LOOKING_PRIVATELY, response_type="ephemeral")
        else:
            await ack()
        if who is None:
            return
        surface = ResponseSurface(
            respond, client, channel=who.channel or who.user, user_id=who.user, shareable=not who.is_dm
        )
        self._events.spawn(self._handle(text, who, people, surface))

    async def _handle(self, text: str, who: Who, people: People, surface: ResponseSurface) -> None:
        async with self._gate:
            try:
                actor = await people.actor(who)
                turn = Turn(actor=actor, text=text, is_dm=who.is_dm, private=True)
                await self._runtime.router.handle(turn, surface)
            except Exception:
                log.exception("failed to handle %s in %s", COMMAND, who.channel)
                await surface.tell(messages.internal_error())

    async def share(
        self,
        ack: Any,
        action: Json,
        client: AsyncWebClient,
        respond: AsyncRespond,
        who: Who | None,
        people: People,
    ) -> None:
        await ack()
        if who is None or who.channel is None or who.is_dm:
            return
        self._events.spawn(self._share(str(action.get("value") or ""), who, people, client, respond))

    async def _share(
        self, value: str, who: Who, people: People, client: AsyncWebClient, respond: AsyncRespond
    ) -> None:
        assert who.channel is not None
        surface = ResponseSurface(respond, client, channel=who.channel, user_id=who.user, shareable=False)
        try:
            actor = await people.actor(who)
            answer = await self._runtime.services.actions.answers.shareable(actor, int(value))
        except (KnowledgeError, ValueError) as exc:
            await surface.tell(
                messages.failed_file(str(exc)) if isinstance(exc, KnowledgeError) else messages.NOT_SHAREABLE
            )
            return
        for blocks in shared_blocks(answer, who.user):
            await _post_publicly(client, respond, who.channel, blocks)
        await respond(delete_original=True)


async def _post_publicly(
    client: AsyncWebClient, respond: AsyncRespond, channel: str, blocks: list[Block]
) -> None:
    """In the channel; where Lore is not a member, through the response_url."""
    text = fallback_text(blocks)
    try:
        await client.chat_postMessage(
            channel=channel, text=text, blocks=blocks, unfurl_links=False, unfurl_media=False
        )
    except SlackApiError as exc:
        log.info("could not post a shared answer (%s); through the response_url", exc.response.get("error"))
        await respond(text=text, blocks=blocks, response_type="in_channel", replace_original=False)
