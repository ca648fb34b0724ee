"""Uploads in Slack never hold up answers, and one bad file never hides the others
(issue 16): a question asked while a big upload is still coming in is answered at its
usual speed, even with a single answer slot; a message with a broken file and a good one
adds the good one and names the broken one with its reason.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from tests.bot.conftest import SlackBot, markdown_file, running_bot

DEPLOY = "# Deploying\n\nWe deploy the billing service every Tuesday with the blue-green pipeline.\n"
SLOW_SECONDS = 4.0


@pytest_asyncio.fixture
async def one_slot_bot(tmp_path: Path) -> AsyncIterator[SlackBot]:
    async with running_bot(tmp_path / "home", lore_answer_concurrency=1) as bot:
        bot.begin()
        yield bot


@pytest.mark.asyncio
async def test_a_question_is_answered_while_a_slow_upload_is_still_coming_in(one_slot_bot: SlackBot) -> None:
    bot = one_slot_bot
    bot.slack.add_channel("CASK", "ask")
    bot.slack.add_user("UZED", "zed")
    bot.slack.add_user("UYAN", "yan")
    await bot.mention("CASK", "UZED", "add this doc", files=[markdown_file(bot, "FDEP", "deploy.md", DEPLOY)])
    rows = "\n".join(f"{n},service-{n},{n * 7}" for n in range(200))
    bot.slack.add_file("FCSV", "big.csv", f"id,name,cost\n{rows}\n".encode(), "text/csv", "csv")
    bot.slack.slow_download("FCSV", SLOW_SECONDS)

    bot.begin()
    drop = bot.dm_event("UYAN", files=["FCSV"])
    assert await bot.deliver(drop, settle=False) == 200
    await bot.slack.wait_for_download("FCSV")  # the upload is coming in, and holds its download open
    question = bot.mention_event("CASK", "UZED", "when do we deploy the billing service?")
    sent = asyncio.get_running_loop().time()
    assert await bot.deliver(question, settle=False) == 200
    answer = await bot.slack.wait_until(
        lambda c: c.method == "chat.postMessage" and c.params.get("thread_ts") == question["ts"],
        SLOW_SECONDS * 2,
        "the answer",
    )
    assert answer.received_at - sent < SLOW_SECONDS / 2, "the answer did not wait for the upload"
    assert not [c for c in bot.calls("chat.postMessage") if c.params.get("channel") == "DUYAN"]

    await bot.settle()  # the upload still goes in
    assert "I added big.csv to your personal index" in bot.said("DUYAN", drop["ts"])


@pytest.mark.asyncio
async def test_one_broken_file_is_named_and_the_good_one_added(one_slot_bot: SlackBot) -> None:
    bot = one_slot_bot
    bot.slack.add_user("UXIA", "xia")
    bot.slack.add_channel("CMIX", "mix")
    good = markdown_file(bot, "FGOOD", "deploy.md", DEPLOY)
    bot.slack.add_file(
        "FBROKEN", "q3-report.pdf", b"%PDF-1.7\n\x00\x01 not really a pdf", "application/pdf", "pdf"
    )

    dropped = await bot.dm("UXIA", files=["FBROKEN", good])
    said = bot.said("DUXIA", dropped)
    assert "I couldn't read q3-report.pdf: " in said and "damaged" in said
    assert "I added deploy.md to your personal index." in said
    asked = await bot.dm("UXIA", "when do we deploy the billing service?")
    assert "deploy.md" in bot.said("DUXIA", asked)

    bot.begin()  # the same in a channel, with a mention
    mixed = await bot.mention("CMIX", "UXIA", "add these files", files=["FBROKEN", good])
    lines = [r.text for r in bot.replies("CMIX", mixed)]
    assert any(line.startswith("I couldn't read q3-report.pdf: ") for line in lines), lines
    assert any(line.startswith("Added *deploy.md* to the *mix* index") for line in lines), lines
