"""A learned document's key says which thread or hour of the channel it holds, so the
message limit can read the one it falls in again and cut it (`bot.slack.history.hold`)."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.slack.reader import hour_key, key_place, thread_key


def test_an_hours_key_gives_back_the_hour() -> None:
    hour = datetime(2023, 11, 3, 8, tzinfo=UTC)
    assert key_place(hour_key("C0ENG", hour)) == (None, hour)


def test_a_threads_key_gives_back_the_threads_ts() -> None:
    assert key_place(thread_key("C0ENG", "1699000000.000100")) == ("1699000000.000100", None)
