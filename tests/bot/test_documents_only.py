"""An index locked to its documents: wherever it is searched, answers come from it alone
(RAG_ONLY), whatever the conversation's answer mode; its owner or an admin decides."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio

from tests.bot.conftest import SlackBot, markdown_file, only_reply, running_bot
from tests.fakes.openai_server import Reply as LLMReply

NOTES = "# Release notes\n\nVersion 4.2 adds dark mode to the dashboard.\n"


@pytest_asyncio.fixture
async def gpt(tmp_path: Path) -> AsyncIterator[SlackBot]:
    async with running_bot(tmp_path / "home", llm=True) as bot:
        yield bot


async def test_a_documents_only_index_never_lets_the_model_answer_from_general_knowledge(
    gpt: SlackBot,
) -> None:
    gpt.slack.add_channel("CREL", "releases")
    gpt.slack.add_user("UADM", "ada", is_admin=True)
    gpt.slack.add_user("UMEM", "max")
    await gpt.mention("CREL", "UMEM", "add this doc", files=[markdown_file(gpt, "FREL", "notes.md", NOTES)])

    refused = await gpt.mention("CREL", "UMEM", "make the releases index documents only")
    assert only_reply(gpt, "CREL", refused).text.startswith("The releases index can't be used from here")
    locked = await gpt.mention("CREL", "UADM", "make the releases index documents only")
    assert only_reply(gpt, "CREL", locked).text.startswith(
        "Answers that draw on the *releases* index (this channel's index) now come from its documents alone"
    )
    await gpt.mention("CREL", "UADM", "use llm only mode here")  # the index's lock wins over the mode

    gpt.begin()
    asked = await gpt.mention("CREL", "UMEM", "what is the capital of the moon colony?")
    assert gpt.chat_requests == [], "no model call for what the documents don't say"
    assert "couldn't find anything" in only_reply(gpt, "CREL", asked).text

    unlocked = await gpt.mention("CREL", "UADM", "let the releases index use general knowledge")
    assert only_reply(gpt, "CREL", unlocked).text.startswith("Answers that draw on the *releases* index")
    assert gpt.llm is not None
    gpt.llm.enqueue(LLMReply("Lunaris, according to the stories."))
    gpt.begin()
    await gpt.mention("CREL", "UMEM", "what is the capital of the moon colony?")
    assert len(gpt.chat_requests) == 1
