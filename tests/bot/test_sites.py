"""Sites by chat, in the shell (the same router as Slack): crawl with live progress and a
summary, status, refresh on a schedule, stop, forget; a refused address is said plainly."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.app.settings import Settings
from bot.chat.runtime import open_runtime
from tests.bot.test_shell import Terminal
from tests.support.site import Site


@pytest.fixture
async def terminal(tmp_path: Path) -> AsyncIterator[Terminal]:
    settings = Settings(
        _env_file=None,
        lore_home=tmp_path / "home",
        database_url=None,
        chroma_host=None,
        openai_api_key=None,
        openai_base_url=None,
        slack_bot_token=None,
        lore_crawl_allow="127.0.0.1",
        lore_crawl_delay_seconds=0,
        lore_progress_seconds=0.05,
    )
    async with open_runtime(settings) as runtime:
        yield Terminal(runtime)


async def test_a_site_is_crawled_with_progress_then_managed_by_chat(terminal: Terminal) -> None:
    async with Site(pages=8) as site:
        start = site.url("/docs/")
        printed = await terminal.type("/in #eng", f"@lore add these docs to your memory: {start}")
        assert "lore> Crawling 127.0.0.1/docs into the eng index. I'll show progress here." in printed
        assert "lore> Indexing 127.0.0.1/docs…" in printed
        summary = printed[printed.index("lore> Done indexing") :]
        assert "10 pages indexed (10 new, 0 updated, 0 unchanged)" in summary
        assert "Skipped: 1 (robots.txt disallows it)." in summary

        answer = await terminal.type("what is some text about page 4?")
        assert f"<{site.url('/docs/page-4')}>" in answer

        status = await terminal.type("status")
        assert "127.0.0.1/docs: succeeded, 10 pages" in status and "refreshes daily" in status
        assert "I'll refresh 127.0.0.1/docs weekly." in await terminal.type("refresh 127.0.0.1/docs weekly")
        assert "refreshes weekly" in await terminal.type("status")

        refreshed = await terminal.type(f"refresh {start}")
        assert "10 pages indexed (0 new, 0 updated, 10 unchanged)" in refreshed
        assert "Nothing is being indexed for 127.0.0.1/docs right now." in await terminal.type(
            "stop indexing 127.0.0.1/docs"
        )
        forgot = await terminal.type("forget 127.0.0.1/docs")
        assert "Forgot 127.0.0.1/docs: removed its 10 pages and stopped refreshing it." in forgot
        assert "The eng index is empty" in await terminal.type("what's in your memory?")
        assert "I'm not indexing a site called “127.0.0.1/docs” here." in await terminal.type(
            "refresh 127.0.0.1/docs"
        )


async def test_a_private_address_is_refused_without_a_connection(terminal: Terminal) -> None:
    printed = await terminal.type("@lore add these docs to your memory: http://10.1.2.3/wiki/")
    assert "I can't crawl http://10.1.2.3/wiki/: that address is inside a private network" in printed
    assert "LORE_CRAWL_ALLOW" in printed
