"""Rate limits are part of safety: an answer survives a 429 on any of the calls that post it
(chat.postMessage, chat.startStream / appendStream / stopStream, chat.update), and one that
Slack keeps refusing is posted rather than lost. A long answer shows at a glance (at most
`VISIBLE_LINES` lines, from its start) with "Show more", which gives the presser all of it:
nothing of it is lost to the 429 either way.

The fake Slack answers the next call(s) to a method with HTTP 429 and `Retry-After: 0`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from knowledge import VISIBLE_LINES, display_lines
from tests.bot.conftest import Reply
from tests.fakes.openai_server import Reply as ModelReply
from tests.security.conftest import Lore, running_lore

pytestmark = pytest.mark.asyncio(loop_scope="module")

LONG = " ".join(
    f"Step {n}: the yellow deploy train leaves platform {n} after the checks pass." for n in range(1, 25)
)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def lore(tmp_path_factory: Any) -> AsyncIterator[Lore]:
    async with running_lore(tmp_path_factory.mktemp("lore-429")) as running:
        yield running


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def gpt(tmp_path_factory: Any) -> AsyncIterator[Lore]:
    async with running_lore(tmp_path_factory.mktemp("lore-429-llm"), llm=True) as running:
        yield running


def limited(bot: Lore, method: str) -> int:
    return sum(1 for c in bot.calls(method) if c.status == 429)


def has_more(reply: Reply) -> bool:
    return any(e.get("action_id") == "answer_more" for b in reply.blocks for e in b.get("elements", []))


async def glance_and_whole(bot: Lore, channel: str, user: str, ts: str) -> tuple[str, str]:
    """The answer as the thread shows it (its one message with "Show more"), and what
    "Show more" gives `user` (privately, in the thread). Starts a new window of calls."""
    [reply] = [r for r in bot.replies(channel, ts) if not r.private and has_more(r)]
    bot.begin()
    await bot.press(user, channel, reply, "answer_more")
    pages = [c for c in bot.calls("chat.postEphemeral") if c.ok and c.params.get("user") == user]
    assert pages and all(c.params.get("thread_ts") == ts for c in pages)
    whole = "".join(b["text"] for c in pages for b in c.params["blocks"] if b["type"] == "markdown")
    return reply.markdown, whole


def assert_glance_of_long(glance: str, whole: str) -> None:
    assert "Step 1:" in glance and "platform 24 after the checks pass." not in glance
    assert display_lines(glance) <= VISIBLE_LINES
    assert "".join(whole.split()) == "".join(LONG.split()), "Show more gives the whole answer"


async def test_an_extractive_answer_survives_a_429_on_posting(lore: Lore) -> None:
    lore.begin()
    lore.slack.add_user("URL1", "rl1")
    lore.slack.add_file(
        "FRL1", "trains.md", b"# Trains\n\nThe yellow train leaves at nine sharp.\n", "text/markdown"
    )
    await lore.dm("URL1", files=["FRL1"])
    lore.slack.rate_limit("chat.postMessage")
    ts = await lore.dm("URL1", "when does the yellow train leave?")
    assert limited(lore, "chat.postMessage") == 1
    assert "nine sharp" in lore.said("DURL1", ts)


@pytest.mark.parametrize("method", ["chat.startStream", "chat.appendStream", "chat.stopStream"])
async def test_a_streamed_answer_survives_a_429(gpt: Lore, method: str) -> None:
    gpt.begin()
    assert gpt.llm is not None
    gpt.llm.enqueue(ModelReply(LONG))
    channel = f"CRL{method.rsplit('.', 1)[1].upper()}"
    gpt.slack.add_channel(channel, channel.lower())
    gpt.slack.add_user("URL2", "rl2")
    gpt.slack.rate_limit(method)
    ts = await gpt.mention(channel, "URL2", "how does the deploy train work?")
    assert limited(gpt, method) == 1
    assert_glance_of_long(*await glance_and_whole(gpt, channel, "URL2", ts))


async def test_a_posted_and_updated_answer_survives_a_429_on_update(gpt: Lore) -> None:
    gpt.begin()
    assert gpt.llm is not None
    gpt.llm.enqueue(ModelReply(LONG))
    gpt.slack.add_channel("CRLUPD", "rlupd")
    gpt.slack.add_user("URL3", "rl3")
    gpt.slack.fail("chat.startStream", "not_allowed_token_type")
    gpt.slack.rate_limit("chat.update")
    ts = await gpt.mention("CRLUPD", "URL3", "how does the deploy train work, again?")
    assert limited(gpt, "chat.update") == 1
    assert len(gpt.replies("CRLUPD", ts)) == 1
    assert_glance_of_long(*await glance_and_whole(gpt, "CRLUPD", "URL3", ts))


async def test_a_stream_slack_keeps_refusing_is_posted_not_lost(gpt: Lore) -> None:
    gpt.begin()
    assert gpt.llm is not None
    gpt.llm.enqueue(ModelReply(LONG))
    gpt.slack.add_channel("CRLLOST", "rllost")
    gpt.slack.add_user("URL4", "rl4")
    gpt.slack.rate_limit("chat.appendStream", times=5)
    ts = await gpt.mention("CRLLOST", "URL4", "how does the deploy train work, once more?")
    assert limited(gpt, "chat.appendStream") >= 1
    posted = [c for c in gpt.calls("chat.postMessage") if c.ok and c.params.get("thread_ts") == ts]
    assert posted, "the answer was posted after its stream broke"
    assert_glance_of_long(*await glance_and_whole(gpt, "CRLLOST", "URL4", ts))
