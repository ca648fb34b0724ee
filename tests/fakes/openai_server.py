"""A fake OpenAI-compatible server: scripted chat completions, toy embeddings, a model list.

    async with FakeOpenAI() as llm:
        llm.enqueue(Reply("See [1]."), HttpError(429, headers={"retry-after-ms": "1"}))
        client = AsyncOpenAI(base_url=llm.base_url, api_key="test", max_retries=0)

Chat requests take the next scripted reply from the queue, or `default_reply` when it is
empty. Every request is kept in `history`. Embeddings are deterministic (`toy_embedding`).
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import math
import random
import re
import struct
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from aiohttp import web

from . import LoopbackServer, Recorder, copy_headers

FinishReason = Literal["stop", "length", "tool_calls", "content_filter"]
Json = dict[str, Any]


@dataclass(frozen=True)
class Reply:
    """An assistant message; streamed as one content delta per word."""

    text: str | None
    finish_reason: FinishReason = "stop"


@dataclass(frozen=True)
class Length(Reply):
    """A reply cut short by `max_tokens`."""

    finish_reason: FinishReason = "length"


@dataclass(frozen=True)
class ContentFilter(Reply):
    """A reply withheld by the content filter: no content at all."""

    text: str | None = None
    finish_reason: FinishReason = "content_filter"


@dataclass(frozen=True)
class EmptyContent(Reply):
    """A 'stop' reply with no text: `None`, or pass '' for an empty string."""

    text: str | None = None


@dataclass(frozen=True)
class Refusal:
    """The model declines: `message.refusal` is set and `content` is None."""

    text: str


@dataclass(frozen=True)
class ToolCall:
    """One function call; `call_id` defaults to 'call_<request number>'."""

    name: str
    arguments: Mapping[str, Any]
    call_id: str | None = None


@dataclass(frozen=True)
class HttpError:
    """An error status with OpenAI's JSON error body.

    The client ignores `retry-after: 0` and backs off ~0.5 s instead; for fast retries send
    `{"retry-after-ms": "1"}`, which it prefers.
    """

    status: int
    message: str = "The fake server was told to fail this request."
    headers: Mapping[str, str] = field(default_factory=dict)
    type: str | None = None
    code: str | None = None


@dataclass(frozen=True)
class Delay:
    """Wait `seconds` before answering with `then` (the default reply when None)."""

    seconds: float
    then: Scripted | None = None


@dataclass(frozen=True)
class Callback:
    """Answer with `fn(request_json)`: any scripted reply, or a plain string for a `Reply`."""

    fn: Callable[[Json], Scripted | str]


Scripted = Reply | Refusal | ToolCall | HttpError | Delay | Callback
Final = Reply | Refusal | ToolCall | HttpError

_ERROR_KINDS: dict[int, tuple[str, str | None]] = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    404: ("invalid_request_error", "model_not_found"),
    429: ("requests", "rate_limit_exceeded"),
}


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the fake received it; `json` is None for bodiless requests."""

    method: str
    path: str
    headers: Mapping[str, str]
    json: Any
    received_at: float

    @property
    def messages(self) -> list[Json]:
        return list(self.json.get("messages", [])) if isinstance(self.json, dict) else []


def toy_embedding(text: str, dimensions: int = 64) -> list[float]:
    """A deterministic unit vector: the normalised sum of one seeded vector per word.

    Equal texts give equal vectors and texts that share words point the same way, which is
    enough for retrieval tests. Values are float32, exactly as the base64 encoding carries.
    """
    total = [0.0] * dimensions
    for word in re.findall(r"\w+", text.lower()) or [text]:
        rng = random.Random(hashlib.sha256(word.encode()).digest())
        for i in range(dimensions):
            total[i] += rng.gauss(0.0, 1.0)
    norm = math.sqrt(sum(x * x for x in total)) or 1.0
    unit = [x / norm for x in total]
    return list(struct.unpack(f"<{dimensions}f", struct.pack(f"<{dimensions}f", *unit)))


def _tokens(text: str) -> int:
    return len(text) // 4


def _prompt_text(body: Json) -> str:
    parts: list[str] = []
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "\n".join(parts)


def _words(text: str) -> list[str]:
    return re.findall(r"\S+\s*|\s+", text)


def _slices(text: str, size: int = 8) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


@dataclass(frozen=True)
class _Turn:
    """A settled reply in both shapes: a whole message, and its stream of deltas."""

    message: Json
    deltas: list[Json]
    finish_reason: str
    output_text: str


def _turn(final: Reply | Refusal | ToolCall, call_id: str) -> _Turn:
    if isinstance(final, Reply):
        return _text_turn(final)
    if isinstance(final, Refusal):
        return _refusal_turn(final)
    return _tool_turn(final, final.call_id or call_id)


def _assistant(**fields: Any) -> Json:
    return {"role": "assistant", "content": None, "refusal": None, "annotations": [], **fields}


