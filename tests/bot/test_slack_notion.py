"""Notion from Slack, through signed requests into the real Bolt app against the fake Notion:
"connect notion" posts a button that opens Notion's modal (the integration's secret); "add
our Notion to the handbook index" syncs with progress in the thread; an answer cites the
Notion page of the toggle it quotes; "list notion pages" names what is shared; members may
not connect or attach; the modal checks its fields; no secret reaches Slack or a log."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest
import pytest_asyncio
from sqlalchemy import update

from bot.app.audit import AuditFilter
from bot.app.settings import Settings
from storage.models import SlackGroup
from storage.repositories.slack_groups import SlackGroupRepository
from storage.values import utcnow
from tests.bot import connector_modals
from tests.bot.conftest import BOT_TOKEN, SIGNING_SECRET, TEAM, SlackBot
from tests.bot.connector_modals import ADMIN, MEMBER, Json, connector_bot, everything_slack_saw, submit
from tests.fakes.notion_server import TOKEN, FakeNotion, Seeded, seed


@pytest_asyncio.fixture
async def notion() -> AsyncIterator[tuple[FakeNotion, Seeded]]:
    async with FakeNotion() as fake:
        yield fake, seed(fake)


@pytest_asyncio.fixture
async def bot(tmp_path: Path) -> AsyncIterator[SlackBot]:
    async with connector_bot(tmp_path / "home", "CENG", "eng", lore_notion_requests_per_second=0) as running:
        yield running


async def open_modal(bot: SlackBot, user: str) -> tuple[str, Json]:
    return await connector_modals.open_modal(bot, user, "CENG", "notion", "Notion")


async def test_an_admin_connects_notion_syncs_the_workspace_and_gets_cited_answers(
    bot: SlackBot, notion: tuple[FakeNotion, Seeded], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    fake, seeded = notion
    asked, view = await open_modal(bot, ADMIN)
    await submit(bot, ADMIN, view, url=fake.base_url, token=TOKEN)
    connected = bot.replies("CENG", asked)[-1].text
    assert connected.startswith("Connected Notion at *127.0.0.1* as Lore in Acme (")
    assert "(integration token …wxyz)" in connected and "“add our Notion to the <name> index”" in connected
    assert "Scratchpad, Engineering Handbook, " in connected and "Ledger database" not in connected, "no rows"
    listed = await bot.mention("CENG", ADMIN, "list notion pages")
    assert f"• *{seeded.handbook.id}* — Engineering Handbook" in bot.said("CENG", listed)

    refused = await bot.mention("CENG", MEMBER, "add our Notion to the handbook index")
    assert bot.said("CENG", refused).startswith("Only workspace admins")
    added = await bot.mention("CENG", ADMIN, "add our Notion to the handbook index")
    queued, *_, summary = bot.replies("CENG", added)
    assert queued.text == (
        "I created the shared *handbook* index and enabled it here. "
        "Syncing everything shared with Lore in *Notion* into the *handbook* index. I'll show progress here."
    )
    assert summary.text.startswith("Done indexing *Notion workspace* in "), summary.text

    question = await bot.mention("CENG", ADMIN, "when does the payments on-call rotation hand over?")
    answer = bot.said("CENG", question)
    assert "09:30" in answer and f"<{fake.page_url(seeded.payments_runbook)}|" in answer, answer
    for secret in (TOKEN, TOKEN[-10:]):
        assert secret not in everything_slack_saw(bot) and secret not in caplog.text


async def test_the_notion_modal_checks_its_fields(bot: SlackBot, notion: tuple[FakeNotion, Seeded]) -> None:
    fake, _ = notion
    asked, view = await open_modal(bot, ADMIN)
    _, body = await submit(bot, ADMIN, view, url="notion.example.com", token="")
    assert json.loads(body)["errors"] == {
        "url": "Enter an https:// address, or leave it empty for Notion's API.",
        "token": "Paste the integration's secret (it starts with ntn_ or secret_).",
    }
    _, body = await submit(bot, ADMIN, view, url=fake.base_url, token="ntn_wrong")
    assert "errors" not in body, "the modal closes; what Notion said is in the thread"
    failed = bot.replies("CENG", asked)[-1].text
    assert failed.startswith(
        "I couldn't connect Notion: Notion at 127.0.0.1 refused the integration token"
    ), failed
    assert await bot.runtime.services.connections.for_tenant(TEAM) == []


async def test_a_notion_attachment_restricted_to_a_channel_reaches_its_members_only(
    bot: SlackBot, notion: tuple[FakeNotion, Seeded]
) -> None:
    """Issue 41: Notion says nobody's permissions; an admin restricts its attachment to #eng.
    A member of #eng reads it in private and in #eng, nobody else anywhere; a failed read of
    #eng's members lets nobody through; lifting the restriction restores the index's rule."""
    fake, _ = notion
    outsider = "UOUTSIDE"
    bot.slack.add_user(outsider, "outsider")
    bot.slack.add_channel("CGEN", "general")
    bot.slack.join("CENG", ADMIN, MEMBER)
    _, view = await open_modal(bot, ADMIN)
    await submit(bot, ADMIN, view, url=fake.base_url, token=TOKEN)
    await bot.mention("CENG", ADMIN, "add our Notion to the handbook index")
    question = "when does the payments on-call rotation hand over?"

    async def reads(user: str, channel: str | None = None) -> bool:
        if channel is None:
            asked = await bot.dm(user, question)
            return "09:30" in bot.said(f"D{user}", asked)
        asked = await bot.mention(channel, user, question)
        return "09:30" in bot.said(channel, asked)

    for user in (MEMBER, outsider):
        await bot.dm(user, "enable the handbook index")
    await bot.mention("CGEN", outsider, "enable the handbook index")
    assert await reads(outsider), "unrestricted, whoever may search the index reads it"

    refused = await bot.mention("CGEN", outsider, "restrict the notion attachment to <#CENG|eng>")
    assert bot.said("CGEN", refused).startswith("Only workspace admins")
    unlinked = await bot.mention("CENG", ADMIN, "restrict the notion attachment to #eng")
    assert bot.said("CENG", unlinked).startswith("Name the channel or user group so Slack links it")
    restricted = await bot.mention("CENG", ADMIN, "restrict the notion attachment to <#CENG|eng>")
    said = bot.said("CENG", restricted)
    assert said.startswith(
        "Only members of #eng now read what *Notion workspace* brings to the *handbook* index: in private, "
        "and in #eng ("
    ), said
    assert [c.params["channel"] for c in bot.calls("conversations.members")] == ["CENG"]

    assert await reads(MEMBER) and await reads(MEMBER, "CENG")
    assert not await reads(outsider) and not await reads(outsider, "CGEN")

    bot.slack.fail("conversations.members", "missing_scope")
    failed = await bot.dm(ADMIN, "refresh permissions")
    told = bot.said(f"D{ADMIN}", failed)
    assert "members of 1 group" in told and "missing_scope for channel:CENG" in told, told
    assert not await reads(MEMBER) and not await reads(MEMBER, "CENG"), "fail closed"
    again = await bot.dm(ADMIN, "refresh permissions")
    assert "the members of 1 group." in bot.said(f"D{ADMIN}", again), "a restriction's group is refreshed"
    assert await reads(MEMBER), "read again, let through again"

    lifted = await bot.mention("CENG", ADMIN, "unrestrict the notion attachment")
    assert bot.said("CENG", lifted).startswith(
        "*Notion workspace* in the *handbook* index is no longer restricted"
    )
    assert await reads(outsider) and await reads(outsider, "CGEN")
    log = bot.runtime.services.audit.log
    actions = [e.action for e in log.page(TEAM, AuditFilter()) if e.action.startswith("source.")]
    assert actions == ["source.unrestrict", "source.restrict"]


