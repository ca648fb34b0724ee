"""The `function` strategy: the model decides when to search, through tool calls.

Tools: `search_knowledge` (the conversation's enabled indexes), `list_knowledge_indexes`
and `enable_knowledge_index` (through a `ToolHost` the surface provides, since enabling
is a property of the conversation). Every passage a search returns gets a number that
stays the same for the whole exchange, so the final answer's `[n]` map back to documents.
The answer is the model's to write, so it is labelled as its own knowledge unless every
claim in it rests on a passage it cites (`knowledge.answering.citations`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from knowledge.answering.answer import Answer, ResponseMode, map_citations
from knowledge.answering.generation import own_knowledge
from knowledge.backends.llm import ChatModel, Completion
from knowledge.search.context import Message, source_block
from knowledge.search.notices import Notice, NoticeKind
from knowledge.search.retrieval import Hit, Retriever
from storage.document_access import PUBLIC_ONLY, AccessFilter
from storage.records import IndexRef

MAX_ROUNDS = 4  # searches a model may make for one answer before it must write (bounds cost and time)
PASSAGES_PER_SEARCH = 6  # what one search returns to the model: a few passages, not its context window

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "search_knowledge",
            "description": "Search the team's enabled knowledge indexes. Returns numbered passages; cite them as [n].",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string"}},
                "required": ["query"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "list_knowledge_indexes",
            "description": "List the knowledge indexes this conversation may use, and which are enabled.",
            "parameters": {"type": "object", "properties": {}},
        },
    },
    {
        "type": "function",
        "function": {
            "name": "enable_knowledge_index",
            "description": "Enable a knowledge index for this conversation so searches include it.",
            "parameters": {
                "type": "object",
                "properties": {"name": {"type": "string"}},
                "required": ["name"],
            },
        },
    },
]

SYSTEM = (
    "You are Lore, a team's shared memory. Use search_knowledge to look things up in the team's "
    "documents before answering questions about the team's own material, and cite passages as [n]. "
    "Answer from general knowledge only when the documents have nothing, and say so."
)


class ToolHost(Protocol):
    async def list_indexes(self) -> list[str]: ...
    async def enable_index(self, name: str) -> tuple[str, IndexRef | None]:
        """A sentence saying what happened, and the index now enabled (None if not)."""


@dataclass
class _Exchange:
    indexes: list[IndexRef]
    hits: list[Hit] = field(default_factory=list)
    searched: bool = False
    access: AccessFilter = PUBLIC_ONLY


async def answer_with_tools(
    chat: ChatModel,
    retriever: Retriever,
    indexes: Sequence[IndexRef],
    question: str,
    history: Sequence[Message],
    host: ToolHost | None,
    mode: ResponseMode,
    access: AccessFilter = PUBLIC_ONLY,
) -> Answer:
    """Let the model call the tools (a few rounds at most), then map its citations; its
    searches read only what `access` may read."""
    exchange = _Exchange(list(indexes), access=access)
    messages: list[Message] = [
        {"role": "system", "content": SYSTEM},
        *history,
        {"role": "user", "content": question},
    ]
    completion: Completion | None = None
    for _ in range(MAX_ROUNDS):
        completion = await chat.complete(messages, tools=TOOLS)
        if not completion.tool_calls:
            break
        messages.append(_assistant_calls(completion))
        for call in completion.tool_calls:
            result = await _run_tool(call.name, call.arguments, exchange, retriever, host)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    assert completion is not None
    text, citations = map_citations(completion.text, exchange.hits)
    problem = completion.problem
    return Answer(
        text=text or "I couldn't finish looking that up; please ask again.",
        citations=citations,
        mode=mode,
        notices=[
            *_labels(completion.text, exchange.hits, question),
            *([Notice(NoticeKind.MODEL_PROBLEM, problem)] if problem else []),
        ],
        searched=[i.name for i in exchange.indexes],
        model=completion.model,
    )


def _labels(reply: str, hits: Sequence[Hit], question: str) -> list[Notice]:
    """The model's own knowledge, said of a reply no passage was found for, or one whose
    claims do not all rest on the passages it cites (`own_knowledge`)."""
    if not reply.strip():
        return []
    return own_knowledge(reply, hits, question) if hits else [Notice(NoticeKind.GENERAL_KNOWLEDGE)]


async def _run_tool(
    name: str, arguments: dict[str, Any], exchange: _Exchange, retriever: Retriever, host: ToolHost | None
) -> str:
    if name == "search_knowledge":
        query = str(arguments.get("query") or "").strip()
        if not query:
            return "search_knowledge needs a query."
        found = await retriever.search(
            exchange.indexes, query, top_k=PASSAGES_PER_SEARCH, access=exchange.access
        )
        exchange.searched = True
        if not found.hits:
            return "No passages found."
        blocks = []
        for hit in found.hits:
            exchange.hits.append(hit)
            blocks.append(source_block(len(exchange.hits), hit))
        return "\n\n".join(blocks)
    if name == "list_knowledge_indexes":
        names = await host.list_indexes() if host else [i.name for i in exchange.indexes]
        return json.dumps({"indexes": names, "enabled": [i.name for i in exchange.indexes]})
    if name == "enable_knowledge_index" and host is not None:
        said, index = await host.enable_index(str(arguments.get("name") or ""))
        if index is not None and index.id not in {i.id for i in exchange.indexes}:
            exchange.indexes.append(index)
        return said
    return f"There is no tool called {name} here."


def _assistant_calls(completion: Completion) -> Message:
    return {
        "role": "assistant",
        "content": completion.text or None,
        "tool_calls": [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
            }
            for call in completion.tool_calls
        ],
    }