def _text_turn(reply: Reply) -> _Turn:
    text = reply.text
    first: Json = {
        "role": "assistant",
        "content": "" if text is not None else None,
        "refusal": None,
    }
    deltas = [first, *({"content": w} for w in _words(text or ""))]
    return _Turn(_assistant(content=text), deltas, reply.finish_reason, text or "")


def _refusal_turn(refusal: Refusal) -> _Turn:
    first: Json = {"role": "assistant", "content": None, "refusal": ""}
    deltas = [first, *({"refusal": w} for w in _words(refusal.text))]
    return _Turn(_assistant(refusal=refusal.text), deltas, "stop", refusal.text)


def _tool_turn(call: ToolCall, call_id: str) -> _Turn:
    """One call; in a stream the id and name come first, then the arguments in slices."""
    arguments = json.dumps(dict(call.arguments))
    function = {"name": call.name, "arguments": arguments}
    message = _assistant(tool_calls=[{"id": call_id, "type": "function", "function": function}])
    head = {"name": call.name, "arguments": ""}
    opening = {"index": 0, "id": call_id, "type": "function", "function": head}
    deltas: list[Json] = [{"role": "assistant", "content": None, "tool_calls": [opening]}]
    for piece in _slices(arguments):
        deltas.append({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]})
    return _Turn(message, deltas, "tool_calls", arguments)


def _error_body(error: HttpError) -> Json:
    kind, code = _ERROR_KINDS.get(error.status, ("server_error", None))
    detail = {"message": error.message, "type": error.type or kind, "param": None}
    return {"error": {**detail, "code": error.code or code}}


class FakeOpenAI(LoopbackServer):
    """OpenAI-compatible server on loopback; point a client at `base_url` ('.../v1').

    `api_key`: when set, requests bearing another key get 401 `invalid_api_key`.
    `default_reply`: answers chat requests once the queue is empty (mutable attribute).
    `embedding_dimensions`: vector size unless a request passes `dimensions`.
    """

    def __init__(
        self,
        *,
        default_reply: Scripted = Reply("This is a fake reply."),
        embedding_dimensions: int = 64,
        models: tuple[str, ...] = ("gpt-fake", "text-embedding-fake"),
        api_key: str | None = None,
    ) -> None:
        super().__init__()
        self.default_reply = default_reply
        self.embedding_dimensions = embedding_dimensions
        self.models = models
        self.api_key = api_key
        self._queue: deque[Scripted] = deque()
        self._embedding_queue: deque[HttpError | Delay] = deque()
        self._history: Recorder[RecordedRequest] = Recorder(lambda r: r.path)
        self._serial = itertools.count(1)

    @property
    def base_url(self) -> str:
        return f"{super().base_url}/v1"

    def enqueue(self, *replies: Scripted) -> None:
        """Queue the answers to the next chat requests, in order."""
        self._queue.extend(replies)

    def enqueue_embeddings(self, *outcomes: HttpError | Delay) -> None:
        """Make the next embedding requests fail or stall (`Delay.then` is ignored)."""
        self._embedding_queue.extend(outcomes)

    @property
    def pending(self) -> int:
        """Scripted chat replies not yet used."""
        return len(self._queue)

    @property
    def history(self) -> list[RecordedRequest]:
        return self._history.snapshot()

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        return [r for r in self.history if r.path.endswith("/chat/completions")]

    @property
    def embedding_requests(self) -> list[RecordedRequest]:
        return [r for r in self.history if r.path.endswith("/embeddings")]

    async def wait_for(
        self,
        count: int = 1,
        *,
        path: str = "/v1/chat/completions",
        timeout: float = 5.0,  # noqa: ASYNC109 - on expiry, the error lists what did arrive
    ) -> list[RecordedRequest]:
        """Wait until `count` requests to `path` have arrived; return those requests."""
        what = f"request(s) to {path}"
        return await self._history.wait_for(lambda r: r.path == path, count, timeout, what)

    def wait_for_sync(
        self, count: int = 1, *, path: str = "/v1/chat/completions", timeout: float = 5.0
    ) -> list[RecordedRequest]:
        """Blocking `wait_for`, for a server started with `with` / `start_in_thread()`."""
        what = f"request(s) to {path}"
        return self._history.wait_for_sync(lambda r: r.path == path, count, timeout, what)

    def build_app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_post("/v1/embeddings", self._embeddings)
        app.router.add_get("/v1/models", self._models)
        return app

    async def _record(self, request: web.Request) -> Any:
        received = time.monotonic()
        body: Any = None
        if request.can_read_body:
            try:
                body = await request.json()
            except json.JSONDecodeError:
                body = await request.text()
        headers = copy_headers(request)
        self._history.append(RecordedRequest(request.method, request.path, headers, body, received))
        return body

    def _refusal_of(self, request: web.Request, body: Any) -> HttpError | None:
        """The error a real server would give before looking at the script, if any."""
        if self.api_key is not None and request.headers.get("Authorization") != (f"Bearer {self.api_key}"):
            return HttpError(401, "Incorrect API key provided.")
        if not isinstance(body, dict):
            return HttpError(400, "We could not parse the JSON body of your request.")
        return None

    def _answer_error(self, error: HttpError) -> web.Response:
        headers = {**error.headers, "x-request-id": f"req_fake_{next(self._serial)}"}
        return web.json_response(_error_body(error), status=error.status, headers=headers)

    async def _settle(self, item: Scripted, body: Json) -> Final:
        while True:
            if isinstance(item, Delay):
                await self.pause(item.seconds)
                item = item.then or self.default_reply
            elif isinstance(item, Callback):
                answer = item.fn(body)
                item = Reply(answer) if isinstance(answer, str) else answer
            else:
                return item

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body = await self._record(request)
        if error := self._refusal_of(request, body):
            return self._answer_error(error)
        scripted = self._queue.popleft() if self._queue else self.default_reply
        final = await self._settle(scripted, body)
        if isinstance(final, HttpError):
            return self._answer_error(final)
        serial = next(self._serial)
        turn = _turn(final, f"call_fake_{serial}")
        head = {
            "id": f"chatcmpl-fake-{serial}",
            "created": int(time.time()),
            "model": str(body.get("model", self.models[0])),
            "system_fingerprint": "fp_fake",
        }
        usage = _usage(_prompt_text(body), turn.output_text)
        headers = {"x-request-id": f"req_fake_{serial}"}
        if not body.get("stream"):
            return web.json_response(_completion(head, turn, usage), headers=headers)
        include_usage = (body.get("stream_options") or {}).get("include_usage")
        return await _stream(request, _chunks(head, turn, usage if include_usage else None), headers)

    async def _embeddings(self, request: web.Request) -> web.Response:
        body = await self._record(request)
        if error := self._refusal_of(request, body):
            return self._answer_error(error)
        if self._embedding_queue:
            outcome = self._embedding_queue.popleft()
            if isinstance(outcome, HttpError):
                return self._answer_error(outcome)
            await self.pause(outcome.seconds)
        texts = _embedding_inputs(body.get("input"))
        if not texts:
            return self._answer_error(HttpError(400, "'input' must be a non-empty string or list."))
        dimensions = int(body.get("dimensions") or self.embedding_dimensions)
        as_base64 = body.get("encoding_format") == "base64"
        vectors = [_encode(toy_embedding(t, dimensions), as_base64) for t in texts]
        data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
        tokens = sum(_tokens(t) for t in texts)
        usage = {"prompt_tokens": tokens, "total_tokens": tokens}
        model = str(body.get("model", self.models[-1]))
        return web.json_response({"object": "list", "data": data, "model": model, "usage": usage})

    async def _models(self, request: web.Request) -> web.Response:
        await self._record(request)
        if error := self._refusal_of(request, {}):
            return self._answer_error(error)
        data = [{"id": m, "object": "model", "created": 1700000000, "owned_by": "fake"} for m in self.models]
        return web.json_response({"object": "list", "data": data})


