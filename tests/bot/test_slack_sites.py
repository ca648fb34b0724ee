"""A whole site added by a mention in Slack: the thread gets one progress message that
Lore edits in place (chat.update, no faster than the progress setting, carrying on past a
rate-limited update), then a summary; the answer cites the crawled page; "status" and
"forget" work from the channel."""

from __future__ import annotations

import itertools
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio

from tests.bot.conftest import SlackBot, running_bot
from tests.support.site import Site

PROGRESS_SECONDS = 0.05


@pytest_asyncio.fixture
async def crawling_bot(tmp_path: Path) -> AsyncIterator[SlackBot]:
    async with running_bot(
        tmp_path / "home",
        lore_crawl_allow="127.0.0.1",
        lore_crawl_delay_seconds=0,
        lore_crawl_concurrency=1,
        lore_progress_seconds=PROGRESS_SECONDS,
    ) as bot:
        bot.begin()
        yield bot


def _counts(text: str) -> tuple[int, int]:
    found = re.fullmatch(r"Indexing 127\.0\.0\.1/docs… (\d+)/(\d+) pages", text)
    assert found, text
    return int(found[1]), int(found[2])


async def test_a_site_added_by_mention_shows_progress_in_place_then_a_summary(crawling_bot: SlackBot) -> None:
    bot = crawling_bot
    bot.slack.add_channel("CDOCS", "handbook")
    bot.slack.add_user("UDOC", "doc")
    bot.slack.rate_limit("chat.update")  # the first edit is refused, and retried after its Retry-After
    async with Site(pages=8) as site:
        start = site.url("/docs/")
        asked = await bot.mention("CDOCS", "UDOC", f"add these docs to your memory: <{start}>")

        queued, progress, summary = bot.replies("CDOCS", asked)
        assert queued.text == "Crawling *127.0.0.1/docs* into the *handbook* index. I'll show progress here."

        edits = [c for c in bot.calls("chat.update") if c.params["ts"] == progress.ts]
        assert edits[0].status == 429 and len(edits) >= 3
        counted = [str(c.params["text"]) for c in edits if c.ok and str(c.params["text"]).endswith("pages")]
        shown = [_counts(text) for text in counted]
        assert shown == sorted(shown), "progress never goes backwards"
        assert shown[-1] == (13, 13) and _counts(progress.text) == (13, 13)
        assert len(set(shown)) == len(shown), "an unchanged count is not sent again"
        gaps = [b.received_at - a.received_at for a, b in itertools.pairwise(edits) if a.ok]
        assert min(gaps) >= PROGRESS_SECONDS * 0.8, "edits are paced by the progress setting"

        lines = summary.text.splitlines()
        assert re.fullmatch(
            r"Done indexing \*127\.0\.0\.1/docs\* in \d+(\.\d)? s: 10 pages indexed "
            r"\(10 new, 0 updated, 0 unchanged\), \d+ new passages\.",
            lines[0],
        ), lines[0]
        assert lines[1:] == [
            "Skipped: 1 (robots.txt disallows it).",
            "Broken links: 2 (the page answered 404 or 410).",  # /docs/ links to page-9 and page-10
            "Ask me anything about 127.0.0.1/docs.",
        ]

        question = await bot.mention("CDOCS", "UDOC", "what is some text about page 4?")
        assert f"<{site.url('/docs/page-4')}|" in bot.said("CDOCS", question)

        status = await bot.mention("CDOCS", "UDOC", "status")
        assert "*127.0.0.1/docs*: succeeded, 10 pages of 13 found" in bot.said("CDOCS", status)

        forgot = await bot.mention("CDOCS", "UDOC", "forget 127.0.0.1/docs")
        assert bot.said("CDOCS", forgot) == (
            "Forgot *127.0.0.1/docs*: removed its 10 pages and stopped refreshing it."
        )
