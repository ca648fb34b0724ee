"""The chat model seam: `ChatModel`, and its OpenAI-compatible implementation.

The only module that talks to `openai` for chat. Responses are read defensively: content
may be None or empty (tool calls, a refusal, `finish_reason` length or content_filter), and
each such case becomes a `problem` sentence the surfaces can show. Retries on 429/5xx and
timeouts are the client's own (`LLM_MAX_RETRIES`); after them, `LLMUnavailable`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from knowledge.errors import LLMRejected, LLMUnavailable

log = logging.getLogger(__name__)

Message = dict[str, Any]

PROBLEMS = {
    "length": "the model stopped at its length limit, so this answer may be cut short",
    "content_filter": "the model's content filter withheld the answer",
    "tool_calls": "the model asked to call a tool instead of answering",
}


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Completion:
    text: str
    model: str
    finish_reason: str | None
    refusal: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)

    @property
    def problem(self) -> str | None:
        """Why the text is missing or incomplete, in words fit for a user; None if fine."""
        if self.refusal:
            return f"the model declined to answer: {self.refusal}"
        if self.finish_reason in PROBLEMS and not (self.finish_reason == "tool_calls" and self.text):
            return PROBLEMS[self.finish_reason]
        if not self.text.strip():
            return "the model returned an empty answer"
        return None


@dataclass(frozen=True)
class Delta:
    """A piece of streamed answer text."""

    text: str


class ChatModel(Protocol):
    @property
    def model(self) -> str: ...
    async def complete(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int | None = None,
        tools: list[dict[str, Any]] | None = None,
    ) -> Completion: ...
    def stream(
        self, messages: Sequence[Message], *, max_tokens: int | None = None
    ) -> AsyncIterator[Delta | Completion]: ...


class PassThrough(Protocol):
    """Chat requests sent to the model exactly as a caller wrote them (the HTTP API's
    pass-through: tool calls, images, no index named)."""

    async def forward(self, body: Mapping[str, Any]) -> dict[str, Any]: ...
    def forward_stream(self, body: Mapping[str, Any]) -> AsyncGenerator[dict[str, Any], None]: ...


class OpenAIChatModel:
    """Any OpenAI-compatible chat endpoint (OpenAI, Ollama, vLLM …) via `AsyncOpenAI`."""

    def __init__(self, client: Any, model: str) -> None:
        self._client = client
        self._model = model

    @property
    def model(self) -> str:
        return self._model

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int | None = None,
        tools: list[dict[str, Any]] | None = None,
    ) -> Completion:
        import openai

        extra: dict[str, Any] = {"tools": tools} if tools else {}
        try:
            response = await self._client.chat.completions.create(
                model=self._model, messages=list(messages), max_tokens=max_tokens, **extra
            )
        except openai.OpenAIError as exc:
            raise LLMUnavailable(_unavailable(exc)) from exc
        return _log(_completion(response, self._model))

    async def stream(
        self, messages: Sequence[Message], *, max_tokens: int | None = None
    ) -> AsyncIterator[Delta | Completion]:
        """Yield text as it arrives, then the whole `Completion`."""
        import openai

        parts: list[str] = []
        finish: str | None = None
        refusal: list[str] = []
        model = self._model
        try:
            chunks = await self._client.chat.completions.create(
                model=self._model, messages=list(messages), max_tokens=max_tokens, stream=True
            )
            async for chunk in chunks:
                model = chunk.model or model
                for choice in chunk.choices or []:
                    delta = choice.delta
                    if delta is not None and delta.content:
                        parts.append(delta.content)
                        yield Delta(delta.content)
                    if delta is not None and getattr(delta, "refusal", None):
                        refusal.append(delta.refusal)
                    finish = choice.finish_reason or finish
        except openai.OpenAIError as exc:
            raise LLMUnavailable(_unavailable(exc)) from exc
        yield _log(Completion("".join(parts), model, finish, "".join(refusal) or None))

    async def forward(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """The model's JSON answer to `body`, unchanged. Raises `LLMRejected` for a 4xx,
        `LLMUnavailable` when the model cannot be reached or fails."""
        import openai

        try:
            answer = await self._client.post("/chat/completions", cast_to=object, body=dict(body))
        except openai.OpenAIError as exc:
            raise _forward_error(exc) from exc
        if not isinstance(answer, dict):
            raise LLMUnavailable("the LLM answered with something other than a JSON object")
        return answer

    async def forward_stream(self, body: Mapping[str, Any]) -> AsyncGenerator[dict[str, Any], None]:
        """The chunks of the model's streamed answer to `body`, unchanged."""
        import openai

        try:
            chunks = await self._client.post(
                "/chat/completions",
                cast_to=object,
                body={**body, "stream": True},
                stream=True,
                stream_cls=openai.AsyncStream[object],
            )
            async for chunk in chunks:
                if isinstance(chunk, dict):
                    yield chunk
        except openai.OpenAIError as exc:
            raise _forward_error(exc) from exc


def _forward_error(exc: Exception) -> LLMRejected | LLMUnavailable:
    """A 4xx keeps its status and the model's own message; anything else is an outage."""
    import openai

    if isinstance(exc, openai.APIStatusError) and 400 <= exc.status_code < 500:
        body = exc.body if isinstance(exc.body, dict) else {}
        message = body.get("message") if isinstance(body.get("message"), str) else None
        return LLMRejected(exc.status_code, message or f"the LLM refused the request ({exc.status_code})")
    return LLMUnavailable(_unavailable(exc))


def _completion(response: Any, model: str) -> Completion:
    if not response.choices:
        return Completion("", response.model or model, None)
    choice = response.choices[0]
    message = choice.message
    calls = [
        ToolCall(call.id, call.function.name, _arguments(call.function.arguments))
        for call in (message.tool_calls or [])
        if getattr(call, "function", None) is not None
    ]
    return Completion(
        text=message.content or "",
        model=response.model or model,
        finish_reason=choice.finish_reason,
        refusal=getattr(message, "refusal", None),
        tool_calls=calls,
    )


def _arguments(raw: str | None) -> dict[str, Any]:
    try:
        parsed = json.loads(raw or "{}")
    except json.JSONDecodeError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _log(completion: Completion) -> Completion:
    log.info(
        "llm model=%s finish_reason=%s content_length=%s tool_calls=%s refusal=%s",
        completion.model,
        completion.finish_reason,
        len(completion.text) if completion.text else None,
        bool(completion.tool_calls),
        completion.refusal is not None,
    )
    return completion


def _unavailable(exc: Exception) -> str:
    import openai

    if isinstance(exc, openai.RateLimitError):
        return "the LLM is rate-limiting us (429) and kept refusing after retries"
    if isinstance(exc, openai.APITimeoutError):
        return "the LLM did not answer in time"
    if isinstance(exc, openai.APIConnectionError):
        return "the LLM is unreachable"
    if isinstance(exc, openai.APIStatusError):
        return f"the LLM answered with an error ({exc.status_code})"
    return f"the LLM failed ({type(exc).__name__})"
