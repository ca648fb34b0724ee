"""FakeOpenAI speaks the wire format the official `openai` client expects."""

from __future__ import annotations

import json
import math
import time
from collections.abc import AsyncIterator

import openai
import pytest
from openai import AsyncOpenAI
from openai.types.chat import ChatCompletion, ChatCompletionChunk, ChatCompletionMessageParam

from .openai_server import (
    Callback,
    ContentFilter,
    Delay,
    EmptyContent,
    FakeOpenAI,
    HttpError,
    Json,
    Length,
    Refusal,
    Reply,
    Scripted,
    ToolCall,
    toy_embedding,
)

QUESTION: list[ChatCompletionMessageParam] = [{"role": "user", "content": "What is Lore?"}]
FAST_RETRY = {"retry-after": "0", "retry-after-ms": "1"}


@pytest.fixture
async def llm() -> AsyncIterator[FakeOpenAI]:
    async with FakeOpenAI() as server:
        yield server


@pytest.fixture
async def client(llm: FakeOpenAI) -> AsyncIterator[AsyncOpenAI]:
    async with AsyncOpenAI(base_url=llm.base_url, api_key="test", max_retries=0) as c:
        yield c


async def ask(client: AsyncOpenAI) -> ChatCompletion:
    return await client.chat.completions.create(model="gpt-fake", messages=QUESTION)


async def ask_streaming(client: AsyncOpenAI, *, include_usage: bool = False) -> list[ChatCompletionChunk]:
    stream = await client.chat.completions.create(
        model="gpt-fake",
        messages=QUESTION,
        stream=True,
        stream_options={"include_usage": include_usage},
    )
    return [chunk async for chunk in stream]


async def test_plain_reply_has_content_usage_and_is_recorded(llm: FakeOpenAI, client: AsyncOpenAI) -> None:
    llm.enqueue(Reply("Lore is your team's memory."))

    completion = await ask(client)

    choice = completion.choices[0]
    assert choice.message.content == "Lore is your team's memory."
    assert choice.finish_reason == "stop"
    assert completion.model == "gpt-fake"
    assert completion.usage is not None
    assert completion.usage.completion_tokens == len("Lore is your team's memory.") // 4
    assert completion.usage.prompt_tokens == len("What is Lore?") // 4
    [request] = llm.chat_requests
    assert request.method == "POST"
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer test"
    assert request.messages == QUESTION
    assert request.json["model"] == "gpt-fake"


async def test_empty_queue_falls_back_to_the_default_reply(client: AsyncOpenAI) -> None:
    first, second = await ask(client), await ask(client)

    assert first.choices[0].message.content == "This is a fake reply."
    assert second.choices[0].message.content == "This is a fake reply."


async def test_streamed_reply_arrives_in_several_deltas_with_usage_last(
    llm: FakeOpenAI, client: AsyncOpenAI
) -> None:
    text = "Deploys happen on Tuesdays, see [1]."
    llm.enqueue(Reply(text))

    chunks = await ask_streaming(client, include_usage=True)

    deltas = [c.choices[0].delta.content for c in chunks if c.choices]
    assert "".join(d or "" for d in deltas) == text
    assert sum(1 for d in deltas if d) > 1
    assert chunks[0].choices[0].delta.role == "assistant"
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].choices == []
    assert chunks[-1].usage is not None
    assert chunks[-1].usage.completion_tokens == len(text) // 4
    assert all(c.usage is None for c in chunks[:-1])


async def test_stream_without_include_usage_has_no_usage_chunk(llm: FakeOpenAI, client: AsyncOpenAI) -> None:
    chunks = await ask_streaming(client)

    assert all(c.choices and c.usage is None for c in chunks)


async def test_tool_call_has_parsed_arguments(llm: FakeOpenAI, client: AsyncOpenAI) -> None:
    llm.enqueue(ToolCall("search", {"query": "deploy policy", "limit": 3}))

    message = (await ask(client)).choices[0]

    assert message.finish_reason == "tool_calls"
    assert message.message.content is None
    [call] = message.message.tool_calls or []
    assert call.type == "function"
    assert call.id == "call_fake_1"
    assert call.function.name == "search"
    assert json.loads(call.function.arguments) == {"query": "deploy policy", "limit": 3}


