"""Issue 35, finding 6: learning a channel was unbounded: no cap on what one channel may
hold, and a full sync held the whole history in memory before keeping any of it. Now the
listing is streamed (an hour is kept once the listing has passed it, a thread as it is met)
and a sync reads at most `LORE_LEARN_MAX_MESSAGES` messages, newest first, saying so in the
channel when it stops there (memory against history length: `bench/learn_history.py`).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlmodel import select

from storage.models import Chunk
from storage.records import IndexRef
from tests.bot.conftest import TEAM, SlackBot
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
