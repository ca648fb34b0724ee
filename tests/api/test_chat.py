"""POST /v1/chat/completions and GET /v1/models, called with the official `openai` client
and raw HTTP; the model is the fake OpenAI-compatible server."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import openai
import pytest
import pytest_asyncio
from openai import AsyncOpenAI

from bot.chat.messages import notice as worded
from knowledge.backends.tokens import TiktokenCounter
from knowledge.search.notices import Notice, NoticeKind
from tests.api.conftest import WINDOW, LoreApi
from tests.api.test_auth import assert_error
from tests.fakes.openai_server import HttpError, Reply, ToolCall

pytestmark = pytest.mark.asyncio(loop_scope="module")

HANDBOOK = """# Team handbook

## Deployments

We deploy the API every Tuesday at 10:00 UTC using the blue-green pipeline. Rollbacks are done by
switching the load balancer back to the previous colour, which takes about two minutes.

## On-call

The on-call engineer carries the pager for one week, from Monday to Monday.
"""
QUESTION = "How long does a rollback of the API deployment take?"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def handbook(llm_api: LoreApi) -> str:
    await llm_api.create_index("handbook")
    await llm_api.add_text("handbook", "handbook.md", HANDBOOK)
    return "handbook"


@pytest_asyncio.fixture(loop_scope="module")
async def client(gpt: LoreApi) -> AsyncIterator[AsyncOpenAI]:
    """The official client, pointed at Lore with the service key."""
    lore = AsyncOpenAI(base_url=gpt.base_url + "/v1", api_key=gpt.keys.service, max_retries=0)
    yield lore
    await lore.close()


def extra(model: Any, name: str) -> Any:
    """A field Lore adds to OpenAI's objects (`source_nodes` …)."""
    assert model.model_extra is not None and name in model.model_extra, model
    return model.model_extra[name]


async def test_models_lists_the_configured_model(client: AsyncOpenAI) -> None:
    models = await client.models.list()
    assert [m.id for m in models.data] == ["gpt-fake"]


async def test_without_an_index_the_request_passes_through_unchanged(
    gpt: LoreApi, client: AsyncOpenAI
) -> None:
    messages: Any = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Say hi"}]
    answer = await client.chat.completions.create(
        model="gpt-fake", messages=messages, temperature=0.25, seed=7, extra_body={"context_token_ratio": 0.5}
    )
    assert answer.choices[0].message.content == "This is a fake reply."
    assert extra(answer, "source_nodes") is None
    [sent] = gpt.chat_requests
    assert sent.json["messages"] == messages
    assert (sent.json["temperature"], sent.json["seed"], sent.json["model"]) == (0.25, 7, "gpt-fake")
    assert "context_token_ratio" not in sent.json


async def test_tools_pass_through_even_with_an_index(
    gpt: LoreApi, client: AsyncOpenAI, handbook: str
) -> None:
    assert gpt.llm is not None
    gpt.llm.enqueue(ToolCall("get_weather", {"city": "Oslo"}))
    tools: Any = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
    answer = await client.chat.completions.create(
        model="gpt-fake",
        messages=[{"role": "user", "content": "Weather in Oslo?"}],
        tools=tools,
        extra_body={"index_name": handbook},
    )
    call = answer.choices[0].message.tool_calls
    assert call is not None and call[0].function.name == "get_weather"  # type: ignore[union-attr]
    assert extra(answer, "source_nodes") is None
    [sent] = gpt.chat_requests
    assert sent.json["tools"] == tools and "index_name" not in sent.json


@pytest.mark.parametrize(
    "messages",
    [
        [{"role": "function", "name": "weather", "content": "75F"}, {"role": "user", "content": "Thanks!"}],
        [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "What is this?"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA=="}},
                ],
            }
        ],
    ],
    ids=["function-role", "image-content"],
)
async def test_other_roles_and_non_text_content_pass_through(
    gpt: LoreApi, handbook: str, messages: list[dict[str, Any]]
) -> None:
    body = {"model": "gpt-fake", "messages": messages, "index_name": handbook}
    status, answer = await gpt.call("POST", "/v1/chat/completions", json_body=body)
    assert status == 200, answer
    assert answer["source_nodes"] is None
    assert gpt.chat_requests[-1].json["messages"] == messages


