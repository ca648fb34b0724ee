"""Feedback on answers from Slack: Slack's own 👍/👎 under each answer; 👎 opens a small
form (what was wrong: wrong, outdated, a missing source, something else; and a comment).
The verdict is stored at the press (so closing the form loses nothing); the form adds the
reason. The reply, to the presser alone, says who will read it; where the channel has
experts, it offers "Ask an expert" too (`bot.slack.helping` mentions them in the thread).

The answer id travels in the buttons' values and the form's private metadata; the use case
only accepts an answer the presser could see (one given in their own DM, or in a channel
Slack says they are in), so a forged id reaches nothing.
"""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.app.actions import Verdict
from bot.app.actions.feedback import Reads
from bot.app.conversations import place_of
from bot.chat import messages
from bot.chat.runtime import Runtime
from bot.slack.blocks import FEEDBACK_ACTION, not_sure_blocks, read_feedback
from bot.slack.people import People, Who
from storage.records import ChannelRef
from storage.values import FeedbackReason

log = logging.getLogger(__name__)
Json = dict[str, Any]
FEEDBACK_FORM = "feedback_form"
COMMENT_LIMIT = 1000


def feedback_modal(answer_id: int, where: Json) -> Json:
    options = [
        {"text": {"type": "plain_text", "text": label}, "value": value}
        for value, label in messages.FEEDBACK_REASONS.items()
    ]
    return {
        "type": "modal",
        "callback_id": FEEDBACK_FORM,
        "private_metadata": json.dumps({"answer": answer_id, **where}),
        "title": {"type": "plain_text", "text": "Feedback"},
        "submit": {"type": "plain_text", "text": "Send"},
        "close": {"type": "plain_text", "text": "Skip"},
        "blocks": [
            {
                "type": "input",
                "block_id": "reason",
                "label": {"type": "plain_text", "text": messages.FEEDBACK_FORM_TITLE},
                "element": {"type": "radio_buttons", "action_id": "value", "options": options},
            },
            {
                "type": "input",
                "block_id": "comment",
                "optional": True,
                "label": {"type": "plain_text", "text": messages.FEEDBACK_COMMENT_LABEL},
                "element": {
                    "type": "plain_text_input",
                    "action_id": "value",
                    "multiline": True,
                    "max_length": COMMENT_LIMIT,
                },
            },
        ],
    }


def submitted(view: Json) -> tuple[FeedbackReason | None, str]:
    """The form's reason (None if Slack sent none we know) and comment."""
    values = (view.get("state") or {}).get("values") or {}
    option = ((values.get("reason") or {}).get("value") or {}).get("selected_option") or {}
    comment = str(((values.get("comment") or {}).get("value") or {}).get("value") or "")
    try:
        reason = FeedbackReason(str(option.get("value")))
    except ValueError:
        reason = None
    return reason, comment.strip()[:COMMENT_LIMIT]


class FeedbackFlow:
    def __init__(self, runtime: Runtime) -> None:
        self._feedback = runtime.services.actions.feedback
        self._services = runtime.services

    def register(self, app: AsyncApp) -> None:
        app.action(FEEDBACK_ACTION)(self.pressed)
        app.view(FEEDBACK_FORM)(self.submit)

    async def pressed(
        self,
        ack: Any,
        body: Json,
        action: Json,
        client: AsyncWebClient,
        who: Who | None,
        people: People,
    ) -> None:
        """👍 thanks at once; 👎 opens the form (a modal needs this press's trigger_id)."""
        await ack()
        read = read_feedback(str(action.get("value") or ""))
        if who is None or read is None:
            return
        helpful, answer_id = read
        place = place_of(self._services, await people.user(who))
        verdict = await self._feedback.give(place, answer_id, helpful, reads=_reads(people, who))
        if verdict is None:
            return
        where = _where(body, who)
        if helpful:
            await _thank(client, who, where, verdict)
            return
        await client.views_open(trigger_id=body["trigger_id"], view=feedback_modal(answer_id, where))

    async def submit(
        self, ack: Any, view: Json, client: AsyncWebClient, who: Who | None, people: People
    ) -> None:
        await ack()
        metadata = json.loads(view.get("private_metadata") or "{}")
        answer_id = metadata.get("answer")
        if who is None or not isinstance(answer_id, int):
            return
        reason, comment = submitted(view)
        place = place_of(self._services, await people.user(who))
        verdict = await self._feedback.give(
            place, answer_id, False, reads=_reads(people, who), reason=reason, comment=comment
        )
        if verdict is not None:
            experts = await _has_experts(people, who, str(metadata.get("channel") or ""))
            await _thank(client, who, metadata, verdict, answer_id if experts else None)


async def _has_experts(people: People, who: Who, channel: str) -> bool:
    """Whether the channel the answer was given in has experts to ask (a DM has none)."""
    if not channel or channel.startswith("D"):
        return False
    try:
        actor = await people.actor(replace(who, channel=channel, is_dm=False))
    except Exception:
        log.exception("could not tell whether %s has experts", channel)
        return False
    return bool(actor.conversation.experts)


def _reads(people: People, who: Who) -> Reads:
    """Whether Slack says the presser is in a channel."""

    async def reads(channel: ChannelRef) -> bool:
        return channel.tenant_id == who.tenant and await people.may_read(who, channel.external_id)

    return reads


def _where(body: Json, who: Who) -> Json:
    """The channel and thread the answer is in."""
    message = body.get("message") or {}
    container = body.get("container") or {}
    thread = message.get("thread_ts") or container.get("thread_ts") or message.get("ts") or ""
    return {"channel": who.channel or "", "thread_ts": str(thread)}


async def _thank(
    client: AsyncWebClient, who: Who, where: Json, verdict: Verdict, escalate: int | None = None
) -> None:
    """To the presser alone, beside the answer; in their DM with Lore if that fails. With
    `escalate` (the answer's id, where there are experts): "Ask an expert" under it."""
    text = messages.feedback_thanks(verdict.helpful, verdict.indexes, verdict.given)
    channel = str(where.get("channel") or "")
    try:
        if channel:
            offer = f"{text} {messages.ASK_EXPERTS_INSTEAD}" if escalate is not None else text
            await client.chat_postEphemeral(
                channel=channel,
                user=who.user,
                thread_ts=where.get("thread_ts") or None,
                text=offer,
                blocks=not_sure_blocks(offer, escalate) if escalate is not None else None,
            )
            return
    except SlackApiError as exc:
        log.info("could not thank for feedback ephemerally: %s", exc.response.get("error"))
    await client.chat_postMessage(channel=who.user, text=text)
