"""Issue 35, finding 5: a deleted Slack message's text stayed on disk, in Chroma's write-ahead
log (`embeddings_queue` in chroma.sqlite3), after search stopped finding it. Now Chroma
saves its index at every write (so it purges its log), the stores are scrubbed after
removals (`storage.scrub`: SQLite's free space, FTS5's segments, its WAL; Chroma's file),
and answers that quoted what is forgotten lose those quotes. Tested by reading every file
under LORE_HOME, for a forgotten document, a learned message deleted in Slack, and a
deleted index.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from tests.bot.conftest import markdown_file, only_reply
from tests.bot.slack_payloads import delete, say
from tests.security.conftest import Lore, running_lore

pytestmark = pytest.mark.asyncio(loop_scope="module")


def files_with(home: Path, secret: str) -> list[str]:
    """Every file under `home` whose bytes hold `secret` (any case)."""
    needle = secret.lower().encode()
    return sorted(
        str(p.relative_to(home)) for p in home.rglob("*") if p.is_file() and needle in p.read_bytes().lower()
    )


async def scrubbed(lore: Lore, home: Path, secret: str, passes: int) -> list[str]:
    """The files still holding `secret` once scrubs after `passes` have run and it is gone
    (or 20 s have passed)."""
    scrubber = lore.runtime.services.scrubber
    for _ in range(200):
        if scrubber.passes > passes and not files_with(home, secret):
            break
        await asyncio.sleep(0.1)
    assert scrubber.passes > passes, "no scrub ran"
    return files_with(home, secret)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def home(tmp_path_factory: Any) -> Path:
    return Path(tmp_path_factory.mktemp("lore-deleted"))


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def lore(home: Path) -> AsyncIterator[Lore]:
    async with running_lore(home, lore_slack_freshen_seconds=0) as running:
        running.slack.add_user("UFAY", "fay")
        running.slack.add_user("UGUS", "gus", is_admin=True)
        running.slack.add_channel("CLEARN", "learned")
        yield running


async def test_a_forgotten_documents_text_leaves_every_file(lore: Lore, home: Path) -> None:
    vault = markdown_file(
        lore, "FVAULT", "vault.md", "# Vault\n\nThe vault opens with the word Quillfeather.\n"
    )
    await lore.dm("UFAY", files=[vault])
    asked = await lore.dm("UFAY", "which word opens the vault?")
    assert "Quillfeather" in only_reply(lore, "DUFAY", asked).text
    assert files_with(home, "Quillfeather"), "the test looks in the right place"
    passes = lore.runtime.services.scrubber.passes
    await lore.dm("UFAY", "forget vault.md")
    assert await scrubbed(lore, home, "Quillfeather", passes) == []
    asked = await lore.dm("UFAY", "which word opens the vault?")
    assert "Quillfeather" not in only_reply(lore, "DUFAY", asked).text


async def test_a_learned_message_deleted_in_slack_leaves_every_file(lore: Lore, home: Path) -> None:
    await say(lore, "CLEARN", "UFAY", "The standup moved to 9:30.")
    asked = await lore.mention("CLEARN", "UFAY", "learn this channel")
    assert "Done reading" in lore.said("CLEARN", asked)
    posted = await say(lore, "CLEARN", "UFAY", "Temporary door code: Marzipanwolf 2231.")
    asked = await lore.mention("CLEARN", "UGUS", "what is the temporary door code?")
    assert "Marzipanwolf" in lore.said("CLEARN", asked)
    assert files_with(home, "Marzipanwolf")
    passes = lore.runtime.services.scrubber.passes
    await delete(lore, "CLEARN", posted)
    await lore.settle()
    assert await scrubbed(lore, home, "Marzipanwolf", passes) == []
    asked = await lore.mention("CLEARN", "UGUS", "what is the temporary door code?")
    assert "Marzipanwolf" not in lore.said("CLEARN", asked)


async def test_a_deleted_indexs_text_leaves_every_file(lore: Lore, home: Path) -> None:
    await lore.mention("CLEARN", "UGUS", "create an index called plans")
    await lore.mention("CLEARN", "UGUS", "make plans the default")
    plans = markdown_file(lore, "FPLANS", "plans.md", "# Plans\n\nWe will acquire Pelicanzine next spring.\n")
    await lore.mention("CLEARN", "UGUS", "add this doc", files=[plans])
    assert files_with(home, "Pelicanzine")
    passes = lore.runtime.services.scrubber.passes
    asked = await lore.mention("CLEARN", "UGUS", "delete the plans index")
    confirm = next(r for r in lore.replies("CLEARN", asked) if "confirm_delete_index" in str(r.blocks))
    assert await lore.press("UGUS", "CLEARN", confirm, "confirm_delete_index") == 200
    assert await scrubbed(lore, home, "Pelicanzine", passes) == []
