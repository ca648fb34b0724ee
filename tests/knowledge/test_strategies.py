"""Retrieval strategies: always, confidence, smart, and function (tool calling)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from openai import AsyncOpenAI

from knowledge.engine import Request, Strategy, is_knowledge_question
from knowledge.llm import OpenAIChatModel
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
