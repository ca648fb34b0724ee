"""Retrieval strategies: always, confidence, smart, and function (tool calling)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace

import pytest
from openai import AsyncOpenAI

from knowledge.answering.answer import Fallback, ResponseMode
from knowledge.backends.llm import OpenAIChatModel
from knowledge.engine import Request, Strategy, is_knowledge_question
from knowledge.search.notices import Notice, NoticeKind
from storage.records import IndexRef
from tests.fakes.openai_server import FakeOpenAI, Reply, ToolCall
from tests.knowledge.conftest import HANDBOOK, RECIPES, Stack, md


@pytest.fixture
async def chat() -> AsyncIterator[tuple[FakeOpenAI, OpenAIChatModel]]:
    async with FakeOpenAI() as server:
        client = AsyncOpenAI(base_url=server.base_url, api_key="test", max_retries=0)
        yield server, OpenAIChatModel(client, "gpt-fake")
        await client.close()


class Host:
    def __init__(self, extra: IndexRef) -> None:
        self.extra = extra
        self.enabled: list[str] = []

    async def list_indexes(self) -> list[str]:
        return ["ops", self.extra.name]

    async def enable_index(self, name: str) -> tuple[str, IndexRef | None]:
        if name != self.extra.name:
            return f"There is no index called {name}.", None
        self.enabled.append(name)
        return f"Enabled the {name} index.", self.extra


def request(
    stack: Stack, indexes: list[IndexRef], question: str, strategy: Strategy, host: Host | None = None
) -> Request:
    fresh = [stack.fresh(i) for i in indexes]
    return Request(fresh, [{"role": "user", "content": question}], strategy=strategy, tools=host)


async def test_function_strategy_lets_the_model_search_and_enable(
    stack: Stack, chat: tuple[FakeOpenAI, OpenAIChatModel]
) -> None:
    server, model = chat
    ops, home = stack.index("ops"), stack.index("home")
    await stack.ingestor.add(ops, md("handbook.md", HANDBOOK))
    await stack.ingestor.add(home, md("kitchen.md", RECIPES))
    host = Host(stack.fresh(home))
    server.enqueue(
        ToolCall("enable_knowledge_index", {"name": "home"}),
        ToolCall("search_knowledge", {"query": "sourdough baking temperature"}),
        Reply("Bake at 250 degrees Celsius [1]; see also [42]."),
    )
    answer = await stack.knowledge(model).ask(
        request(stack, [ops], "How hot do we bake sourdough?", Strategy.FUNCTION, host)
    )
    assert host.enabled == ["home"]
    assert [c.name for c in answer.citations] == ["kitchen.md"] and "[42]" not in answer.text
    assert answer.searched == ["ops", "home"]
    requests = server.chat_requests
    assert len(requests) == 3 and all(r.json["tools"] for r in requests)
    tool_results = [m for m in requests[2].messages if m["role"] == "tool"]
    assert '<source n="1" title="Kitchen notes' in tool_results[-1]["content"]
    assert "250 degrees" in tool_results[-1]["content"]


async def test_confidence_strategy_drops_weak_retrieval(stack: Stack) -> None:
    index = stack.index()
    await stack.ingestor.add(index, md("handbook.md", HANDBOOK))
    knowledge = stack.knowledge()
    vague = await knowledge.ask(request(stack, [index], "engineering week", Strategy.CONFIDENCE))
    assert vague.abstained
    clear = await knowledge.ask(
        request(stack, [index], "how long does a rollback take on the load balancer", Strategy.CONFIDENCE)
    )
    assert not clear.abstained and clear.citations[0].name == "handbook.md"


async def test_smart_strategy_skips_retrieval_for_chit_chat(
    stack: Stack, chat: tuple[FakeOpenAI, OpenAIChatModel]
) -> None:
    server, model = chat
    index = stack.index()
    await stack.ingestor.add(index, md("handbook.md", HANDBOOK))
    server.enqueue(Reply("You're welcome!"))
    answer = await stack.knowledge(model).ask(request(stack, [index], "thanks!", Strategy.SMART))
    assert answer.text == "You're welcome!" and answer.citations == []
    assert "<source " not in server.chat_requests[0].messages[-1]["content"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("thanks!", False),
        ("hello there", False),
        ("ok", False),
        ("how do we deploy?", True),
        ("deploy schedule", True),
    ],
)
def test_knowledge_question_classifier(text: str, expected: bool) -> None:
    assert is_knowledge_question(text) is expected


async def rollback(stack: Stack) -> Request:
    """The handbook in an index, and a question it answers, asked with the function strategy."""
    ops = stack.index("ops")
    await stack.ingestor.add(ops, md("handbook.md", HANDBOOK))
    return request(stack, [ops], "How long does a rollback take?", Strategy.FUNCTION)


async def test_function_strategy_answers_carry_the_models_label_unless_they_rest_on_sources(
    stack: Stack, chat: tuple[FakeOpenAI, OpenAIChatModel]
) -> None:
    server, model = chat
    knowledge = stack.knowledge(model)
    asked = await rollback(stack)
    server.enqueue(Reply("Rollbacks usually take about 15 minutes."))  # never searched
    assert (await knowledge.ask(asked)).notices == [Notice(NoticeKind.GENERAL_KNOWLEDGE)]
    server.enqueue(
        ToolCall("search_knowledge", {"query": "rollback duration"}),
        Reply("Rollbacks take about 15 minutes, done by switching the load balancer back [1]."),
    )
    invented = await knowledge.ask(replace(asked, messages=[{"role": "user", "content": "Rollback time?"}]))
    assert (
        invented.notices == [Notice(NoticeKind.MODEL_FIRST)] and invented.citations[0].name == "handbook.md"
    )
    server.enqueue(
        ToolCall("search_knowledge", {"query": "rollback duration"}),
        Reply("Switching the load balancer back to the previous colour takes about two minutes [1]."),
    )
    cited = await knowledge.ask(replace(asked, messages=[{"role": "user", "content": "Rollbacks?"}]))
    assert cited.notices == [] and cited.citations[0].name == "handbook.md"


async def test_documents_only_is_not_left_to_the_models_tool_calls(
    stack: Stack, chat: tuple[FakeOpenAI, OpenAIChatModel]
) -> None:
    server, model = chat
    server.enqueue(Reply("Rollbacks usually take about 15 minutes."))
    asked = replace(await rollback(stack), mode=ResponseMode.RAG_ONLY)
    answer = await stack.knowledge(model).ask(asked)
    assert "tools" not in server.chat_requests[0].json, "no tool calls: the documents answer, checked"
    assert answer.fallback == Fallback.UNVERIFIED and "15 minutes" not in answer.text
    assert "two minutes" in answer.text and answer.citations[0].name == "handbook.md"
