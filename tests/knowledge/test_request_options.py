"""Per-request options the HTTP API passes to the engine: the caller's own instructions, a
minimum confidence, the fallback strategy, and the passages given to the model."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from openai import AsyncOpenAI

from knowledge.answering.answer import KNOWLEDGE_RULES, Fallback, FallbackStrategy, ResponseMode, Rule
from knowledge.backends.llm import OpenAIChatModel
from knowledge.engine import Request
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.knowledge.conftest import HANDBOOK, RECIPES, Stack, md

ROLLBACK = "How long does a rollback take?"
UNRELATED = "What is the boiling point of liquid nitrogen on Jupiter's moons?"


@pytest.fixture
async def model() -> AsyncIterator[tuple[FakeOpenAI, OpenAIChatModel]]:
    async with FakeOpenAI() as server:
        client = AsyncOpenAI(base_url=server.base_url, api_key="test", max_retries=0)
        yield server, OpenAIChatModel(client, "gpt-fake")
        await client.close()


async def filled(stack: Stack) -> Request:
    index = stack.index()
    await stack.ingestor.add(index, md("handbook.md", HANDBOOK))
    await stack.ingestor.add(index, md("kitchen.md", RECIPES))
    return Request([stack.fresh(index)], [{"role": "user", "content": ROLLBACK}])


def system_prompt(server: FakeOpenAI) -> str:
    return str(server.chat_requests[-1].messages[0]["content"])


async def test_the_callers_instructions_follow_lores(
    stack: Stack, model: tuple[FakeOpenAI, OpenAIChatModel]
) -> None:
    server, chat = model
    request = await filled(stack)
    await stack.knowledge(chat).ask(
        Request(request.indexes, request.messages, instructions="Answer in French.")
    )
    system = system_prompt(server)
    assert system.index("You are Lore") < system.index("Answer in French.")
    assert "<source " in str(server.chat_requests[-1].messages[-1]["content"])


async def test_the_answer_lists_every_passage_the_model_was_given(
    stack: Stack, model: tuple[FakeOpenAI, OpenAIChatModel]
) -> None:
    server, chat = model
    server.enqueue(Reply("About two minutes [1]."))
    request = await filled(stack)
    answer = await stack.knowledge(chat).ask(request)
    assert [c.n for c in answer.citations] == [1]
    assert len(answer.context) >= len(answer.citations)
    assert [c.n for c in answer.context] == list(range(1, len(answer.context) + 1))
    assert "two minutes" in answer.context[0].text


async def test_min_confidence_decides_between_documents_and_filling_gaps(
    stack: Stack, model: tuple[FakeOpenAI, OpenAIChatModel]
) -> None:
    server, chat = model
    request = await filled(stack)
    knowledge = stack.knowledge(chat)
    base = {"indexes": request.indexes, "messages": request.messages, "mode": ResponseMode.SMART_FALLBACK}
    await knowledge.ask(Request(**base, min_confidence=0.0))  # type: ignore[arg-type]
    assert KNOWLEDGE_RULES[Rule.DOCUMENTS] in system_prompt(server)
    hybrid = Request(**base, min_confidence=1.01, fallback=FallbackStrategy.HYBRID)  # type: ignore[arg-type]
    await knowledge.ask(hybrid)
    assert KNOWLEDGE_RULES[Rule.FILL_GAPS] in system_prompt(server)


async def test_fallback_strategy_none_abstains_instead_of_guessing(
    stack: Stack, model: tuple[FakeOpenAI, OpenAIChatModel]
) -> None:
    server, chat = model
    request = await filled(stack)
    question = [{"role": "user", "content": UNRELATED}]
    knowledge = stack.knowledge(chat)
    guessed = await knowledge.ask(Request(request.indexes, question, mode=ResponseMode.HYBRID))
    assert guessed.fallback == Fallback.GENERAL_KNOWLEDGE and len(server.chat_requests) == 1
    strict = Request(request.indexes, question, mode=ResponseMode.HYBRID, fallback=FallbackStrategy.NONE)
    answer = await knowledge.ask(strict)
    assert answer.abstained and len(server.chat_requests) == 1


def test_fallback_strategies_parse_leniently() -> None:
    assert FallbackStrategy.parse(" LLM-knowledge ") == FallbackStrategy.LLM_KNOWLEDGE
    with pytest.raises(ValueError, match="llm_knowledge, hybrid, none"):
        FallbackStrategy.parse("pray")
