"""Reading request bodies and query strings into pydantic models, with size limits and
400s that name the field at fault. JSON is nested at most `MAX_DEPTH` levels anywhere it
is read (a body, a form's metadata, a filter): deeper is a 400, never a RecursionError."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, TypeVar

from aiohttp import web
from pydantic import BaseModel, ValidationError

from bot.api.errors import BadRequest, PayloadTooLarge
from bot.api.state import state

M = TypeVar("M", bound=BaseModel)
MAX_DEPTH = 32
"""Arrays and objects inside one another, at most: far more than any request needs."""


async def read_limited(request: web.Request, limit: int) -> bytes:
    """The whole body, refusing with 413 as soon as it passes `limit` bytes."""
    if request.content_length is not None and request.content_length > limit:
        raise PayloadTooLarge(too_large(limit))
    data = bytearray()
    async for chunk in request.content.iter_chunked(64 * 1024):
        data += chunk
        if len(data) > limit:
            raise PayloadTooLarge(too_large(limit))
    return bytes(data)


async def json_object(request: web.Request) -> dict[str, Any]:
    """The body as a JSON object (a 400 for anything else), whatever Content-Type says:
    `curl -d` without `-H 'Content-Type: application/json'` is a common slip, not an error."""
    raw = await read_limited(request, state(request).limits.json_bytes)
    data = loads(raw or b"null", what="The body")
    if not isinstance(data, dict):
        raise BadRequest("The body must be a JSON object.")
    return data


def loads(text: str | bytes, *, what: str) -> Any:
    """JSON `text`, or a 400 saying what is wrong with `what`: not JSON, or nested deeper
    than `MAX_DEPTH`."""
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise BadRequest(f"{what} is not valid JSON: {exc}.") from None
    except RecursionError:  # the decoder's own limit, far past ours
        raise BadRequest(too_deep(what)) from None
    if depth(data) > MAX_DEPTH:
        raise BadRequest(too_deep(what))
    return data


def depth(value: Any) -> int:
    """How deeply arrays and objects nest in `value` (0 for a scalar), without recursion."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, level = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        deepest = max(deepest, level)
        if deepest > MAX_DEPTH:
            return deepest
        stack.extend((child, level + 1) for child in children)
    return deepest


def too_deep(what: str) -> str:
    return f"{what} nests arrays and objects more than {MAX_DEPTH} levels deep."


async def json_body(request: web.Request, model: type[M]) -> M:
    return validated(model, await json_object(request))


def validated(model: type[M], data: Mapping[str, Any]) -> M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise BadRequest(describe(exc)) from None


def query_params(request: web.Request, model: type[M]) -> M:
    """The query string as `model` (repeated keys keep their last value)."""
    return validated(model, dict(request.query))


def describe(exc: ValidationError) -> str:
    """`messages.0.role: Field required; n: only n=1 is supported`."""
    problems = []
    for error in exc.errors(include_url=False)[:5]:
        where = ".".join(str(part) for part in error["loc"]) or "body"
        message = str(error["msg"]).removeprefix("Value error, ")
        problems.append(f"{where}: {message}")
    return "Invalid request: " + "; ".join(problems) + "."


def too_large(limit: int) -> str:
    return f"The request body is larger than the {limit // 1024 // 1024 or 1} MB this route accepts."
