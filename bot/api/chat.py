"""`POST /v1/chat/completions`, `POST /enhanced-chat/completions` and `GET /v1/models`.

OpenAI-compatible chat with `index_name`/`index_names`: the latest user messages are the
query, passages are selected under the token budget, and the answer comes back as a chat
completion with `source_nodes`. Requests that name no index, carry tools or functions,
other roles or non-text content go to the model unchanged (`source_nodes` null). The
enhanced route also reads directives from the system message (`bot.api.directives`) and
reports the response mode, the fallback and warnings.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import replace
from typing import Any

from aiohttp import web

from bot.api.auth import caller
from bot.api.bodies import json_object, validated
from bot.api.chat_models import (
    LORE_FIELDS,
    ChatCompletionBody,
    ChatCompletionOut,
    EnhancedCompletionOut,
    ModelList,
    ModelOut,
    bypass_reason,
)
from bot.api.completions import (
    EXTRACTIVE_MODEL,
    ChunkWriter,
    answer_text,
    completion,
    notice_lines,
    open_stream,
    send_event,
    source_nodes,
)
from bot.api.directives import SYSTEM_ROLES, Directives, read_directives
from bot.api.errors import BadRequest, ServiceUnavailable, error_event
from bot.api.routes import Reply, Route
from bot.api.state import ApiState, state
from bot.chat.messages import notice as worded
from knowledge import (
    DEFAULT_RATIO,
    Answer,
    BudgetError,
    Delta,
    FallbackStrategy,
    KnowledgeError,
    QuestionError,
    Request,
    ResponseMode,
    message_text,
)
from storage.access import Action
from storage.records import IndexRef

log = logging.getLogger(__name__)

Json = dict[str, Any]
Extras = Callable[[Answer | None], Json]
NO_QUESTION = "There must be a user prompt since the latest assistant message."
NO_MODEL = (
    "No language model is configured, so a request without an index (or with tools, images or "
    "other roles) has nowhere to go. Set OPENAI_BASE_URL or OPENAI_API_KEY, or name an index."
)
STARTED = int(time.time())


async def chat_completions(request: web.Request) -> web.StreamResponse:
    return await _chat(request, enhanced=False)


async def enhanced_chat_completions(request: web.Request) -> web.StreamResponse:
    return await _chat(request, enhanced=True)


async def list_models(request: web.Request) -> web.Response:
    models = ModelList(data=[ModelOut(id=_model(state(request)), created=STARTED, owned_by="lore")])
    return web.json_response(models.model_dump())


async def _chat(request: web.Request, *, enhanced: bool) -> web.StreamResponse:
    api, place = state(request), caller(request).place
    raw = await json_object(request)
    body = validated(ChatCompletionBody, raw)
    messages: list[Json] = list(raw["messages"])
    directives = Directives()
    if enhanced:
        directives, messages = read_directives(messages)
    indexes = [await api.services.catalog.find(place, name, Action.SEARCH) for name in body.indexes()]
    extras = _enhanced_extras(directives) if enhanced else _no_extras
    endpoint = "enhanced" if enhanced else "chat"
    reason = bypass_reason(body)
    if reason is not None:
        log.debug("chat request passed through: %s", reason)
        api.metrics.answer(endpoint, "pass_through", None)
        return await _pass_through(request, api, {**raw, "messages": messages}, extras(None))
    access = await api.services.actions.access.for_place(place)
    ask = replace(_engine_request(body, indexes, messages, directives, enhanced=enhanced), access=access)
    events = api.services.knowledge.ask_stream(ask, stream=bool(body.stream))
    first = await _first(events)
    if body.stream:
        return await _stream(request, api, first, events, extras, endpoint)
    assert isinstance(first, Answer), "without streaming the engine yields only the answer"
    _count(api, endpoint, first)
    return web.json_response(completion(first, _model(api), extras(first)))


def _engine_request(
    body: ChatCompletionBody,
    indexes: Sequence[IndexRef],
    messages: Sequence[Json],
    directives: Directives,
    *,
    enhanced: bool,
) -> Request:
    """The engine's request: /v1 answers in HYBRID mode (the model without context when
    nothing relevant is found); the enhanced route defaults as the directives document."""
    default_mode = None if enhanced else ResponseMode.HYBRID
    default_fallback = FallbackStrategy.HYBRID if enhanced else FallbackStrategy.LLM_KNOWLEDGE
    return Request(
        indexes,
        messages,
        mode=directives.response_mode or default_mode,
        max_tokens=body.answer_tokens,
        ratio=body.context_token_ratio or DEFAULT_RATIO,
        context=directives.context_filter() or None,
        instructions=_instructions(messages),
        min_confidence=directives.min_confidence,
        fallback=directives.fallback_strategy or default_fallback,
    )


async def _first(events: AsyncIterator[Delta | Answer]) -> Delta | Answer:
    """The first event; the engine's refusals surface here, before any response is sent."""
    try:
        return await anext(events)
    except QuestionError:
        raise BadRequest(NO_QUESTION) from None
    except BudgetError as exc:
        raise BadRequest(f"Prompt length exceeds context window: {exc}.") from None


