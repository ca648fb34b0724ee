"""`LLM_VERIFY` through the running bot: an answer the citation check passes goes back to the
model to be judged claim by claim, and one it finds contradicted reaches the thread as the
documents' own words, with the notice, not as the model's answer."""

from __future__ import annotations

from pathlib import Path

from bot.chat.messages import notice as worded
from knowledge.answering.verification import VERIFY_PROMPT
from knowledge.search.notices import Notice, NoticeKind
from tests.bot.conftest import markdown_file, only_reply, running_bot
from tests.fakes.openai_server import Reply as LLMReply

RUNBOOK = """# Deploy runbook

## Rolling back

To roll back a deploy, switch the load balancer back to the previous colour; it takes about
two minutes.
"""


async def test_a_claim_the_model_finds_contradicted_is_not_posted(tmp_path: Path) -> None:
    async with running_bot(tmp_path / "home", llm=True, llm_verify=True) as bot:
        assert bot.llm is not None
        bot.slack.add_channel("COPS", "ops")
        bot.slack.add_user("UMEM", "max")
        file = markdown_file(bot, "FRUN", "runbook.md", RUNBOOK)
        await bot.mention("COPS", "UMEM", "add this doc", files=[file])

        wrong = "To roll back a deploy, switch the load balancer forward to the next colour; it takes about two minutes [1]."
        bot.llm.enqueue(LLMReply(wrong), LLMReply("1: CONTRADICTED"))
        bot.begin()
        asked = await bot.mention("COPS", "UMEM", "how do we roll back a bad deploy?")
        answering, judging = bot.chat_requests
        assert (
            answering.messages[0]["content"] != VERIFY_PROMPT
            and judging.messages[0]["content"] == VERIFY_PROMPT
        )
        assert "forward to the next colour" in judging.messages[1]["content"]
        posted = only_reply(bot, "COPS", asked).text
        assert "forward" not in posted and "previous colour" in posted
        assert worded(Notice(NoticeKind.UNVERIFIED)).split(",")[0] in posted