async def test_a_bare_worker_reads_a_restrictions_slack_user_group_again(
    tmp_path: Path, notion: tuple[FakeNotion, Seeded]
) -> None:
    """Issue 41's restriction to a Slack user group, with the bot running no jobs of its own
    (`LORE_JOBS_IN_PROCESS=false`): a `lore worker` process alone reads the group again when
    it is due, so a newcomer to the group reads what it restricts."""
    fake, _ = notion
    async with connector_bot(
        tmp_path / "home", "CENG", "eng", lore_notion_requests_per_second=0, lore_jobs_in_process=False
    ) as bot:
        bot.slack.add_user("UNEW", "newcomer")
        bot.slack.add_usergroup("SOPS", [MEMBER])
        _, view = await open_modal(bot, ADMIN)
        await submit(bot, ADMIN, view, url=fake.base_url, token=TOKEN)
        services = bot.runtime.services
        worker = start_worker(services.settings)  # runs the sync job "add" queues, too
        try:
            await bot.mention("CENG", ADMIN, "add our Notion to the handbook index")
            await bot.mention("CENG", ADMIN, "restrict the notion attachment to <!subteam^SOPS|@ops>")
            groups = SlackGroupRepository(services.db)
            assert groups.groups_of(TEAM, MEMBER) == {"usergroup:SOPS"}
            assert groups.groups_of(TEAM, "UNEW") == set()
            reads = len(bot.calls("usergroups.users.list"))
            bot.slack.add_usergroup("SOPS", [MEMBER, "UNEW"])
            with services.db.session() as session:  # read a day ago: due again
                session.exec(update(SlackGroup).values(read_at=utcnow() - timedelta(days=1)))
            deadline = time.monotonic() + 100  # the worker checks 10 s after it starts, then every minute
            while groups.groups_of(TEAM, "UNEW") == set() and time.monotonic() < deadline:
                assert worker.poll() is None, worker.communicate()
                await asyncio.sleep(0.5)
        finally:
            worker.terminate()
            worker.communicate(timeout=30)
        assert groups.groups_of(TEAM, "UNEW") == {"usergroup:SOPS"}
        assert [c.params["usergroup"] for c in bot.calls("usergroups.users.list")][reads:] == ["SOPS"]


def start_worker(settings: Settings) -> subprocess.Popen[bytes]:
    """`lore worker` on the bot's home, talking to its fakes."""
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "OPENAI_", "LORE_", "DATABASE_"))
    }
    assert settings.lore_secret_key is not None
    env.update(
        LORE_HOME=str(settings.lore_home),
        SLACK_BOT_TOKEN=BOT_TOKEN,
        SLACK_SIGNING_SECRET=SIGNING_SECRET,
        SLACK_API_URL=settings.slack_api_url,
        LORE_SECRET_KEY=settings.lore_secret_key.get_secret_value(),
        LORE_CRAWL_ALLOW="127.0.0.1",
        LORE_NOTION_REQUESTS_PER_SECOND="0",
        LORE_JOB_WORKERS="1",
    )
    lore = str(Path(sys.executable).with_name("lore"))
    return subprocess.Popen([lore, "worker"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
