"""Files shared in Slack: each gets its own outcome, and Slack Connect's file stubs (no URL,
`"file_access": "check_file_info"`) are completed with files.info."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio

from tests.bot.conftest import SlackBot, markdown_file, running_bot


@pytest_asyncio.fixture
async def bot(tmp_path: Path) -> AsyncIterator[SlackBot]:
    async with running_bot(tmp_path / "home") as running:
        yield running


async def test_one_broken_file_does_not_cost_the_good_one(bot: SlackBot) -> None:
    bot.slack.add_channel("CFILES", "files")
    bot.slack.add_user("UFIN", "fin")
    good = markdown_file(bot, "FGOOD", "deploys.md", "# Deploys\n\nWe deploy on Tuesdays at noon.\n")
    bot.slack.add_file("FBAD", "report.pdf", b"%PDF-1.7\n\x00\x01 not really a pdf", "application/pdf", "pdf")
    asked = await bot.mention("CFILES", "UFIN", "add these files to your memory", files=[good, "FBAD"])
    said = [r.text for r in bot.replies("CFILES", asked)]
    assert any(s.startswith("Added *deploys.md*") for s in said), said
    assert any("report.pdf" in s and s.startswith("I couldn't read") for s in said), said
    answered = await bot.mention("CFILES", "UFIN", "when do we deploy?")
    assert "Tuesdays at noon" in bot.said("CFILES", answered)


async def test_a_slack_connect_file_stub_is_fetched_through_files_info(bot: SlackBot) -> None:
    bot.slack.add_user("UCON", "connie")
    markdown_file(bot, "FSTUB", "partner-notes.md", "# Partner notes\n\nThe joint launch is on 12 March.\n")
    stub = {"id": "FSTUB", "mode": "file_access", "file_access": "check_file_info"}
    bot.slack.add_channel("DUCON", "", is_im=True, user="UCON")
    ts = bot.next_ts()
    bot.slack.add_message("DUCON", ts, "", "UCON", files=[stub])
    event = {
        "type": "message", "subtype": "file_share", "channel_type": "im", "user": "UCON", "text": "",
        "ts": ts, "channel": "DUCON", "event_ts": ts, "team": "T0001", "files": [stub],
    }  # fmt: skip
    assert await bot.deliver(event) == 200
    said = bot.said("DUCON", ts)
    assert "partner-notes.md" in said and "FSTUB" not in said, said
    assert [c.params["file"] for c in bot.slack.calls_to("files.info")] == ["FSTUB"]