async def test_tool_call_streams_as_deltas(llm: FakeOpenAI, client: AsyncOpenAI) -> None:
    llm.enqueue(ToolCall("search", {"query": "a fairly long query to split"}, call_id="call_x"))

    chunks = await ask_streaming(client)
    calls = [call for chunk in chunks for call in (chunk.choices[0].delta.tool_calls or [])]

    assert calls[0].id == "call_x"
    assert calls[0].function is not None
    assert calls[0].function.name == "search"
    assert len(calls) > 2
    arguments = "".join((c.function.arguments or "") for c in calls if c.function)
    assert json.loads(arguments) == {"query": "a fairly long query to split"}
    assert all(c.index == 0 for c in calls)


async def test_refusal_sets_refusal_and_no_content(llm: FakeOpenAI, client: AsyncOpenAI) -> None:
    llm.enqueue(Refusal("I can't help with that."))

    message = (await ask(client)).choices[0].message

    assert message.refusal == "I can't help with that."
    assert message.content is None


async def test_streamed_refusal_arrives_as_refusal_deltas(llm: FakeOpenAI, client: AsyncOpenAI) -> None:
    llm.enqueue(Refusal("I can't help with that."))

    chunks = await ask_streaming(client)

    assert "".join(c.choices[0].delta.refusal or "" for c in chunks) == "I can't help with that."
    assert all(c.choices[0].delta.content is None for c in chunks)


@pytest.mark.parametrize(
    ("scripted", "content", "finish_reason"),
    [
        (Length("Deploys happen on"), "Deploys happen on", "length"),
        (ContentFilter(), None, "content_filter"),
        (EmptyContent(), None, "stop"),
        (EmptyContent(""), "", "stop"),
    ],
)
async def test_unusual_endings(
    llm: FakeOpenAI,
    client: AsyncOpenAI,
    scripted: Scripted,
    content: str | None,
    finish_reason: str,
) -> None:
    llm.enqueue(scripted)

    choice = (await ask(client)).choices[0]

    assert choice.message.content == content
    assert choice.finish_reason == finish_reason


async def test_429_raises_rate_limit_error_with_openai_error_body(
    llm: FakeOpenAI, client: AsyncOpenAI
) -> None:
    llm.enqueue(HttpError(429, "Slow down.", headers=FAST_RETRY))

    with pytest.raises(openai.RateLimitError) as caught:
        await ask(client)

    assert caught.value.status_code == 429
    assert caught.value.code == "rate_limit_exceeded"
    assert caught.value.message.endswith("Slow down.")
    assert caught.value.response.headers["retry-after"] == "0"


async def test_client_retries_a_429_then_gets_the_next_reply(llm: FakeOpenAI) -> None:
    llm.enqueue(HttpError(429, headers=FAST_RETRY), Reply("after the retry"))

    async with AsyncOpenAI(base_url=llm.base_url, api_key="test", max_retries=1) as client:
        completion = await ask(client)

    assert completion.choices[0].message.content == "after the retry"
    first, second = llm.chat_requests
    assert first.headers["x-stainless-retry-count"] == "0"
    assert second.headers["x-stainless-retry-count"] == "1"
    assert llm.pending == 0


async def test_500_raises_internal_server_error(llm: FakeOpenAI, client: AsyncOpenAI) -> None:
    llm.enqueue(HttpError(500, "The server had an error."))

    with pytest.raises(openai.InternalServerError) as caught:
        await ask(client)

    assert caught.value.type == "server_error"


async def test_delay_lets_the_client_time_out_without_stalling_teardown(
    llm: FakeOpenAI,
) -> None:
    llm.enqueue(Delay(30, then=Reply("too late")))
    started = time.monotonic()

    async with AsyncOpenAI(base_url=llm.base_url, api_key="test", max_retries=0, timeout=0.2) as client:
        with pytest.raises(openai.APITimeoutError):
            await ask(client)

    assert time.monotonic() - started < 5


