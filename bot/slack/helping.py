"""Answers' buttons and the ways people mark an answer as right, in Slack.

- "Show more" under an answer at a glance: the whole answer, to the presser alone (an
  ephemeral message in a channel; in a DM, a message in its thread, private already).
- "Verify" (experts): Lore's own answer becomes the verified answer to its question.
- "Ask an expert": Lore mentions the conversation's experts in the thread, with the question.
- The message shortcut "Save as the answer" on a reply in a thread, the "Save as the answer"
  button Lore offers an expert who replied in an escalated thread, and ✅ on a reply (from
  the asker or an expert, in a help channel or one with experts): the reply becomes the
  verified answer to the thread's first message.

Every check is the use cases' (`bot.app.actions.helping`, `AnswerActions.given_here`): an
answer is acted on only from the conversation it was given in; what is said back goes to
the person alone.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.app.conversations import Actor
from bot.chat import messages
from bot.chat.runtime import Runtime
from bot.slack.blocks import ESCALATE_ACTION, MORE_ACTION, VERIFY_ACTION, Block, fallback_text, whole_messages
from bot.slack.people import People, Who
from bot.slack.reader import ChannelReader, Message
from bot.slack.workspaces import Workspaces
from knowledge import KnowledgeError

log = logging.getLogger(__name__)
Json = dict[str, Any]
SAVE_SHORTCUT = "save_as_answer"
"""The message shortcut's callback id (manifest.yml: features.shortcuts, type message)."""
SAVE_ACTION = "save_as_answer_button"
CHECK_MARKS = frozenset({"white_check_mark", "heavy_check_mark", "ballot_box_with_check"})


@dataclass(frozen=True)
class Press:
    """A press of one of an answer's buttons: which answer, by whom, from which message."""

    answer_id: int
    who: Who
    client: AsyncWebClient
    people: People
    body: Json

    @property
    def thread(self) -> str | None:
        return _thread(self.body)