async def test_an_answer_over_an_index_cites_its_sources(
    gpt: LoreApi, client: AsyncOpenAI, handbook: str
) -> None:
    assert gpt.llm is not None
    gpt.llm.enqueue(Reply("A rollback takes about two minutes [1]."))
    answer = await client.chat.completions.create(
        model="gpt-fake",
        messages=[
            {"role": "system", "content": "Answer like a pirate."},
            {"role": "user", "content": QUESTION},
        ],
        extra_body={"index_name": handbook},
    )
    assert answer.choices[0].message.content == "A rollback takes about two minutes [1]."
    assert answer.choices[0].finish_reason == "stop"
    nodes = extra(answer, "source_nodes")
    assert nodes and "two minutes" in nodes[0]["text"]
    assert nodes[0]["metadata"]["name"] == "handbook.md" and nodes[0]["metadata"]["cited"] is True
    assert nodes[0]["metadata"]["section"] == "Deployments", "the heading the passage stands under"
    assert isinstance(nodes[0]["doc_id"], int) and isinstance(nodes[0]["score"], float)
    [sent] = gpt.chat_requests
    system, user = sent.json["messages"][0]["content"], sent.json["messages"][-1]["content"]
    assert "<source " in user and "two minutes" in user and user.endswith(f"Question: {QUESTION}")
    assert "Answer like a pirate." in system


async def test_the_query_is_the_user_messages_since_the_last_answer(gpt: LoreApi, handbook: str) -> None:
    messages = [
        {"role": "user", "content": "Who carries the pager?"},
        {"role": "assistant", "content": "The on-call engineer."},
        {"role": "user", "content": "And about deployments:"},
        {"role": "user", "content": "how long does a rollback take?"},
    ]
    body = {"messages": messages, "index_names": [handbook]}
    assert gpt.llm is not None
    gpt.llm.enqueue(
        Reply("How long does a rollback take?"), Reply("About two minutes [1].")
    )  # rewrite, answer
    status, answer = await gpt.call("POST", "/v1/chat/completions", json_body=body)
    assert status == 200, answer
    sent = gpt.chat_requests[-1].json["messages"]
    assert sent[-1]["content"].endswith("Question: And about deployments:\n\nhow long does a rollback take?")
    assert sent[1:3] == messages[:2]  # the earlier turns are history


async def test_nothing_relevant_goes_to_the_model_without_context(gpt: LoreApi, handbook: str) -> None:
    body = {"messages": [{"role": "user", "content": "What rhymes with orange?"}], "index_name": handbook}
    status, answer = await gpt.call("POST", "/v1/chat/completions", json_body=body)
    assert status == 200
    assert answer["source_nodes"] == []
    assert "<source " not in gpt.chat_requests[-1].json["messages"][-1]["content"]


async def test_an_unknown_index_is_a_404(client: AsyncOpenAI) -> None:
    with pytest.raises(openai.NotFoundError) as caught:
        await client.chat.completions.create(
            model="gpt-fake", messages=[{"role": "user", "content": "hi"}], extra_body={"index_name": "nope"}
        )
    assert caught.value.status_code == 404
    assert "nope" in str(caught.value.body)


@pytest.mark.parametrize(
    ("body", "named"),
    [
        ({"messages": [{"role": "user", "content": "x"}], "context_token_ratio": 0.9}, "context_token_ratio"),
        ({"messages": [{"role": "user", "content": "x"}], "context_token_ratio": 0.1}, "context_token_ratio"),
        ({"messages": [{"role": "user", "content": "x"}], "n": 2}, "n=1"),
        ({"messages": []}, "messages"),
        ({"model": "gpt-fake"}, "messages"),
        ({"messages": [{"content": "no role"}]}, "messages.0.role"),
        ({"messages": [{"role": "user", "content": 42}]}, "messages.0.content"),
        ({"messages": [{"role": "user", "content": "x"}], "max_tokens": 0}, "max_tokens"),
        ({"messages": "hello"}, "messages"),
    ],
)
async def test_invalid_requests_are_400s_naming_the_problem(
    gpt: LoreApi, handbook: str, body: Any, named: str
) -> None:
    status, answer = await gpt.call(
        "POST", "/v1/chat/completions", json_body={**body, "index_name": handbook}
    )
    assert status == 400, answer
    assert named in assert_error(answer, "invalid_request_error")
    assert gpt.chat_requests == []


async def test_a_question_is_needed_after_the_last_answer(gpt: LoreApi, handbook: str) -> None:
    messages = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"}]
    status, body = await gpt.call(
        "POST", "/v1/chat/completions", json_body={"messages": messages, "index_name": handbook}
    )
    assert status == 400
    assert (
        assert_error(body, "invalid_request_error")
        == "There must be a user prompt since the latest assistant message."
    )


async def test_a_prompt_longer_than_the_window_is_a_400(gpt: LoreApi, handbook: str) -> None:
    long = "rollback " * (WINDOW + 100)
    body = {"messages": [{"role": "user", "content": long}], "index_name": handbook}
    status, answer = await gpt.call("POST", "/v1/chat/completions", json_body=body)
    assert status == 400
    assert "context window" in assert_error(answer, "invalid_request_error")
    assert gpt.chat_requests == []


