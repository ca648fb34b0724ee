"""The message shortcut "Add to Lore's memory": saves a message and its thread into the
conversation's default index at once, confirms privately (ephemeral), and offers a button
that opens a form to save it into another index the person may add to.

Everything is checked against the permission table as the person, from the conversation
the message is in (`ThreadActions.save`, `IndexActions.get`); the form lists only indexes
they may add to from there. The conversation a payload names (the shortcut's channel, the
button's value, the form's private metadata) is checked with Slack before anything is read:
a channel or group DM the person is a member of (`People.may_read`), or their own DM with
Lore (every message in the thread is theirs or Lore's). A thread Lore cannot read (it is
not in the channel, Slack says the thread is gone) still saves the message the shortcut was
used on, from the payload, and says that the rest could not be read.
"""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.app.actions.indexes import describe
from bot.app.actions.threads import ThreadText
from bot.app.conversations import Actor
from bot.chat import messages
from bot.chat.runtime import Runtime
from bot.slack.events import SlackEvents
from bot.slack.people import People, Who
from knowledge import KnowledgeError, NotAllowed, Outcome
from storage.access import Action
from storage.records import IndexRef

log = logging.getLogger(__name__)
Json = dict[str, Any]
SHORTCUT = "add_to_memory"
"""The message shortcut's callback id (manifest.yml: features.shortcuts, type message)."""
PICK = "lore_memory_pick_index"
FORM = "lore_memory_other_index"
MAX_OPTIONS = 100


class MemoryShortcut:
    def __init__(self, runtime: Runtime, events: SlackEvents) -> None:
        self._actions = runtime.services.actions
        self._events = events

    def register(self, app: AsyncApp) -> None:
        app.message_shortcut(SHORTCUT)(self.shortcut)
        app.action(PICK)(self.pick)
        app.view(FORM)(self.submit)

    async def shortcut(
        self, ack: Any, body: Json, client: AsyncWebClient, who: Who | None, people: People
    ) -> None:
        await ack()
        message = body.get("message") or {}
        if who is None or who.channel is None or not message.get("ts"):
            return
        where = {"channel": who.channel, "thread_ts": str(message.get("thread_ts") or message["ts"])}
        self._events.spawn(self._save(client, who, people, where, first=True, floor=message))

    async def pick(
        self, ack: Any, body: Json, action: Json, client: AsyncWebClient, who: Who | None, people: People
    ) -> None:
        """The button under the confirmation: a form listing the other indexes."""
        await ack()
        if who is None:
            return
        where = json.loads(action.get("value") or "{}")
        try:
            if not await self._may_read(people, _at(who, where)):
                raise NotAllowed(messages.NOT_YOUR_CONVERSATION)
            actor = await people.actor(_at(who, where))
            indexes = await self._actions.threads.addable(actor)
        except KnowledgeError as exc:
            await _tell(client, who, messages.failed_file(str(exc)))
            return
        await client.views_open(trigger_id=body["trigger_id"], view=pick_modal(where, indexes, actor))

    async def submit(
        self, ack: Any, view: Json, client: AsyncWebClient, who: Who | None, people: People
    ) -> None:
        await ack()
        chosen = _chosen(view)
        if who is None or chosen is None:
            return
        where = json.loads(view.get("private_metadata") or "{}")
        self._events.spawn(self._save(client, _at(who, where), people, where, index_id=chosen))

    async def _save(
        self,
        client: AsyncWebClient,
        who: Who,
        people: People,
        where: Json,
        *,
        first: bool = False,
        index_id: int | None = None,
        floor: Json | None = None,
    ) -> None:
        """Read the thread, save it (into the default index, or the one chosen), say so
        privately. `floor`: the message the shortcut was used on, saved even when the thread
        cannot be read."""
        blocks: list[Json] | None = None
        try:
            if not await self._may_read(people, who):
                raise NotAllowed(messages.NOT_YOUR_CONVERSATION)
            actor = await people.actor(who)
            place = actor.place
            default = None
            if index_id is None:
                default = await self._actions.indexes.default(actor)
                target = await self._actions.threads.target(actor, default)
            else:
                target = await self._actions.indexes.get(place, index_id, Action.ADD)
            text, unread = await self._read(who, where, floor)
            saved = await self._actions.threads.save(place, target, text)
            if saved.result is None:
                reply = messages.failed_file(saved.error or "I couldn't save it")
            else:
                unchanged = saved.result.outcome == Outcome.UNCHANGED
                reply = messages.shortcut_saved(
                    target.name, describe(target, place), len(text.messages), unchanged
                )
                if default is not None and default.id != target.id:
                    reply += " " + messages.kept_private(target.name, default.name)
                if unread is not None:
                    reply += " " + messages.thread_partly_read(unread)
                blocks = confirm_blocks(reply, where) if first else None
        except SlackApiError as exc:
            reply = messages.thread_unreadable(str(exc.response.get("error")))
        except KnowledgeError as exc:
            reply = messages.failed_file(str(exc))
        except Exception:
            log.exception("the memory shortcut failed in %s", where.get("channel"))
            reply = messages.internal_error()
        await _tell(client, who, reply, blocks)

    async def _may_read(self, people: People, who: Who) -> bool:
        """A channel or group DM: Slack says the person is in it. Their DM with Lore is
        checked on its messages as they are read (`_read`)."""
        channel = who.channel or ""
        return channel.startswith("D") or await people.may_read(who, channel)

    async def _read(self, who: Who, where: Json, floor: Json | None) -> tuple[ThreadText, str | None]:
        """The thread as Slack shows it, and why the rest of it could not be read (None when
        it could); at least the `floor` message, when the thread cannot be read."""
        space = self._events.workspaces.known(who.tenant)
        assert space is not None, "the middleware found the request's workspace"
        reader = space.reader
        channel, thread_ts = str(where.get("channel") or ""), str(where.get("thread_ts") or "")
        unread: str | None = None
        try:
            found = await reader.replies(channel, thread_ts)
        except SlackApiError as exc:
            found, unread = [], str(exc.response.get("error") or "an error")
        if channel.startswith("D"):
            bot = await reader.bot_user_id()
            if any(m.get("user") not in (who.user, bot) for m in found if m.get("user")):
                raise NotAllowed(messages.NOT_YOUR_CONVERSATION)  # a DM with someone else
        if floor is not None and floor.get("text") and not any(m.get("ts") == floor.get("ts") for m in found):
            found, unread = [*found, floor], unread or "the message wasn't in it"
        text, _ = await reader.thread_of(channel, thread_ts, found, exact_link=True)
        return text, unread


