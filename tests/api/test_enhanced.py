"""POST /enhanced-chat/completions: directives from the system message, and the response
mode, fallback and warnings it reports (the parser itself: test_directives.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest
import pytest_asyncio

from knowledge.answering.answer import KNOWLEDGE_RULES, Rule
from tests.api.conftest import LoreApi
from tests.fakes.openai_server import Reply

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def docs(llm_api: LoreApi) -> str:
    await llm_api.create_index("product-docs")
    await llm_api.add_text(
        "product-docs",
        "api-auth.md",
        "# API authentication\n\nThe API accepts bearer tokens that expire after one hour.",
        context_type=["technical"],
        content_domain=["api_documentation"],
    )
    await llm_api.add_text(
        "product-docs",
        "sales-auth.md",
        "# Authentication pitch\n\nOur authentication story: tokens expire after one hour, which buyers love.",
        context_type=["marketing"],
        content_domain=["sales"],
    )
    return "product-docs"


async def enhanced(gpt: LoreApi, system_text: str, question: str, **body: Any) -> dict[str, Any]:
    messages = [{"role": "system", "content": system_text}, {"role": "user", "content": question}]
    status, answer = await gpt.call(
        "POST", "/enhanced-chat/completions", json_body={"messages": messages, **body}
    )
    assert status == 200, answer
    return dict(answer)


async def test_directives_reach_the_engine_and_not_the_model(gpt: LoreApi, docs: str) -> None:
    assert gpt.llm is not None
    gpt.llm.enqueue(Reply("Tokens expire after an hour [1]."))
    answer = await enhanced(
        gpt,
        "You are a support agent.\nRESPONSE_MODE: RAG_PRIORITY\nDOCUMENT_CONTEXT: technical\nMIN_CONFIDENCE: 2",
        "When do API tokens expire?",
        index_name=docs,
    )
    assert answer["response_mode"] == "RAG_PRIORITY"
    assert answer["fallback_used"] is False and answer["fallback_reason"] is None
    assert [w.split(":")[0] for w in answer["warnings"]] == ["MIN_CONFIDENCE"]
    assert {n["metadata"]["name"] for n in answer["source_nodes"]} == {"api-auth.md"}
    system_sent = gpt.chat_requests[-1].json["messages"][0]["content"]
    assert "You are a support agent." in system_sent
    assert "RESPONSE_MODE" not in system_sent and "DOCUMENT_CONTEXT" not in system_sent


async def test_rag_only_with_nothing_relevant_does_not_call_the_model(gpt: LoreApi, docs: str) -> None:
    answer = await enhanced(
        gpt, "RESPONSE_MODE: RAG_ONLY", "Who won the 1998 football world cup?", index_name=docs
    )
    assert answer["response_mode"] == "RAG_ONLY"
    assert answer["source_nodes"] == []
    assert "Nothing in the indexes searched" in answer["choices"][0]["message"]["content"]
    assert gpt.chat_requests == []


async def test_hybrid_falls_back_to_the_models_knowledge_and_says_so(gpt: LoreApi, docs: str) -> None:
    answer = await enhanced(
        gpt, "RESPONSE_MODE: HYBRID", "Who won the 1998 football world cup?", index_name=docs
    )
    assert answer["response_mode"] == "HYBRID"
    assert answer["fallback_used"] is True
    assert answer["fallback_reason"] == "general_knowledge"
    assert len(gpt.chat_requests) == 1


async def test_fallback_strategy_none_says_nothing_was_found_instead(gpt: LoreApi, docs: str) -> None:
    system_text = "<config>\nRESPONSE_MODE: HYBRID\nFALLBACK_STRATEGY: none\n</config>"
    answer = await enhanced(gpt, system_text, "Who won the 1998 football world cup?", index_name=docs)
    assert answer["source_nodes"] == [] and answer["fallback_used"] is False
    assert gpt.chat_requests == []


async def test_the_default_mode_is_smart_fallback(gpt: LoreApi, docs: str) -> None:
    assert gpt.llm is not None
    gpt.llm.enqueue(Reply("API bearer tokens expire after one hour [1]."))
    answer = await enhanced(gpt, "You are terse.", "When do API bearer tokens expire?", index_name=docs)
    assert answer["response_mode"] == "SMART_FALLBACK"
    assert answer["warnings"] == []


async def test_without_an_index_it_passes_through_without_the_directives(gpt: LoreApi) -> None:
    answer = await enhanced(gpt, "Be nice.\nRESPONSE_MODE: nonsense", "hello")
    assert answer["response_mode"] is None and answer["source_nodes"] is None
    assert answer["fallback_used"] is False
    assert answer["warnings"][0].startswith("RESPONSE_MODE")
    assert gpt.chat_requests[-1].json["messages"][0] == {"role": "system", "content": "Be nice."}


async def test_streaming_reports_the_mode_in_the_last_chunk(gpt: LoreApi, docs: str) -> None:
    messages = [
        {"role": "system", "content": "RESPONSE_MODE: HYBRID"},
        {"role": "user", "content": "When do API tokens expire?"},
    ]
    body = {"messages": messages, "index_name": docs, "stream": True}
    status, text = await gpt.call("POST", "/enhanced-chat/completions", json_body=body)
    assert status == 200
    last = json.loads([e for e in text.split("\n\n") if e][-2].removeprefix("data: "))
    assert last["response_mode"] == "HYBRID" and last["source_nodes"]


async def test_below_min_confidence_the_model_may_add_its_own_knowledge(gpt: LoreApi, docs: str) -> None:
    question = "Anything about bearer tokens?"
    await enhanced(gpt, "MIN_CONFIDENCE: 1", question, index_name=docs)
    assert KNOWLEDGE_RULES[Rule.FILL_GAPS] in gpt.chat_requests[-1].json["messages"][0]["content"]
    await enhanced(
        gpt, "MIN_CONFIDENCE: 1\nFALLBACK_STRATEGY: llm_knowledge", question + " ", index_name=docs
    )
    assert KNOWLEDGE_RULES[Rule.DOCUMENTS] in gpt.chat_requests[-1].json["messages"][0]["content"]
    await enhanced(gpt, "MIN_CONFIDENCE: 0", question + "  ", index_name=docs)
    assert KNOWLEDGE_RULES[Rule.DOCUMENTS] in gpt.chat_requests[-1].json["messages"][0]["content"]
