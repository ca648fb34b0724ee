"""`LLM_RERANK` through the running bot: a question in Slack costs one more, short, model call
that orders the sources, and the answer posted in the thread cites the model's first."""

from __future__ import annotations

import re
from pathlib import Path

from knowledge.judging.rerank import RERANK_PROMPT
from tests.bot.conftest import markdown_file, only_reply, running_bot
from tests.fakes.openai_server import Reply as LLMReply

RUNBOOK = """# Deploy runbook

## Deploying

We deploy the API every Tuesday at 10:00 UTC with the blue-green pipeline.

## Rolling back

To roll back a deploy, switch the load balancer back to the previous colour; it takes about
two minutes.

## Incidents

A failed deploy is a severity two incident: page the on-call engineer.
"""


async def test_the_model_orders_the_sources_before_it_answers(tmp_path: Path) -> None:
    async with running_bot(tmp_path / "home", llm=True, llm_rerank=8) as bot:
        assert bot.llm is not None
        bot.slack.add_channel("COPS", "ops")
        bot.slack.add_user("UMEM", "max")
        file = markdown_file(bot, "FRUN", "runbook.md", RUNBOOK)
        await bot.mention("COPS", "UMEM", "add this doc", files=[file])

        bot.llm.enqueue(LLMReply("2"), LLMReply("Switch the load balancer back to the previous colour [1]."))
        bot.begin()
        asked = await bot.mention("COPS", "UMEM", "how do we roll back a bad deploy of the API?")
        rerank, answering = bot.chat_requests
        assert rerank.messages[0]["content"] == RERANK_PROMPT
        ranked = re.findall(r'<source n="(\d+)" title="([^"]*)"', rerank.messages[1]["content"])
        first = re.search(r'<source n="1" title="([^"]*)"', answering.messages[-1]["content"])
        assert len(ranked) >= 2 and first is not None and first.group(1) == ranked[1][1]
        assert "previous colour" in only_reply(bot, "COPS", asked).text
