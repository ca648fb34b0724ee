"""Mention and mrkdwn injection (findings 9 and 12, the bot's side): whatever a user, a
document, an API caller or the model supplies reaches Slack with `&`, `<` and `>` escaped
(or, in a model's markdown, with Slack's tokens broken), and links cannot be broken out of.

Each attack goes in through a real entry point (a signed Slack event, the HTTP API, the fake
model) and the assertion is on what the fake Slack Web API received.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from tests.fakes.openai_server import Reply as ModelReply
from tests.security.conftest import Lore, raw_mentions, running_lore

pytestmark = pytest.mark.asyncio(loop_scope="module")

LINK = re.compile(r"<([^<>|]*)\|([^<>]*)>")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def lore(tmp_path_factory: Any) -> AsyncIterator[Lore]:
    async with running_lore(tmp_path_factory.mktemp("lore-mentions")) as running:
        yield running


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def gpt(tmp_path_factory: Any) -> AsyncIterator[Lore]:
    async with running_lore(tmp_path_factory.mktemp("lore-mentions-llm"), llm=True) as running:
        yield running


def link_targets(text: str) -> list[str]:
    return [m.group(1) for m in LINK.finditer(text)]


async def test_a_file_named_like_a_mention_is_posted_escaped(lore: Lore) -> None:
    lore.begin()
    lore.slack.add_user("UMAL", "mallory")
    lore.slack.add_file(
        "FMAL1", "<!channel> roadmap.md", b"# Roadmap\n\nShip the bridge in May.\n", "text/markdown"
    )
    await lore.dm("UMAL", files=["FMAL1"])
    lore.slack.add_channel("CMAL", "mal")
    lore.slack.add_file("FMAL2", "<!here> <@UBOSS> <#CGEN> plan.md", b"# Plan\n\nNothing.\n", "text/markdown")
    await lore.mention("CMAL", "UMAL", "add this doc to your memory", files=["FMAL2"])
    await lore.mention("CMAL", "UMAL", "what's in your memory")
    posted = lore.posted()
    assert "roadmap.md" in posted and "plan.md" in posted
    assert raw_mentions(posted) == []
    assert "&lt;!channel&gt; roadmap.md" in posted


async def test_api_supplied_urls_authors_and_names_cannot_break_out_of_a_citation(lore: Lore) -> None:
    lore.begin()
    status, _ = await lore.api("POST", "/v1/indexes", json_body={"name": "handbook-mal"})
    assert status == 201
    hostile = {
        "name": "<#CGEN|general> deploy notes",
        "text": "Deploys of the zephyr service happen every Thursday at noon after the freeze.",
        "url": "https://docs.example.com/deploy|<!channel>><!everyone>",
        "author": "<@UCEO> & <!subteam^S01|admins>",
        "context_type": "technical",
        "content_domain": "engineering",
        "document_category": "runbook",
    }
    status, body = await lore.api("POST", "/v1/indexes/handbook-mal/documents/text", json_body=hostile)
    assert status in (200, 201), body
    script = {**hostile, "name": "script notes", "url": "javascript:alert(document.cookie)"}
    script["text"] = "The zephyr service freeze lasts until Thursday noon every week."
    status, body = await lore.api("POST", "/v1/indexes/handbook-mal/documents/text", json_body=script)
    assert status == 400, body  # a document's link is a web address or nothing
    lore.slack.add_channel("CCITE", "cite")
    lore.slack.add_user("UCITE", "cite")
    await lore.mention("CCITE", "UCITE", "enable the handbook-mal index")
    ts = await lore.mention("CCITE", "UCITE", "when do zephyr deploys happen?")
    said = lore.said("CCITE", ts)
    assert "zephyr" in said
    posted = lore.posted()
    assert raw_mentions(posted) == []
    targets = link_targets(said)
    assert targets, said
    for target in targets:
        assert target.startswith(("http://", "https://", "mailto:")), target
        assert not re.search(r"[\s<>|]", target), target
    assert not any("javascript:" in t for t in targets)


async def test_a_streamed_model_reply_cannot_mention_anyone(gpt: Lore) -> None:
    gpt.begin()
    assert gpt.llm is not None
    gpt.llm.enqueue(ModelReply("<!channel> <!here> heads up <@U0CEO> see <#C0GEN> and <!subteam^S1> now"))
    gpt.slack.add_channel("CGPT", "gpt")
    gpt.slack.add_user("UGPT", "gpt")
    ts = await gpt.mention("CGPT", "UGPT", "say something loud")
    assert "heads up" in gpt.said("CGPT", ts)
    assert raw_mentions(gpt.posted()) == []


async def test_a_posted_model_reply_cannot_mention_anyone(gpt: Lore) -> None:
    gpt.begin()
    assert gpt.llm is not None
    gpt.slack.fail("chat.startStream", "not_allowed_token_type")
    gpt.llm.enqueue(ModelReply("<!everyone> this is <@U0CEO> speaking & <#C0GEN|general> too"))
    gpt.slack.add_channel("CGPT2", "gpt2")
    gpt.slack.add_user("UGPT2", "gpt2")
    ts = await gpt.mention("CGPT2", "UGPT2", "say something loud again")
    assert "speaking" in gpt.said("CGPT2", ts)
    assert raw_mentions(gpt.posted()) == []