async def test_short_delay_then_reply(llm: FakeOpenAI, client: AsyncOpenAI) -> None:
    llm.enqueue(Delay(0.05, then=Reply("eventually")))

    assert (await ask(client)).choices[0].message.content == "eventually"


async def test_callback_answers_from_the_prompt(llm: FakeOpenAI, client: AsyncOpenAI) -> None:
    def cite_first_source(request: Json) -> Scripted | str:
        prompt = request["messages"][-1]["content"]
        return f"Answer to {prompt!r} [1]"

    llm.enqueue(Callback(cite_first_source), Callback(lambda _: HttpError(503)))

    assert (await ask(client)).choices[0].message.content == "Answer to 'What is Lore?' [1]"
    with pytest.raises(openai.InternalServerError):
        await ask(client)


async def test_wrong_api_key_is_an_authentication_error() -> None:
    async with (
        FakeOpenAI(api_key="sk-right") as llm,
        AsyncOpenAI(base_url=llm.base_url, api_key="sk-wrong", max_retries=0) as client,
    ):
        with pytest.raises(openai.AuthenticationError) as caught:
            await ask(client)

    assert caught.value.code == "invalid_api_key"


async def test_embeddings_are_deterministic_unit_vectors(llm: FakeOpenAI, client: AsyncOpenAI) -> None:
    texts = ["deploy on tuesday", "deploy on tuesday", "lunch menu"]

    response = await client.embeddings.create(model="text-embedding-3-small", input=texts)

    vectors = [d.embedding for d in response.data]
    assert response.model == "text-embedding-3-small"
    assert [d.index for d in response.data] == [0, 1, 2]
    assert all(len(v) == 64 for v in vectors)
    assert vectors[0] == vectors[1] == toy_embedding("deploy on tuesday")
    assert vectors[0] != vectors[2]
    assert math.isclose(sum(x * x for x in vectors[0]), 1.0, rel_tol=1e-5)
    assert llm.embedding_requests[0].json["encoding_format"] == "base64"


async def test_embeddings_float_format_and_dimensions(client: AsyncOpenAI) -> None:
    response = await client.embeddings.create(
        model="m", input="one text", dimensions=16, encoding_format="float"
    )

    assert response.data[0].embedding == toy_embedding("one text", 16)


def test_texts_sharing_words_are_closer() -> None:
    def cosine(a: str, b: str) -> float:
        return sum(x * y for x, y in zip(toy_embedding(a), toy_embedding(b), strict=True))

    assert cosine("deploy policy", "the deploy policy") > cosine("deploy policy", "lunch menu")


async def test_embedding_failures_can_be_scripted(llm: FakeOpenAI, client: AsyncOpenAI) -> None:
    llm.enqueue_embeddings(HttpError(429, headers=FAST_RETRY))

    with pytest.raises(openai.RateLimitError):
        await client.embeddings.create(model="m", input="text")
    assert len((await client.embeddings.create(model="m", input="text")).data) == 1


async def test_models_are_listed(client: AsyncOpenAI) -> None:
    models = [m.id async for m in client.models.list()]

    assert models == ["gpt-fake", "text-embedding-fake"]


async def test_wait_for_returns_once_the_request_arrived(llm: FakeOpenAI, client: AsyncOpenAI) -> None:
    await ask(client)

    [request] = await llm.wait_for(1, timeout=1)
    assert request.messages == QUESTION
    with pytest.raises(TimeoutError, match=r"expected 2 request\(s\)"):
        await llm.wait_for(2, timeout=0.05)


def test_runs_in_a_thread_for_synchronous_callers() -> None:
    with FakeOpenAI(default_reply=Reply("from a thread")) as llm:
        with openai.OpenAI(base_url=llm.base_url, api_key="test", max_retries=0) as client:
            completion = client.chat.completions.create(model="gpt-fake", messages=QUESTION)

        assert completion.choices[0].message.content == "from a thread"
        [request] = llm.wait_for_sync(1, timeout=1)
        assert request.messages == QUESTION