async def _stream(
    request: web.Request,
    api: ApiState,
    first: Delta | Answer,
    events: AsyncIterator[Delta | Answer],
    extras: Extras,
    endpoint: str,
) -> web.StreamResponse:
    response = await open_stream(request)
    writer = ChunkWriter(response, _model(api))
    try:
        answer = await _write_answer(writer, first, events)
    except ConnectionResetError:  # the caller left
        raise
    except Exception as exc:  # the status is sent already: the error goes in the stream
        log.exception("streamed chat completion failed")
        await send_event(response, error_event(exc))
    else:
        _count(api, endpoint, answer)
        await writer.delta({}, "stop", source_nodes=source_nodes(answer), **extras(answer))
    await writer.done()
    return response


async def _write_answer(
    writer: ChunkWriter, first: Delta | Answer, events: AsyncIterator[Delta | Answer]
) -> Answer:
    """The answer's text as chunks: as the model writes it, or whole; the answer."""
    await writer.delta({"role": "assistant", "content": ""})
    streamed = False
    event: Delta | Answer | None = first
    while isinstance(event, Delta):
        await writer.delta({"content": event.text})
        streamed = True
        event = await anext(events, None)
    assert isinstance(event, Answer), "the engine always ends with the answer"
    writer.model = event.model or writer.model
    if not streamed:
        await writer.delta({"content": answer_text(event)})
    elif event.model is None:  # the model failed mid-answer; what the documents say follows
        await writer.delta({"content": "\n\n" + answer_text(event)})
    elif event.notices:  # a streamed answer's labels can only follow it
        await writer.delta({"content": "\n\n" + notice_lines(event)})
    return event


async def _pass_through(request: web.Request, api: ApiState, raw: Json, extra: Json) -> web.StreamResponse:
    """The request as the caller sent it (less Lore's own fields), to the model."""
    if api.passthrough is None:
        raise ServiceUnavailable(NO_MODEL)
    forward = {k: v for k, v in raw.items() if k not in LORE_FIELDS}
    forward["model"] = forward.get("model") or api.services.settings.llm_model
    if not forward.get("stream"):
        answer = await api.passthrough.forward(forward)
        return web.json_response({**answer, "source_nodes": None, **extra})
    chunks = api.passthrough.forward_stream(forward)
    first = await anext(chunks, None)
    response = await open_stream(request)
    try:
        if first is not None:
            await send_event(response, first)
        async for chunk in chunks:
            await send_event(response, chunk)
    except KnowledgeError as exc:
        await send_event(response, error_event(exc))
    finally:
        await chunks.aclose()
    await response.write(b"data: [DONE]\n\n")
    await response.write_eof()
    return response


def _instructions(messages: Sequence[Json]) -> str:
    """The caller's system and developer messages, for the model after Lore's own."""
    texts = [message_text(m).strip() for m in messages if m.get("role") in SYSTEM_ROLES]
    return "\n\n".join(t for t in texts if t)


def _model(api: ApiState) -> str:
    return api.services.settings.llm_model if api.services.knowledge.generative else EXTRACTIVE_MODEL


def _count(api: ApiState, endpoint: str, answer: Answer) -> None:
    api.metrics.answer(endpoint, answer.mode.value, answer.fallback.value if answer.fallback else None)


def _no_extras(_answer: Answer | None) -> Json:
    return {}


def _enhanced_extras(directives: Directives) -> Extras:
    def extras(answer: Answer | None) -> Json:
        notices = [worded(n) for n in answer.notices] if answer is not None else []
        return {
            "response_mode": answer.mode.value if answer is not None else None,
            "fallback_used": answer is not None and answer.fallback is not None,
            "fallback_reason": answer.fallback.value if answer is not None and answer.fallback else None,
            "warnings": [*directives.warnings, *notices],
        }

    return extras


CHAT_REPLIES = {
    200: Reply(
        "A chat completion (or, with `stream: true`, server-sent chat.completion.chunk events).",
        ChatCompletionOut,
    )
}

ROUTES = [
    Route(
        "POST",
        "/v1/chat/completions",
        chat_completions,
        "OpenAI-compatible chat completion, answered over `index_name`/`index_names`.",
        "chat",
        CHAT_REPLIES,
        body=ChatCompletionBody,
        streams=("text/event-stream",),
    ),
    Route(
        "POST",
        "/enhanced-chat/completions",
        enhanced_chat_completions,
        "Chat completion with directives in the system message (RESPONSE_MODE, DOCUMENT_CONTEXT …).",
        "chat",
        {
            200: Reply(
                "A chat completion with the response mode, fallback and warnings.", EnhancedCompletionOut
            )
        },
        body=ChatCompletionBody,
        streams=("text/event-stream",),
    ),
    Route(
        "GET",
        "/v1/models",
        list_models,
        "The configured model.",
        "chat",
        {200: Reply("The models Lore answers with.", ModelList)},
    ),
]