async def test_max_tokens_above_the_space_left_is_lowered(gpt: LoreApi, handbook: str) -> None:
    messages = [{"role": "user", "content": QUESTION}]
    body = {"messages": messages, "index_name": handbook, "max_tokens": 100_000}
    status, _ = await gpt.call("POST", "/v1/chat/completions", json_body=body)
    assert status == 200
    prompt = TiktokenCounter().count_messages(messages)
    assert gpt.chat_requests[-1].json["max_tokens"] == WINDOW - prompt
    body = {"messages": messages, "index_name": handbook, "max_tokens": 50, "context_token_ratio": 0.2}
    assert (await gpt.call("POST", "/v1/chat/completions", json_body=body))[0] == 200
    assert gpt.chat_requests[-1].json["max_tokens"] == 50


async def test_streaming_over_an_index_ends_with_the_sources(
    gpt: LoreApi, client: AsyncOpenAI, handbook: str
) -> None:
    assert gpt.llm is not None
    gpt.llm.enqueue(Reply("Rollbacks take about two minutes [1]."))
    stream = await client.chat.completions.create(
        model="gpt-fake",
        messages=[{"role": "user", "content": QUESTION + " (streamed)"}],
        stream=True,
        extra_body={"index_name": handbook},
    )
    chunks = [chunk async for chunk in stream]
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "Rollbacks take about two minutes [1]."  # checked against its sources, then sent
    last = chunks[-1]
    assert last.choices[0].finish_reason == "stop"
    assert "two minutes" in extra(last, "source_nodes")[0]["text"]


async def test_streaming_passes_through_too(gpt: LoreApi, client: AsyncOpenAI) -> None:
    stream = await client.chat.completions.create(
        model="gpt-fake", messages=[{"role": "user", "content": "stream me"}], stream=True
    )
    text = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
    assert text == "This is a fake reply."


@pytest.mark.parametrize(
    ("failure", "status", "kind"),
    [
        (HttpError(400, "Unknown model."), 400, "invalid_request_error"),
        (HttpError(429, headers={"retry-after-ms": "1"}), 429, "rate_limit_error"),
        (HttpError(500), 502, "upstream_error"),
        (HttpError(401, "Incorrect API key provided."), 502, "upstream_error"),
    ],
)
async def test_model_errors_on_pass_through_keep_the_error_shape(
    gpt: LoreApi, failure: HttpError, status: int, kind: str
) -> None:
    assert gpt.llm is not None
    gpt.llm.enqueue(failure)
    got, body = await gpt.call(
        "POST", "/v1/chat/completions", json_body={"messages": [{"role": "user", "content": "hi"}]}
    )
    assert got == status, body
    assert_error(body, kind)


async def test_a_model_outage_over_an_index_falls_back_to_quoting(gpt: LoreApi, handbook: str) -> None:
    assert gpt.llm is not None
    gpt.llm.enqueue(HttpError(503))
    body = {"messages": [{"role": "user", "content": QUESTION + " (outage)"}], "index_name": handbook}
    status, answer = await gpt.call("POST", "/v1/chat/completions", json_body=body)
    assert status == 200
    text = answer["choices"][0]["message"]["content"]
    assert text.startswith("Extractive answer (the language model could not answer)")
    assert "two minutes" in text
    assert answer["source_nodes"]


async def test_a_general_knowledge_answer_is_labelled_for_a_plain_openai_client(
    gpt: LoreApi, client: AsyncOpenAI, handbook: str
) -> None:
    """A plain client reads no `warnings`: the label is in the content, first when the answer
    is whole, last when it was streamed (a label cannot precede what is already sent)."""
    assert gpt.llm is not None
    messages: Any = [{"role": "user", "content": "Who won the 1998 football world cup?"}]  # /v1 is HYBRID
    gpt.llm.enqueue(Reply("France won it."), Reply("France won it."))
    whole = await client.chat.completions.create(
        model="gpt-fake", messages=messages, extra_body={"index_name": handbook}
    )
    label = f"_{worded(Notice(NoticeKind.GENERAL_KNOWLEDGE))}_"
    assert whole.choices[0].message.content == f"{label}\n\nFrance won it."
    stream = await client.chat.completions.create(
        model="gpt-fake", messages=messages, stream=True, extra_body={"index_name": handbook}
    )
    text = "".join([chunk.choices[0].delta.content or "" async for chunk in stream if chunk.choices])
    assert text == f"France won it.\n\n{label}"