class HelpFlows:
    def __init__(self, runtime: Runtime, spawn: Callable[[Any], None], workspaces: Workspaces) -> None:
        self._actions = runtime.services.actions
        self._spawn = spawn
        self._workspaces = workspaces

    def _reader(self, who: Who) -> ChannelReader:
        """The reader of the person's workspace (the middleware found it for the request)."""
        space = self._workspaces.known(who.tenant)
        assert space is not None, "the middleware found the request's workspace"
        return space.reader

    def register(self, app: AsyncApp) -> None:
        app.action(MORE_ACTION)(self._pressed(self.more))
        app.action(VERIFY_ACTION)(self._pressed(self.verify))
        app.action(ESCALATE_ACTION)(self._pressed(self.escalate))
        app.action(SAVE_ACTION)(self.save_offered)
        app.message_shortcut(SAVE_SHORTCUT)(self.save_shortcut)
        app.event("reaction_added")(self.reacted)

    # -- an answer's buttons ------------------------------------------------------------------

    def _pressed(self, act: Callable[[Actor, Press], Awaitable[None]]) -> Callable[..., Awaitable[None]]:
        """A Bolt listener for one of an answer's buttons: acknowledge, read which answer from the
        button's value, and `act` on it as the person who pressed (in the background)."""

        async def pressed(
            ack: Any, body: Json, action: Json, client: AsyncWebClient, who: Who | None, people: People
        ) -> None:
            await ack()
            answer_id = _answer_id(action)
            if who is None or answer_id is None:
                return
            press = Press(answer_id, who, client, people, body)

            async def as_actor(actor: Actor) -> None:
                await act(actor, press)

            self._spawn(self._as_actor(client, who, people, as_actor, press.thread))

        return pressed

    async def more(self, actor: Actor, press: Press) -> None:
        record = await self._actions.answers.given_here(actor, press.answer_id)
        thread = press.thread or record.thread
        for blocks in whole_messages(record.text or "", record.cited):
            await _tell(press.client, press.who, fallback_text(blocks), blocks, thread)

    async def verify(self, actor: Actor, press: Press) -> None:
        who, body = press.who, press.body
        message_ts = str(
            (body.get("message") or {}).get("ts") or (body.get("container") or {}).get("message_ts") or ""
        )
        link = (
            await self._reader(who).permalink(who.channel or "", message_ts, exact=True)
            if message_ts
            else None
        )
        saved = await self._actions.helping.verify_answer(
            actor, press.answer_id, link, press.people.group_members
        )
        await _tell(press.client, who, messages.verified_saved(saved.question), None, press.thread)

    async def escalate(self, actor: Actor, press: Press) -> None:
        record = await self._actions.helping.escalate(actor, press.answer_id)
        asker = actor.user.external_id
        text = messages.escalation(actor.conversation.experts, asker, record.question)
        thread = record.thread or press.thread
        await press.client.chat_postMessage(
            channel=press.who.channel or "", thread_ts=thread, text=text, unfurl_links=False
        )

    # -- a reply as the answer --------------------------------------------------------------------

    async def save_shortcut(
        self, ack: Any, body: Json, client: AsyncWebClient, who: Who | None, people: People
    ) -> None:
        await ack()
        message = body.get("message") or {}
        if who is None or who.channel is None or not message.get("ts"):
            return
        where = {
            "channel": who.channel,
            "ts": str(message["ts"]),
            "thread_ts": str(message.get("thread_ts") or ""),
        }
        self._spawn(self._save(client, who, people, where))

    async def save_offered(
        self, ack: Any, action: Json, client: AsyncWebClient, who: Who | None, people: People
    ) -> None:
        await ack()
        try:
            where = json.loads(str(action.get("value") or "{}"))
        except ValueError:
            return
        if who is None or not isinstance(where, dict) or not where.get("channel") or not where.get("ts"):
            return
        self._spawn(self._save(client, _in(who, str(where["channel"])), people, where))

    async def reacted(self, event: Json, client: AsyncWebClient, who: Who | None, people: People) -> None:
        """✅ on a reply: from the asker or an expert, where Lore helps (a help channel, or
        one with experts), the reply becomes the verified answer. Any other ✅ is someone's
        own business: nothing is said."""
        item = event.get("item") or {}
        if who is None or event.get("reaction") not in CHECK_MARKS or item.get("type") != "message":
            return
        where = {"channel": str(item.get("channel") or ""), "ts": str(item.get("ts") or ""), "thread_ts": ""}
        if where["channel"] and where["ts"]:
            self._spawn(self._save(client, _in(who, where["channel"]), people, where, reaction=True))

    async def _save(
        self, client: AsyncWebClient, who: Who, people: People, where: Json, *, reaction: bool = False
    ) -> None:
        """Read the reply and its thread's first message from Slack, and keep them as the
        question and its verified answer."""
        try:
            actor = await people.actor(who)
            if reaction and not (actor.conversation.help_channel or actor.conversation.experts):
                return
            reader = self._reader(who)
            reply, parent = await self._reply_and_question(reader, where)
            if reply is None or parent is None or reply.get("bot_id"):
                if not reaction:
                    await _tell(client, who, messages.NOT_A_REPLY)
                return
            fields = await _verified_fields(reader, where["channel"], reply, parent)
            helping, asker = self._actions.helping, str(parent.get("user") or "")
            if reaction:
                saved = await helping.save_by_reaction(
                    actor, asker=asker, members_of=people.group_members, **fields
                )
            else:
                saved = await helping.save_reply(actor, asker=asker, **fields)
            await _tell(
                client, who, messages.verified_saved(saved.question), None, str(reply.get("thread_ts") or "")
            )
        except SlackApiError as exc:
            if not reaction:
                await _tell(client, who, messages.thread_unreadable(str(exc.response.get("error"))))
        except KnowledgeError as exc:
            if not reaction:
                await _tell(client, who, messages.failed_file(str(exc)))
            else:
                log.info("a ✅ in %s kept nothing: %s", where.get("channel"), exc)
        except Exception:
            log.exception("could not save a verified answer in %s", where.get("channel"))
            if not reaction:
                await _tell(client, who, messages.internal_error())

    async def _reply_and_question(
        self, reader: ChannelReader, where: Json
    ) -> tuple[Message | None, Message | None]:
        """The message at `where` (as Slack has it, not as the payload says) and the first
        message of its thread; (None, None) when it is not a reply in a thread."""
        channel, ts = str(where["channel"]), str(where["ts"])
        found = await reader.replies(channel, ts, pages=1)
        reply = next((m for m in found if str(m.get("ts")) == ts), None)
        if reply is None:
            return None, None
        thread_ts = str(reply.get("thread_ts") or "")
        if not thread_ts or thread_ts == ts:
            return None, None
        thread = await reader.replies(channel, thread_ts, pages=1)
        parent = next((m for m in thread if str(m.get("ts")) == thread_ts), None)
        return reply, parent

    async def _as_actor(
        self,
        client: AsyncWebClient,
        who: Who,
        people: People,
        act: Callable[[Actor], Awaitable[None]],
        thread: str | None,
    ) -> None:
        """Do `act` as the person where they pressed; what went wrong, to them alone."""
        try:
            await act(await people.actor(who))
        except KnowledgeError as exc:
            await _tell(client, who, messages.failed_file(str(exc)), None, thread)
        except Exception:
            log.exception("an answer's button failed in %s", who.channel)
            await _tell(client, who, messages.internal_error(), None, thread)


