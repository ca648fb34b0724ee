"""Rate limits are part of safety: an answer survives a 429 on any of the calls that post it
(chat.postMessage, chat.startStream / appendStream / stopStream, chat.update), and one that
Slack keeps refusing is posted whole rather than lost.

The fake Slack answers the next call(s) to a method with HTTP 429 and `Retry-After: 0`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

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
    said = gpt.said(channel, ts)
    assert "Step 1:" in said and "platform 24 after the checks pass." in said


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
    [reply] = gpt.replies("CRLUPD", ts)
    assert "Step 1:" in reply.text and "platform 24 after the checks pass." in reply.text


async def test_a_stream_slack_keeps_refusing_is_posted_whole(gpt: Lore) -> None:
    gpt.begin()
    assert gpt.llm is not None
    gpt.llm.enqueue(ModelReply(LONG))
    gpt.slack.add_channel("CRLLOST", "rllost")
    gpt.slack.add_user("URL4", "rl4")
    gpt.slack.rate_limit("chat.appendStream", times=5)
    ts = await gpt.mention("CRLLOST", "URL4", "how does the deploy train work, once more?")
    posts = [c for c in gpt.calls("chat.postMessage") if c.ok and c.params.get("thread_ts") == ts]
    whole = [p for p in posts if "platform 24 after the checks pass." in str(p.params.get("blocks"))]
    assert whole, "the answer was posted whole after its stream broke"
    assert "Step 1:" in str(whole[0].params.get("blocks"))
