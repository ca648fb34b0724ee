"""What every API handler reaches through `request.app`: services, keys, metrics, limits."""

from __future__ import annotations

from dataclasses import dataclass

from aiohttp import web

from bot.api.metrics import Metrics
from bot.app.keys import ApiKeys
from bot.app.services import Services
from knowledge import PassThrough

MB = 1024 * 1024
JSON_LIMIT = 2 * MB
FORM_OVERHEAD = 1 * MB


@dataclass(frozen=True)
class Limits:
    """Largest request bodies: JSON requests, and file uploads (the file plus its form)."""

    json_bytes: int = JSON_LIMIT
    upload_bytes: int = 50 * MB + FORM_OVERHEAD

    @classmethod
    def for_files(cls, max_file_bytes: int) -> Limits:
        return cls(upload_bytes=max_file_bytes + FORM_OVERHEAD)


@dataclass(frozen=True)
class ApiState:
    services: Services
    keys: ApiKeys
    metrics: Metrics
    passthrough: PassThrough | None
    """The model, for requests passed through unchanged; None when none is configured."""
    limits: Limits


API_STATE = web.AppKey("lore_api_state", ApiState)


def state(request: web.Request) -> ApiState:
    return request.app[API_STATE]
