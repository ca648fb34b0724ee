"""More of what Slack sends, for `SlackBot`: plain channel messages (and their edits and
deletions), agent events, message shortcuts and modal submissions, each in Slack's wire
format and signed like the rest.

Messages are also stored in the fake Web API, so Lore reads back the same conversation
Slack would show it.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlencode

from tests.bot.conftest import TEAM, SlackBot

Json = dict[str, Any]
_serial = itertools.count(1)


def message_event(
    bot: SlackBot,
    channel: str,
    user: str,
    text: str,
    *,
    thread_ts: str | None = None,
    channel_type: str = "channel",
    files: Sequence[str] = (),
) -> Json:
    """A `message` event of someone's post in a channel (also stored in the fake)."""
    ts = bot.next_ts()
    bot.slack.add_message(channel, ts, text, user, thread_ts=thread_ts, files=list(files) or None)
    event: Json = {
        "type": "message",
        "channel": channel,
        "channel_type": channel_type,
        "user": user,
        "text": text,
        "ts": ts,
        "event_ts": ts,
        "team": TEAM,
    }
    if thread_ts:
        event["thread_ts"] = thread_ts
        parent = bot.slack.message(channel, thread_ts) or {}
        event["parent_user_id"] = parent.get("user", "")
    if files:
        event.update(subtype="file_share", files=[bot.slack.file(f) for f in files])
    return event


async def say(bot: SlackBot, channel: str, user: str, text: str, **options: Any) -> str:
    """Post in a channel without mentioning Lore; the message's ts."""
    event = message_event(bot, channel, user, text, **options)
    assert await bot.deliver(event) == 200
    return str(event["ts"])


async def edit(bot: SlackBot, channel: str, ts: str, text: str, *, channel_type: str = "channel") -> None:
    """Someone edits their message: the fake changes it and Slack sends `message_changed`."""
    before = bot.slack.message(channel, ts) or {}
    after = bot.slack.edit_message(channel, ts, text)
    event_ts = bot.next_ts()
    event = {
        "type": "message",
        "subtype": "message_changed",
        "channel": channel,
        "channel_type": channel_type,
        "hidden": True,
        "message": {**after, "type": "message"},
        "previous_message": before,
        "ts": event_ts,
        "event_ts": event_ts,
    }
    assert await bot.deliver(event) == 200


async def delete(bot: SlackBot, channel: str, ts: str, *, channel_type: str = "channel") -> None:
    """Someone deletes their message: gone from the fake, and Slack sends `message_deleted`."""
    before = bot.slack.delete_message(channel, ts)
    event_ts = bot.next_ts()
    event = {
        "type": "message",
        "subtype": "message_deleted",
        "channel": channel,
        "channel_type": channel_type,
        "hidden": True,
        "deleted_ts": ts,
        "previous_message": before,
        "ts": event_ts,
        "event_ts": event_ts,
    }
    assert await bot.deliver(event) == 200


async def interact(bot: SlackBot, payload: Mapping[str, Any]) -> int:
    """POST an interactive payload (form-encoded, signed) and wait for Lore's work."""
    status, _ = await bot.post(
        urlencode({"payload": json.dumps(payload)}), "application/x-www-form-urlencoded"
    )
    await bot.settle()
    return status


def _user(user: str) -> Json:
    return {"id": user, "username": user.lower(), "name": user.lower(), "team_id": TEAM}


async def shortcut(
    bot: SlackBot, callback_id: str, user: str, channel: str, message: Mapping[str, Any]
) -> int:
    """Someone runs a message shortcut on `message` (as stored in the fake)."""
    payload = {
        "type": "message_action",
        "callback_id": callback_id,
        "trigger_id": f"{next(_serial)}.shortcut",
        "team": {"id": TEAM, "domain": "lore-test"},
        "user": _user(user),
        "channel": {"id": channel, "name": channel.lower()},
        "message": dict(message),
        "message_ts": message["ts"],
        "response_url": "https://hooks.slack.invalid/actions/T0001/1/x",
        "action_ts": bot.next_ts(),
        "token": "legacy-verification-token",
        "is_enterprise_install": False,
    }
    return await interact(bot, payload)


async def press_ephemeral(bot: SlackBot, user: str, channel: str, button: Mapping[str, Any]) -> int:
    """Press a button of an ephemeral message (Slack sends no `message` for those)."""
    payload = {
        "type": "block_actions",
        "team": {"id": TEAM, "domain": "lore-test"},
        "user": _user(user),
        "api_app_id": "A0001",
        "token": "legacy-verification-token",
        "container": {
            "type": "message",
            "message_ts": bot.next_ts(),
            "channel_id": channel,
            "is_ephemeral": True,
        },
        "trigger_id": f"{next(_serial)}.trigger",
        "channel": {"id": channel, "name": channel.lower()},
        "response_url": "https://hooks.slack.invalid/actions/T0001/2/y",
        "actions": [
            {
                "type": "button",
                "action_id": button["action_id"],
                "block_id": "b",
                "value": button["value"],
                "action_ts": bot.next_ts(),
            }
        ],
    }
    return await interact(bot, payload)


async def submit_view(bot: SlackBot, user: str, view: Mapping[str, Any], values: Json) -> int:
    """Submit a modal Lore opened (`view` as the fake stored it) with these state values."""
    payload = {
        "type": "view_submission",
        "team": {"id": TEAM, "domain": "lore-test"},
        "user": _user(user),
        "api_app_id": "A0001",
        "token": "legacy-verification-token",
        "trigger_id": f"{next(_serial)}.submit",
        "view": {**view, "state": {"values": values}},
        "response_urls": [],
        "is_enterprise_install": False,
    }
    return await interact(bot, payload)
