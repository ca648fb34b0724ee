"""Where Lore speaks unasked (a help channel) with a model: the documents alone, the model
judging first whether the message asks something the passages answer (one short call that
can keep Lore silent, never make it speak), and every claim verified by the model too."""

from __future__ import annotations

from knowledge.answering.answer import ResponseMode
from knowledge.engine import Request
from knowledge.judging.triage import TRIAGE_PROMPT
from tests.fakes.openai_server import FakeOpenAI, HttpError, Reply
from tests.knowledge.conftest import HANDBOOK, Stack, chat_model, md

ROLLBACK = "How long does a rollback take?"


async def asked(stack: Stack, llm: FakeOpenAI, unasked: bool = True) -> object:
    index = stack.index()
    await stack.ingestor.add(index, md("handbook.md", HANDBOOK))
    request = Request(
        [stack.fresh(index)],
        [{"role": "user", "content": ROLLBACK}],
        mode=ResponseMode.HYBRID,
        unasked=unasked,
    )
    assert request.mode == (ResponseMode.RAG_ONLY if unasked else ResponseMode.HYBRID)
    return await stack.knowledge(chat_model(llm)).ask(request)


def prompts(llm: FakeOpenAI) -> list[str]:
    return [str(r.messages[0]["content"]) for r in llm.chat_requests]


async def test_the_model_can_keep_lore_silent(stack: Stack, llm: FakeOpenAI) -> None:
    llm.enqueue(Reply("QUESTION: yes\nANSWERED: no"))
    answer = await asked(stack, llm)
    assert answer.abstained  # type: ignore[attr-defined]
    assert prompts(llm) == [TRIAGE_PROMPT], "no answer written"


async def test_an_answer_lore_gives_unasked_is_verified_by_the_model(stack: Stack, llm: FakeOpenAI) -> None:
    llm.enqueue(
        Reply("QUESTION: yes\nANSWERED: yes"),
        Reply("A rollback takes about two minutes [1]."),
        Reply("1: SUPPORTED"),
    )
    answer = await asked(stack, llm)
    assert not answer.abstained and "two minutes" in answer.text  # type: ignore[attr-defined]
    assert prompts(llm)[0] == TRIAGE_PROMPT and "check an answer against its sources" in prompts(llm)[2]


async def test_an_outage_of_the_judge_leaves_the_offline_verdict(stack: Stack, llm: FakeOpenAI) -> None:
    llm.enqueue(
        HttpError(500, "boom"), Reply("A rollback takes about two minutes [1]."), Reply("1: SUPPORTED")
    )
    answer = await asked(stack, llm)
    assert not answer.abstained  # type: ignore[attr-defined]


async def test_asked_questions_keep_their_mode_and_no_triage(stack: Stack, llm: FakeOpenAI) -> None:
    llm.enqueue(Reply("A rollback takes about two minutes [1]."))
    await asked(stack, llm, unasked=False)
    assert TRIAGE_PROMPT not in prompts(llm) and len(prompts(llm)) == 1
