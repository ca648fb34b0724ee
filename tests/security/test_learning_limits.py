"""Issue 35, finding 6: learning a channel was unbounded: no cap on what one channel may
hold, and a full sync held the whole history in memory before keeping any of it. Now the
listing is streamed (an hour is kept once the listing has passed it, a thread as it is met)
and a sync reads at most `LORE_LEARN_MAX_MESSAGES` messages, newest first, saying so in the
channel when it stops there (memory against history length: `bench/learn_history.py`).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sqlmodel import select

from storage.models import Chunk
from storage.records import IndexRef
from tests.bot.conftest import TEAM, SlackBot
from tests.bot.slack_payloads import say
from tests.security.conftest import running_lore

START = 1_699_000_000


def channel_index(bot: SlackBot, name: str) -> IndexRef:
    return next(i for i in bot.runtime.services.indexes.list_for_tenant(TEAM) if i.name == name)


@pytest.mark.asyncio
async def test_learning_stops_at_the_limit_newest_first_and_says_so(tmp_path: Path) -> None:
    async with running_lore(
        tmp_path / "lore", lore_learn_max_messages=60, lore_progress_seconds=0.05
    ) as lore:
        lore.slack.add_channel("CLONG", "long")
        lore.slack.add_user("ULEE", "lee")
        for n in range(150):  # a message every two minutes: five hours
            text = f"Log entry {n}: checksum {'ancient-kumquat' if n == 0 else 'fresh-papaya' if n == 149 else n}."
            lore.slack.add_message("CLONG", f"{START + 120 * n}.000100", text, "ULEE")
        asked = await lore.mention("CLONG", "ULEE", "learn this channel")
        said = lore.said("CLONG", asked)
        assert "I stopped at the newest 60 messages (LORE_LEARN_MAX_MESSAGES)" in said, said

        services = lore.runtime.services
        index = channel_index(lore, "long")
        documents = services.documents.list_ready(index.id)
        with services.db.session() as session:
            text = "".join(session.exec(select(Chunk.text).where(Chunk.index_id == index.id)).all())
        assert "fresh-papaya" in text and "ancient-kumquat" not in text
        assert 2 <= len(documents) <= 4, [d.name for d in documents]  # the newest hours only


def held(lore: SlackBot, index: IndexRef) -> tuple[int, list[int], str]:
    """How many messages a learned channel's index holds, the numbers of the log entries in
    it (passages overlap), and all its passages' text."""
    services = lore.runtime.services
    count = sum(int(d.meta["messages"]) for d in services.documents.list_ready(index.id))
    with services.db.session() as session:
        text = "\n".join(session.exec(select(Chunk.text).where(Chunk.index_id == index.id)).all())
    return count, sorted({int(n) for n in re.findall(r"Log entry (\d+):", text)}), text


@pytest.mark.asyncio
async def test_a_learned_channel_keeps_the_newest_messages_and_forgets_the_oldest(tmp_path: Path) -> None:
    """What one channel holds is capped too: new messages past the limit (read by a later
    sync, or brought by message events) make Lore forget the oldest, and it says so once."""
    async with running_lore(
        tmp_path / "lore",
        lore_learn_max_messages=60,
        lore_progress_seconds=0.05,
        lore_slack_freshen_seconds=0,
    ) as lore:
        lore.slack.add_channel("CGROW", "growing")
        lore.slack.add_user("ULEE", "lee")

        def post(first: int, last: int) -> None:
            for n in range(first, last):
                text = "The vault code is ancient-kumquat." if n == 0 else f"Log entry {n}: all green."
                lore.slack.add_message("CGROW", lore.next_ts(), text, "ULEE")

        post(0, 40)
        asked = await lore.mention("CGROW", "ULEE", "learn this channel")
        said = lore.said("CGROW", asked)
        assert "Done reading" in said and "keep the newest" not in said, said
        index = channel_index(lore, "growing")
        assert held(lore, index)[:2] == (40, list(range(1, 40)))
        asked = await lore.mention("CGROW", "ULEE", "what is the vault code?")
        assert "ancient-kumquat" in lore.said("CGROW", asked)  # found while it is held

        post(40, 90)  # 50 more: the next sync keeps the newest 60 and says so
        asked = await lore.mention("CGROW", "ULEE", "learn this channel")
        said = lore.said("CGROW", asked)
        assert "I keep the newest 60 messages of it, so as new ones arrive, the oldest are forgotten." in said
        count, entries, text = held(lore, index)
        assert count == 60 and "ancient-kumquat" not in text
        assert 55 <= len(entries) < 60 and entries == list(range(90 - len(entries), 90)), entries
        asked = await lore.mention("CGROW", "ULEE", "what is the vault code?")
        assert "ancient-kumquat" not in lore.said("CGROW", asked)
        status = lore.said("CGROW", await lore.mention("CGROW", "ULEE", "status"))
        assert "it keeps the newest 60 messages (LORE_LEARN_MAX_MESSAGES), forgetting the oldest" in status

        await say(lore, "CGROW", "ULEE", "Log entry 90: the newest, from an event.")
        await lore.settle()
        count, later, _ = held(lore, index)
        assert count == 60 and later[-1] == 90 and later[0] > entries[0], later

        asked = await lore.mention("CGROW", "ULEE", "learn this channel")  # told once
        said = lore.said("CGROW", asked)
        assert "Done reading" in said and "keep the newest" not in said, said
        assert held(lore, index)[0] == 60
