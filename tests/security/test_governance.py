"""Governance (issue 12, finding 8): who may change, forget and manage what, enforced the same
on every surface by the use cases over the permission table (`storage.access`).

Before: from a channel where `forget` was refused the same user could refresh, stop or
unschedule the site; anyone could forget anyone's documents in a shared index; a non-admin
could forget Confluence (see tests/bot/test_slack_confluence.py for that one).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio

from tests.bot.conftest import SlackBot, markdown_file, only_reply, running_bot
from tests.support.site import Site


@pytest_asyncio.fixture
async def bot(tmp_path: Path) -> AsyncIterator[SlackBot]:
    async with running_bot(
        tmp_path / "home",
        lore_crawl_allow="127.0.0.1",
        lore_crawl_delay_seconds=0,
        lore_progress_seconds=0.05,
    ) as running:
        yield running


async def say(bot: SlackBot, channel: str, user: str, text: str, **files: str) -> str:
    asked = await bot.mention(channel, user, text, files=list(files.values()))
    return bot.said(channel, asked)


async def test_a_site_is_managed_only_from_where_its_documents_may_be_forgotten(bot: SlackBot) -> None:
    bot.slack.add_channel("CDOCS", "docs")
    bot.slack.add_channel("CELSE", "elsewhere")
    bot.slack.add_user("UDOC", "doc")
    bot.slack.add_user("UEVE", "eve")
    async with Site(pages=3) as site:
        start = site.url("/docs/")
        assert "Done indexing" in await say(bot, "CDOCS", "UDOC", f"add these docs to your memory: <{start}>")
        await say(bot, "CELSE", "UEVE", "enable the docs index")  # a public channel's index reads anywhere
        for attempt in (
            "refresh 127.0.0.1/docs",
            "refresh 127.0.0.1/docs never",
            "stop indexing 127.0.0.1/docs",
        ):
            said = await say(bot, "CELSE", "UEVE", attempt)
            assert said.startswith("The docs index belongs to its channel"), (attempt, said)
        assert (await say(bot, "CELSE", "UEVE", "forget 127.0.0.1/docs")).startswith("The docs index belongs")
        sources = await bot.runtime.services.jobs.list_docsources(
            bot.runtime.services.indexes.list_for_tenant("T0001")[0]
        )
        assert [s.schedule for s in sources] == ["daily"]
        assert (await say(bot, "CDOCS", "UEVE", "refresh 127.0.0.1/docs weekly")).startswith(
            "I'll refresh *127.0.0.1/docs* weekly"
        )


async def test_in_a_shared_index_people_forget_only_what_they_added(bot: SlackBot) -> None:
    bot.slack.add_channel("CLIB", "library-talk")
    bot.slack.add_user("UOWN", "owner")
    bot.slack.add_user("UANA", "ana")
    bot.slack.add_user("UBEN", "ben")
    bot.slack.add_user("UADM", "admin", is_admin=True)
    await say(bot, "CLIB", "UOWN", "create an index called library")
    await say(bot, "CLIB", "UOWN", "make library the default")
    await say(
        bot, "CLIB", "UANA", "add this doc", f=markdown_file(bot, "FANA", "ana.md", "# Ana\n\nAna's notes.\n")
    )
    await say(
        bot, "CLIB", "UBEN", "add this doc", f=markdown_file(bot, "FBEN", "ben.md", "# Ben\n\nBen's notes.\n")
    )

    refused = await say(bot, "CLIB", "UBEN", "forget ana.md")
    assert refused.startswith(
        "Only the person who created the library index, whoever added that, or an admin"
    )
    assert (await say(bot, "CLIB", "UBEN", "forget ben.md")) == "Forgot *ben.md* (from the *library* index)."
    assert (await say(bot, "CLIB", "UADM", "forget ana.md")) == "Forgot *ana.md* (from the *library* index)."
    asked = await bot.mention("CLIB", "UBEN", "delete the library index")
    assert only_reply(bot, "CLIB", asked).text.startswith("Only the person who created the library index")
