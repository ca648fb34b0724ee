"""`manifest.yml` cannot drift from the code: the Web API methods Lore calls (found in
`bot/` by reading its source) and the events its Bolt app handles (found by delivering each
event to the real app and seeing which it answers) need exactly the scopes the manifest
asks for, and the manifest subscribes to exactly the events the app handles."""

from __future__ import annotations

import ast
import inspect
import json
import re
import sys
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
import yaml
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack import scopes
from bot.slack.slash import COMMAND
from tests.bot.conftest import TEAM, SlackBot

ASYNC = pytest.mark.asyncio(loop_scope="module")

ROOT = Path(__file__).parents[2]
NOT_SUBSCRIBED = ("reaction_removed", "channel_created", "team_join", "file_shared")
"""Events Lore does not handle: the probe must find them unhandled, or it proves nothing."""


@cache
def manifest() -> dict[str, Any]:
    return dict(yaml.safe_load((ROOT / "manifest.yml").read_text()))


def api_methods(name: str) -> set[str]:
    """The Web API methods a client method calls: its own `api_call("…")`, or those of the
    helper object it returns (`chat_stream` hands the client to `AsyncChatStream`)."""
    function = getattr(AsyncWebClient, name)
    source = inspect.getsource(function)
    direct = set(re.findall(r'api_call\(\s*"([\w.]+)"', source))
    if direct:
        return direct
    helper = re.search(r"return (\w+)\(\s*self\b", source)
    if helper is None:
        return set()
    module = sys.modules[AsyncWebClient.__module__]
    helper_source = inspect.getsource(getattr(module, helper[1]))
    return {
        m for called in set(re.findall(r"self\._client\.(\w+)\(", helper_source)) for m in api_methods(called)
    }


def called_methods() -> set[str]:
    """Every Web API method some code in bot/ calls on a client, plus Bolt's own auth.test."""
    client = {
        name for name, _ in inspect.getmembers(AsyncWebClient, inspect.isfunction) if not name.startswith("_")
    }
    found = {"auth.test"}
    for path in (ROOT / "bot").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in client
            ):
                found |= api_methods(node.func.attr)
    return found


def test_the_method_scan_finds_what_it_should() -> None:
    found = called_methods()
    assert {"chat.postMessage", "chat.startStream", "chat.appendStream", "chat.stopStream"} <= found
    assert {"views.publish", "users.conversations", "chat.postEphemeral", "conversations.replies"} <= found


def test_every_method_called_is_known_with_its_scopes() -> None:
    unknown = called_methods() - set(scopes.METHOD_SCOPES)
    assert not unknown, f"add these methods and their scopes to bot/slack/scopes.py: {sorted(unknown)}"


async def handled(bot: SlackBot, name: str) -> bool:
    """Deliver one event of that kind (as the manifest names it) and see whether the app
    handled it (Bolt answers 404 to what no listener matches)."""
    ts = bot.next_ts()
    channel_types = {
        "message.channels": "channel",
        "message.groups": "group",
        "message.im": "im",
        "message.mpim": "mpim",
    }
    if name in channel_types:
        event: dict[str, Any] = {
            "type": "message", "channel_type": channel_types[name], "channel": "CPROBE", "user": "UPROBE",
            "text": "probe", "ts": ts, "event_ts": ts,
        }  # fmt: skip
    elif name.startswith("assistant_thread"):
        thread = {"user_id": "UPROBE", "channel_id": "DUPROBE", "thread_ts": ts, "context": {}}
        event = {"type": name, "assistant_thread": thread, "event_ts": ts}
    else:
        event = {"type": name, "user": "UPROBE", "channel": "CPROBE", "tab": "home", "text": "<@UBOT> probe",
                 "ts": ts, "event_ts": ts, "channel_type": "C"}  # fmt: skip
    return await bot.deliver(event) == 200


async def handled_shortcut(bot: SlackBot, callback_id: str) -> bool:
    payload = {
        "type": "message_action", "callback_id": callback_id, "trigger_id": "1.trigger",
        "team": {"id": TEAM}, "user": {"id": "UPROBE", "team_id": TEAM}, "channel": {"id": "CPROBE"},
        "message": {"type": "message", "user": "UPROBE", "ts": bot.next_ts(), "text": "probe"},
        "response_url": bot.slack.response_url(), "message_ts": bot.next_ts(),
    }  # fmt: skip
    status, _ = await bot.post(
        urlencode({"payload": json.dumps(payload)}), "application/x-www-form-urlencoded"
    )
    await bot.settle()
    return status == 200


@ASYNC
async def test_the_manifest_subscribes_to_exactly_the_events_the_app_handles(bot: SlackBot) -> None:
    bot.slack.add_channel("CPROBE", "probe")
    bot.slack.add_user("UPROBE", "probe")
    declared = set(manifest()["settings"]["event_subscriptions"]["bot_events"])
    for name in NOT_SUBSCRIBED:
        assert not await handled(bot, name), f"the probe says {name} is handled: it can't tell"
    found = {name for name in scopes.EVENT_SCOPES if await handled(bot, name)}
    assert found <= declared, f"handled but not subscribed in manifest.yml: {sorted(found - declared)}"
    assert declared == found, sorted(set(declared) ^ set(found))
    assert not set(declared) - set(scopes.EVENT_SCOPES)


@ASYNC
async def test_the_manifest_declares_the_slash_command_and_the_shortcut(bot: SlackBot) -> None:
    features = manifest()["features"]
    [command] = features["slash_commands"]
    assert command["command"] == COMMAND and command["should_escape"] is False
    assert (await bot.slash("UPROBE", "CPROBE", "help")).status == 200
    memory, answer = features["shortcuts"]
    assert memory == memory | {
        "type": "message",
        "callback_id": "add_to_memory",
        "name": "Add to Lore's memory",
    }
    assert answer == answer | {
        "type": "message",
        "callback_id": "save_as_answer",
        "name": "Save as the answer",
    }
    assert await handled_shortcut(bot, "add_to_memory")
    assert await handled_shortcut(bot, "save_as_answer")
    assert not await handled_shortcut(bot, "no_such_shortcut"), "the probe can tell"
    assert (
        features["app_home"]["home_tab_enabled"] is True
        and features["app_home"]["messages_tab_enabled"] is True
    )


def test_the_manifest_asks_for_exactly_the_scopes_the_code_uses() -> None:
    asked = set(manifest()["oauth_config"]["scopes"]["bot"])
    events = manifest()["settings"]["event_subscriptions"]["bot_events"]
    used = set(scopes.needed(called_methods(), events))
    if "url_private" in (ROOT / "bot" / "slack" / "files.py").read_text():
        used.add("files:read")
    if manifest()["features"].get("slash_commands") or manifest()["features"].get("shortcuts"):
        used.add("commands")
    assert asked == used, (
        f"asked but unused: {sorted(asked - used)}; used but not asked: {sorted(used - asked)}"
    )
    assert asked == set(scopes.BOT_SCOPES)
    assert not {"im:read", "im:write"} & asked
    assert {"commands", "mpim:read", "mpim:history", "channels:history"} <= asked
    assert {"app_home_opened", "message.channels"} <= set(events)
