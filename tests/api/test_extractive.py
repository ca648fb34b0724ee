"""Chat completions with no language model configured: extractive answers over indexes."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from openai import AsyncOpenAI

from bot.api.completions import answer_text
from bot.chat.messages import notice as worded
from knowledge.answering.answer import Answer, ResponseMode
from knowledge.search.notices import HEDGED
from tests.api.conftest import LoreApi
from tests.api.test_auth import assert_error

pytestmark = pytest.mark.asyncio(loop_scope="module")

QUESTION = "When does standup happen on Mondays?"


async def test_an_extractive_answer_is_a_valid_completion_that_says_so(api: LoreApi) -> None:
    client = AsyncOpenAI(base_url=api.base_url + "/v1", api_key=api.keys.service, max_retries=0)
    try:
        answer = await client.chat.completions.create(
            model="anything",
            messages=[{"role": "user", "content": QUESTION}],
            extra_body={"index_name": "general"},
        )
        models = await client.models.list()
    finally:
        await client.close()
    text = answer.choices[0].message.content or ""
    assert text.startswith("Extractive answer (no language model is configured)")
    assert "9:45" in text
    assert answer.model == "lore-extractive"
    assert [m.id for m in models.data] == ["lore-extractive"]
    assert answer.model_extra is not None
    [node] = answer.model_extra["source_nodes"]
    assert node["metadata"]["index"] == "general" and node["metadata"]["cited"] is True


async def test_nothing_found_says_where_it_looked(api: LoreApi) -> None:
    body = {
        "messages": [{"role": "user", "content": "What is the capital of Peru?"}],
        "index_name": "general",
    }
    status, answer = await api.call("POST", "/v1/chat/completions", json_body=body)
    assert status == 200
    assert (
        answer["choices"][0]["message"]["content"]
        == "Nothing in the indexes searched (general) answers this."
    )
    assert answer["source_nodes"] == []


async def test_streaming_an_extractive_answer(api: LoreApi) -> None:
    body = {"messages": [{"role": "user", "content": QUESTION}], "index_name": "general", "stream": True}
    status, text = await api.call("POST", "/v1/chat/completions", json_body=body)
    assert status == 200
    events = [line.removeprefix("data: ") for line in text.split("\n\n") if line]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    content = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks)
    assert content.startswith("Extractive answer") and "9:45" in content
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"
    assert chunks[-1]["source_nodes"][0]["metadata"]["name"] == "general.md"


async def test_nothing_to_pass_through_to_is_a_503(api: LoreApi) -> None:
    body = {"messages": [{"role": "user", "content": "hello"}]}
    status, answer = await api.call("POST", "/v1/chat/completions", json_body=body)
    assert status == 503
    assert "OPENAI_BASE_URL" in assert_error(answer, "service_unavailable")


async def test_a_hedged_extractive_answer_says_so_before_the_quotes() -> None:
    quoted = Answer(text="Standup is at 9:30. [1]", citations=[], mode=ResponseMode.SMART_FALLBACK)
    assert answer_text(quoted).startswith("Extractive answer (no language model is configured)")
    hedged = answer_text(replace(quoted, notices=[HEDGED]))
    assert hedged.startswith(f"_{worded(HEDGED)}_\n\nExtractive answer") and hedged.endswith(quoted.text)