async def offer_to_save(client: AsyncWebClient, expert: str, where: Json, question: str) -> None:
    """To an expert who replied in a thread taken to the experts: save the reply as the answer."""
    text = messages.offer_to_save(question)
    blocks: list[Block] = [
        {"type": "section", "text": {"type": "mrkdwn", "text": text}},
        {
            "type": "actions",
            "block_id": "save_as_answer",
            "elements": [
                {
                    "type": "button",
                    "style": "primary",
                    "action_id": SAVE_ACTION,
                    "value": json.dumps(where),
                    "text": {"type": "plain_text", "text": messages.SAVE_AS_ANSWER},
                    "accessibility_label": messages.SAVE_AS_ANSWER_LABEL,
                }
            ],
        },
    ]
    try:
        await client.chat_postEphemeral(
            channel=str(where["channel"]),
            user=expert,
            thread_ts=str(where["thread_ts"]),
            text=text,
            blocks=blocks,
        )
    except SlackApiError as exc:
        log.info("could not offer to save the answer: %s", exc.response.get("error"))


async def _verified_fields(reader: ChannelReader, channel: str, reply: Message, parent: Message) -> Json:
    """A reply and its thread's first message as a verified answer's fields, as Slack has them."""
    ts = str(reply["ts"])
    return {
        "question": await reader.plain(parent),
        "answer": await reader.plain(reply),
        "answered_by": await reader.name(str(reply.get("user") or "")),
        "link": await reader.permalink(channel, ts, exact=True),
        "source_key": f"slack:{channel}:{ts}",
        "answerer": str(reply.get("user") or ""),
    }


def _answer_id(action: Json) -> int | None:
    value = str(action.get("value") or "")
    return int(value) if value.isdigit() else None


def _thread(body: Json) -> str | None:
    message = body.get("message") or {}
    container = body.get("container") or {}
    found = message.get("thread_ts") or container.get("thread_ts") or message.get("ts")
    return str(found) if found else None


def _in(who: Who, channel: str) -> Who:
    """The person in the channel a payload's value names (a button on an ephemeral message
    carries no channel of its own)."""
    return replace(who, channel=channel, is_dm=channel.startswith("D"))


async def _tell(
    client: AsyncWebClient, who: Who, text: str, blocks: list[Block] | None = None, thread: str | None = None
) -> None:
    """To the person alone: ephemeral in a channel (in the thread), in a DM its thread."""
    channel = who.channel or who.user
    try:
        if who.is_dm or channel.startswith("D"):
            await client.chat_postMessage(
                channel=channel, thread_ts=thread, text=text, blocks=blocks, unfurl_links=False
            )
        else:
            await client.chat_postEphemeral(
                channel=channel, user=who.user, thread_ts=thread, text=text, blocks=blocks
            )
    except SlackApiError as exc:
        log.info("could not reply privately in %s: %s", channel, exc.response.get("error"))
