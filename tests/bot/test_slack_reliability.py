"""An answer is never lost on its way to Slack: blocks Slack refuses become plain text,
a stream that breaks half way is posted anew whole, a 429 on the first post still delivers
the answer, and nothing beyond Slack's 50 blocks per message is dropped."""

from __future__ import annotations

import pytest

from tests.bot.conftest import SlackBot, markdown_file
from tests.fakes.openai_server import Reply as LLMReply

pytestmark = pytest.mark.asyncio(loop_scope="module")

PAGER = "# Pager\n\nThe pager escalates to the duty manager after fifteen minutes of silence.\n"


def paragraphs(count: int) -> str:
    sentence = "The incident review meets every Friday to read the week's postmortems together. "
    return "\n\n".join(f"Point {n}: " + sentence * 2 for n in range(count))


def posted_words(bot: SlackBot, channel: str) -> str:
    """Every word Lore posted or streamed in a channel (markdown, blocks and text)."""
    parts = []
    for call in bot.calls():
        params = call.params
        if not call.ok or params.get("channel") != channel or not call.method.startswith("chat."):
            continue
        parts.append(str(params.get("text") or ""))
        parts.append(str(params.get("markdown_text") or ""))
        parts.extend(str(c.get("text", "")) for c in params.get("chunks") or [])
        for block in params.get("blocks") or []:
            parts.append(str(block.get("text", "")) if block["type"] == "markdown" else str(block))
    return " ".join(" ".join(parts).split())


async def test_blocks_slack_refuses_are_posted_as_text(bot: SlackBot) -> None:
    bot.slack.add_channel("CBLOCKS", "blocks")
    bot.slack.add_user("UBEN", "ben")
    await bot.mention(
        "CBLOCKS", "UBEN", "add this doc", files=[markdown_file(bot, "FPAGER", "pager.md", PAGER)]
    )
    bot.begin()
    bot.slack.fail("chat.postMessage", "invalid_blocks")
    asked = await bot.mention("CBLOCKS", "UBEN", "when does the pager escalate?")
    refused, kept = [c for c in bot.calls("chat.postMessage") if c.params.get("thread_ts") == asked]
    assert not refused.ok and refused.params["blocks"]
    assert kept.ok and "blocks" not in kept.params
    assert "fifteen minutes of silence" in kept.params["text"] and "pager.md" in kept.params["text"]
    assert bot.calls("chat.postEphemeral") == []  # no error: the answer went out


async def test_a_rate_limited_first_post_still_delivers_the_answer(bot: SlackBot) -> None:
    bot.slack.add_channel("C429", "limits")
    bot.slack.add_user("ULIM", "lim")
    await bot.mention(
        "C429", "ULIM", "add this doc", files=[markdown_file(bot, "FPAGER2", "pager.md", PAGER)]
    )
    bot.begin()
    bot.slack.rate_limit("chat.postMessage")
    asked = await bot.mention("C429", "ULIM", "who does the pager escalate to?")
    delivered = [c for c in bot.calls("chat.postMessage") if c.ok and c.params.get("thread_ts") == asked]
    assert delivered and "duty manager" in posted_words(bot, "C429")


async def test_a_stream_that_breaks_half_way_is_posted_again(gpt: SlackBot) -> None:
    assert gpt.llm is not None
    gpt.slack.add_channel("CBREAK", "breaks")
    gpt.slack.add_user("UBEA", "bea")
    text = paragraphs(12)
    gpt.llm.enqueue(LLMReply(text))
    gpt.slack.fail("chat.appendStream", "message_not_in_streaming_state")
    asked = await gpt.mention("CBREAK", "UBEA", "what happens at the incident review?")
    [started] = gpt.calls("chat.startStream")
    assert started.ok
    [again] = [c for c in gpt.calls("chat.postMessage") if c.params.get("thread_ts") == asked]
    markdown = "".join(b["text"] for b in again.params["blocks"] if b["type"] == "markdown")
    assert " ".join(text.split()).startswith(" ".join(markdown.removesuffix("…").split()))
    actions = {e.get("action_id") for b in again.params["blocks"] for e in b.get("elements") or []}
    assert {"answer_feedback", "answer_more"} <= actions  # with its feedback, and the rest a press away
    assert gpt.calls("chat.postEphemeral") == []


async def test_a_stream_that_cannot_stop_is_posted_again_whole(gpt: SlackBot) -> None:
    assert gpt.llm is not None
    gpt.slack.add_channel("CSTOP", "stops")
    gpt.slack.add_user("USTO", "sto")
    text = paragraphs(3)
    gpt.llm.enqueue(LLMReply(text))
    gpt.slack.fail("chat.stopStream", "internal_error")
    asked = await gpt.mention("CSTOP", "USTO", "when does the incident review meet?")
    [again] = [c for c in gpt.calls("chat.postMessage") if c.params.get("thread_ts") == asked]
    markdown = "".join(b["text"] for b in again.params["blocks"] if b["type"] == "markdown")
    assert " ".join(markdown.split()) == " ".join(text.split())