def confirm_blocks(text: str, where: Json) -> list[Json]:
    return [
        {"type": "section", "text": {"type": "mrkdwn", "text": text}},
        {
            "type": "actions",
            "block_id": "lore_memory",
            "elements": [
                {
                    "type": "button",
                    "action_id": PICK,
                    "value": json.dumps(where),
                    "text": {"type": "plain_text", "text": messages.PICK_ANOTHER},
                    "accessibility_label": messages.PICK_ANOTHER_LABEL,
                }
            ],
        },
    ]


def pick_modal(where: Json, indexes: list[IndexRef], actor: Actor) -> Json:
    options = [
        {
            "text": {"type": "plain_text", "text": f"{i.name} ({describe(i, actor.place)})"[:75]},
            "value": str(i.id),
        }
        for i in indexes[:MAX_OPTIONS]
    ]
    return {
        "type": "modal",
        "callback_id": FORM,
        "private_metadata": json.dumps(where),
        "title": {"type": "plain_text", "text": "Add to Lore's memory"},
        "submit": {"type": "plain_text", "text": "Save"},
        "close": {"type": "plain_text", "text": "Cancel"},
        "blocks": [
            {
                "type": "input",
                "block_id": "index",
                "label": {"type": "plain_text", "text": messages.PICK_LABEL},
                "element": {"type": "static_select", "action_id": "value", "options": options},
            }
        ],
    }


def _chosen(view: Json) -> int | None:
    values = (view.get("state") or {}).get("values") or {}
    selected = ((values.get("index") or {}).get("value") or {}).get("selected_option") or {}
    try:
        return int(str(selected.get("value")))
    except (TypeError, ValueError):
        return None


def _at(who: Who, where: Json) -> Who:
    """The person, in the conversation the message is in (a form knows no channel)."""
    channel = str(where.get("channel") or who.channel or "")
    return replace(who, channel=channel or None, is_dm=channel.startswith("D"))


async def _tell(client: AsyncWebClient, who: Who, text: str, blocks: list[Json] | None = None) -> None:
    """Privately: ephemeral in the conversation, else in the person's DM with Lore."""
    try:
        if who.channel:
            await client.chat_postEphemeral(channel=who.channel, user=who.user, text=text, blocks=blocks)
            return
    except SlackApiError as exc:
        log.info("could not answer privately in %s: %s", who.channel, exc.response.get("error"))
    await client.chat_postMessage(channel=who.user, text=text, blocks=blocks, unfurl_links=False)