def _usage(prompt: str, output: str) -> Json:
    prompt_tokens, completion_tokens = _tokens(prompt), _tokens(output)
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
        "prompt_tokens_details": {"cached_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0},
    }


def _completion(head: Json, turn: _Turn, usage: Json) -> Json:
    choice = {"index": 0, "message": turn.message, "logprobs": None}
    choices = [{**choice, "finish_reason": turn.finish_reason}]
    return {**head, "object": "chat.completion", "choices": choices, "usage": usage}


async def _stream(request: web.Request, chunks: Iterator[Json], headers: Json) -> web.StreamResponse:
    sse = {"Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-cache"}
    response = web.StreamResponse(headers={**sse, **headers})
    await response.prepare(request)
    for chunk in chunks:
        await response.write(b"data: " + json.dumps(chunk, separators=(",", ":")).encode() + b"\n\n")
    await response.write(b"data: [DONE]\n\n")
    await response.write_eof()
    return response


def _chunks(head: Json, turn: _Turn, usage: Json | None) -> Iterator[Json]:
    """The `chat.completion.chunk` events of a turn; usage rides in a last, choiceless one."""
    base = {**head, "object": "chat.completion.chunk"}
    if usage is not None:
        base["usage"] = None

    def chunk(delta: Json, finish_reason: str | None) -> Json:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
        return {**base, "choices": [choice]}

    yield from (chunk(delta, None) for delta in turn.deltas)
    yield chunk({}, turn.finish_reason)
    if usage is not None:
        yield {**base, "choices": [], "usage": usage}


def _embedding_inputs(value: Any) -> list[str]:
    """The texts to embed; a token-id array counts as one text, in its printed form."""
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list) or not value:
        return []
    if all(isinstance(v, int) for v in value):
        return [str(value)]
    return [v if isinstance(v, str) else str(v) for v in value]


def _encode(vector: list[float], as_base64: bool) -> list[float] | str:
    """A vector as JSON floats, or as base64 of little-endian float32 (the client's default)."""
    if not as_base64:
        return vector
    return base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()
