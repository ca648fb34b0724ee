"""The small rules of the Slack surface: which message events touch which documents of a
learned channel, and which channel messages are follow-ups to Lore."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.slack.followups import is_follow_up
from bot.slack.history import touched

PARENT, REPLY = "1700000000.000100", "1700003700.000200"  # 22:13 and 23:15 UTC
PARENT_HOUR = datetime(2023, 11, 14, 22, tzinfo=UTC)
REPLY_HOUR = datetime(2023, 11, 14, 23, tzinfo=UTC)


@pytest.mark.parametrize(
    ("event", "expected"),
    [
        ({"ts": PARENT}, [(None, PARENT_HOUR)]),
        ({"ts": REPLY, "thread_ts": PARENT}, [(PARENT, None)]),
        (
            {"ts": REPLY, "thread_ts": PARENT, "subtype": "thread_broadcast"},
            [(PARENT, None), (None, REPLY_HOUR)],
        ),
        (
            {"subtype": "message_changed", "ts": REPLY, "message": {"ts": PARENT, "thread_ts": PARENT}},
            [(None, PARENT_HOUR), (PARENT, None)],
        ),
        (
            {"subtype": "message_changed", "message": {"ts": REPLY, "thread_ts": PARENT, "text": "fixed"}},
            [(PARENT, None)],
        ),
        (
            {
                "subtype": "message_deleted",
                "deleted_ts": PARENT,
                "previous_message": {"ts": PARENT, "reply_count": 2},
            },
            [(None, PARENT_HOUR), (PARENT, None)],
        ),
        ({"subtype": "message_deleted", "deleted_ts": REPLY}, [(None, REPLY_HOUR)]),
        ({"subtype": "message_changed", "message": {}}, []),
    ],
)
def test_a_message_event_touches_its_thread_and_its_hour(
    event: dict[str, object], expected: list[object]
) -> None:
    assert touched(event) == expected


def reply(text: str, **extra: object) -> dict[str, object]:
    return {
        "type": "message",
        "channel_type": "channel",
        "ts": REPLY,
        "thread_ts": PARENT,
        "text": text,
        **extra,
    }


@pytest.mark.parametrize(
    ("event", "expected"),
    [
        (reply("and on weekends?"), True),
        (reply("and on weekends?", channel_type="group"), True),
        (reply("and on weekends?", channel_type="mpim"), True),
        (reply("", subtype="file_share", files=[{"id": "F1"}]), True),
        (reply("<@UBOT> and on weekends?"), False),  # an app_mention too
        (reply("on weekends, <@UBOT>?"), False),
        (reply("<@UDANA> can you check?"), False),  # addressed to someone else
        (reply("thanks!"), False),
        (reply("Thank you."), False),
        (reply(":+1: :tada:"), False),
        (reply("👍"), False),
        (reply("ok"), False),
        (reply("and on weekends?", channel_type="im"), False),  # DMs are answered anyway
        (reply("edited", subtype="message_changed"), False),
        ({**reply("a new topic"), "thread_ts": None}, False),
        ({**reply("the parent itself"), "ts": PARENT}, False),
    ],
)
def test_which_channel_messages_are_follow_ups(event: dict[str, object], expected: bool) -> None:
    assert is_follow_up(event, "UBOT") is expected
