"""The API's errors and its one error boundary.

Every error leaves as `{"error": {"type": …, "message": …}}` with the right status; the
message says what to do next and never carries a stack trace. Errors raised on purpose:

ApiError
├── BadRequest            400 invalid_request_error
├── Unauthorized          401 authentication_error
├── Forbidden             403 permission_error
├── NotFound              404 not_found_error
├── Conflict              409 conflict_error
├── PayloadTooLarge       413 request_too_large
├── UpstreamError         502 upstream_error (the language model or a connector failed)
└── ServiceUnavailable    503 service_unavailable

The knowledge engine's and storage's own errors are translated here (`translate`: a
connector that cannot be reached is a 502, Lore without LORE_SECRET_KEY a 503); any
other exception is logged in full and answered with a 500 that says only that.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from aiohttp import web
from pydantic import BaseModel

from bot.api.routes import Handler
from knowledge import (
    BudgetError,
    ConnectorUnavailable,
    EmbedderUnavailable,
    EmbeddingMismatch,
    EmptyContent,
    FilterError,
    IndexExists,
    IndexNotFound,
    IngestError,
    KnowledgeError,
    LLMRejected,
    LLMUnavailable,
    NotAllowed,
    NotConfigured,
    NotConnected,
    QuestionError,
    TooLarge,
    UnreadableContent,
    UnsupportedContent,
)
from storage.records import NameTaken, StorageError
from storage.records import NotFound as RowNotFound

log = logging.getLogger(__name__)


class ErrorDetail(BaseModel):
    type: str
    message: str


class ErrorBody(BaseModel):
    """The shape of every error response."""

    error: ErrorDetail


class ApiError(Exception):
    status = 500
    type = "internal_error"

    def __init__(self, message: str, *, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.headers = dict(headers or {})


class BadRequest(ApiError):
    status, type = 400, "invalid_request_error"


class Unauthorized(ApiError):
    status, type = 401, "authentication_error"


class Forbidden(ApiError):
    status, type = 403, "permission_error"


class NotFound(ApiError):
    status, type = 404, "not_found_error"


class Conflict(ApiError):
    status, type = 409, "conflict_error"


class PayloadTooLarge(ApiError):
    status, type = 413, "request_too_large"


class UnsupportedMediaType(ApiError):
    status, type = 415, "unsupported_media_type"


class Unprocessable(ApiError):
    status, type = 422, "unprocessable_content"


class UpstreamError(ApiError):
    status, type = 502, "upstream_error"


class ServiceUnavailable(ApiError):
    status, type = 503, "service_unavailable"


class Relayed(ApiError):
    """A refusal by the language model relayed with its own status (400, 404, 429 …)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.type = "rate_limit_error" if status == 429 else "invalid_request_error"


INTERNAL = "Something went wrong inside Lore. The details are in its log; please try again."
STATUS_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    405: "method_not_allowed",
    409: "conflict_error",
    413: "request_too_large",
    415: "unsupported_media_type",
    422: "unprocessable_content",
    429: "rate_limit_error",
}


def error_response(
    status: int, kind: str, message: str, headers: Mapping[str, str] | None = None
) -> web.Response:
    body = ErrorBody(error=ErrorDetail(type=kind, message=message))
    return web.json_response(body.model_dump(), status=status, headers=headers)


def translate(exc: KnowledgeError | StorageError | FilterError) -> ApiError:
    """The API error for an error the engine or storage raised on purpose."""
    message = _sentence(str(exc))
    match exc:
        case IndexNotFound() | RowNotFound() | NotConnected():
            return NotFound(message)
        case NotConfigured():
            return ServiceUnavailable(message)
        case ConnectorUnavailable():
            return UpstreamError(message)
        case NotAllowed():
            return Forbidden(message)
        case IndexExists() | NameTaken() | EmbeddingMismatch():
            return Conflict(message)
        case TooLarge():
            return PayloadTooLarge(message)
        case UnsupportedContent():
            return UnsupportedMediaType(message)
        case UnreadableContent() | EmptyContent() | IngestError():
            return Unprocessable(message)
        case QuestionError() | BudgetError() | FilterError():
            return BadRequest(message)
        case LLMRejected() if exc.status in (401, 403):
            return UpstreamError("The language model refused Lore's credentials; check OPENAI_API_KEY.")
        case LLMRejected():
            return Relayed(exc.status, message)
        case LLMUnavailable() | EmbedderUnavailable():
            return UpstreamError(message)
    return BadRequest(message)


def error_event(exc: Exception) -> dict[str, dict[str, str]]:
    """An error inside a stream whose status is already sent, in the same shape."""
    if isinstance(exc, KnowledgeError | StorageError | FilterError):
        api_error = translate(exc)
        return ErrorBody(error=ErrorDetail(type=api_error.type, message=api_error.message)).model_dump()
    return ErrorBody(error=ErrorDetail(type="internal_error", message=INTERNAL)).model_dump()


@web.middleware
async def error_boundary(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Turn every failure of an API request into the JSON error shape."""
    try:
        return await handler(request)
    except ApiError as exc:
        return error_response(exc.status, exc.type, exc.message, exc.headers)
    except (KnowledgeError, StorageError, FilterError) as exc:
        api_error = translate(exc)
        return error_response(api_error.status, api_error.type, api_error.message)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        return _http_error(exc)
    except ConnectionResetError:  # the caller left; there is no one to answer
        raise
    except Exception:
        log.exception("HTTP API request failed: %s %s", request.method, request.path)
        return error_response(500, "internal_error", INTERNAL)


def _http_error(exc: web.HTTPException) -> web.Response:
    """aiohttp's own refusals (no such route, wrong method, body too large) in our shape."""
    kind = STATUS_TYPES.get(exc.status, "invalid_request_error" if exc.status < 500 else "internal_error")
    messages = {
        404: "There is no such route. The API is described at /openapi.json.",
        405: "That method is not allowed here. The API is described at /openapi.json.",
        413: "The request body is too large.",
    }
    headers = {"Allow": exc.headers["Allow"]} if "Allow" in exc.headers else None
    return error_response(exc.status, kind, messages.get(exc.status, exc.reason), headers)


def _sentence(text: str) -> str:
    text = text.strip()
    if not text:
        return "The request could not be completed."
    text = text[0].upper() + text[1:]
    return text if text.endswith((".", "?", "!")) else text + "."
