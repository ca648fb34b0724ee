"""An `Answer` as OpenAI's chat completion, whole or as `chat.completion.chunk` events, with
the passages it came from as `source_nodes`."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Mapping
from typing import Any

from aiohttp import web

from bot.chat.messages import notice as worded
from knowledge import HEDGED, Answer, Citation, Fallback

Json = dict[str, Any]
EXTRACTIVE_MODEL = "lore-extractive"
SSE_HEADERS = {"Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-cache"}


def completion_id() -> str:
    return f"chatcmpl-lore-{uuid.uuid4().hex}"


def answer_text(answer: Answer) -> str:
    """What the caller reads: the model's answer under its notices (general knowledge, not
    sure, …: a plain OpenAI client sees no `warnings`), or the quoted passages saying they
    are extractive (and whether Lore is sure), or an honest "nothing found"."""
    if answer.model is not None:
        return f"{notice_lines(answer)}\n\n{answer.text}" if answer.notices else answer.text
    if answer.abstained:
        where = ", ".join(answer.searched) or "no index"
        return f"Nothing in the indexes searched ({where}) answers this."
    reason = (
        "the language model could not answer"
        if answer.fallback == Fallback.LLM_UNAVAILABLE
        else "no language model is configured"
    )
    hedge = f"_{worded(HEDGED)}_\n\n" if answer.hedged else ""
    return f"{hedge}Extractive answer ({reason}): passages quoted from the documents.\n\n{answer.text}"


def notice_lines(answer: Answer) -> str:
    """The answer's notices, one italic line each."""
    return "\n".join(f"_{worded(said)}_" for said in answer.notices)


def source_nodes(answer: Answer) -> list[Json]:
    """Every passage the answer drew on, cited or not, with its document's metadata."""
    cited = {c.n for c in answer.citations}
    passages = answer.context or answer.citations
    return [_node(c, c.n in cited) for c in passages]


def _node(citation: Citation, cited: bool) -> Json:
    return {
        "doc_id": citation.document_id,
        "text": citation.text,
        "score": citation.score,
        "metadata": {
            "n": citation.n,
            "name": citation.name,
            "section": citation.section or None,
            "url": citation.url,
            "author": citation.author,
            "index": citation.index_name,
            "time_added": citation.time_added.isoformat(),
            "doc_timestamp": citation.doc_timestamp.isoformat() if citation.doc_timestamp else None,
            "cited": cited,
        },
    }


def completion(answer: Answer, model: str, extra: Mapping[str, Any]) -> Json:
    message = {"role": "assistant", "content": answer_text(answer), "refusal": None}
    return {
        "id": completion_id(),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": answer.model or model,
        "choices": [{"index": 0, "message": message, "finish_reason": "stop", "logprobs": None}],
        "source_nodes": source_nodes(answer),
        **extra,
    }


class ChunkWriter:
    """Writes one completion as server-sent events in OpenAI's chunk format."""

    def __init__(self, response: web.StreamResponse, model: str) -> None:
        self._response = response
        self._head = {"id": completion_id(), "object": "chat.completion.chunk", "created": int(time.time())}
        self.model = model

    async def delta(self, delta: Json, finish_reason: str | None = None, **extra: Any) -> None:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
        await send_event(self._response, {**self._head, "model": self.model, "choices": [choice], **extra})

    async def done(self) -> None:
        await self._response.write(b"data: [DONE]\n\n")
        await self._response.write_eof()


async def open_stream(request: web.Request) -> web.StreamResponse:
    response = web.StreamResponse(headers=SSE_HEADERS)
    await response.prepare(request)
    return response


async def send_event(response: web.StreamResponse, data: Mapping[str, Any]) -> None:
    await response.write(b"data: " + json.dumps(data, separators=(",", ":")).encode() + b"\n\n")
