"""The HTTP API's aiohttp application: the route table, and the middlewares every API
request passes (metrics, then the error boundary), served alone by `lore serve` or beside
Slack's events by `lore run` in HTTP mode (`install_api` on Slack's application).

Each route's handler is wrapped by `_endpoint`, which refuses bodies over the route's size
limit and authenticates the caller unless the route is public.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version

from aiohttp import web
from aiohttp.typedefs import Middleware

from bot.api import audit, chat, connectors, documents, feedback, indexes, jobs, openapi, ops, query, sources
from bot.api.auth import CALLER, authenticate
from bot.api.bodies import too_large
from bot.api.errors import PayloadTooLarge, error_boundary
from bot.api.metrics import Metrics
from bot.api.routes import Handler, Route
from bot.api.state import API_STATE, ApiState, Limits
from bot.app.audit import Origin, Surface, acting_from
from bot.app.keys import ApiKeys
from bot.app.services import Services
from knowledge import OpenAIChatModel

ROUTES: list[Route] = [
    *ops.ROUTES,
    *openapi.ROUTES,
    *chat.ROUTES,
    *indexes.ROUTES,
    *documents.ROUTES,
    *query.ROUTES,
    *sources.ROUTES,
    *jobs.ROUTES,
    *connectors.ROUTES,
    *feedback.ROUTES,
    *audit.ROUTES,
]


def api_state(services: Services) -> ApiState:
    """Everything the API's handlers share, built from the composition root's services."""
    passthrough = OpenAIChatModel(services.llm, services.settings.llm_model) if services.llm else None
    return ApiState(
        services=services,
        keys=ApiKeys(services.db),
        metrics=Metrics(),
        passthrough=passthrough,
        limits=Limits.for_files(services.settings.max_file_bytes),
    )


def build_api(services: Services) -> web.Application:
    """The API on its own application (`lore serve`)."""
    api = api_state(services)
    app = web.Application(client_max_size=api.limits.upload_bytes)
    install_api(app, api)
    return app


def install_api(app: web.Application, api: ApiState, routes: Sequence[Route] = ROUTES) -> None:
    """Add the API's routes and middlewares to `app`; other routes already on it (Slack's
    events) keep their own behaviour. The app's `client_max_size` must allow uploads."""
    registered = []
    for route in routes:
        endpoint = _endpoint(route, api.limits)
        app.router.add_route(route.method, route.path, endpoint, name=route.name)
        registered.append(endpoint)
    endpoints = frozenset(registered)
    app[API_STATE] = api
    app[ops.EMBEDDER_CHECK] = ops.EmbedderCheck()
    app[openapi.OPENAPI_DOCUMENT] = openapi.build_document(routes, version=_version())
    app.middlewares.append(_metrics_middleware(api.metrics, endpoints))
    app.middlewares.append(_api_only(error_boundary, endpoints))


def _endpoint(route: Route, limits: Limits) -> Handler:
    limit = limits.upload_bytes if route.upload else limits.json_bytes

    async def endpoint(request: web.Request) -> web.StreamResponse:
        if request.content_length is not None and request.content_length > limit:
            raise PayloadTooLarge(too_large(limit))
        if not route.public:
            request[CALLER] = await authenticate(request)
            key = request[CALLER].key
            where = f"key {key.id} ({key.name}) from {request.remote or 'unknown'}"
            with acting_from(Origin(Surface.API, where=where, actor=f"api-key:{key.id}")):
                return await route.handler(request)
        return await route.handler(request)

    endpoint.__name__ = route.name
    return endpoint


def _is_api(request: web.Request, endpoints: frozenset[Handler]) -> bool:
    """An API route, or no route at all (answered with a JSON 404/405)."""
    info = request.match_info
    return getattr(info, "http_exception", None) is not None or info.handler in endpoints


def _api_only(middleware: Middleware, endpoints: frozenset[Handler]) -> Middleware:
    @web.middleware
    async def scoped(request: web.Request, handler: Handler) -> web.StreamResponse:
        if not _is_api(request, endpoints):
            return await handler(request)
        return await middleware(request, handler)

    return scoped


def _metrics_middleware(metrics: Metrics, endpoints: frozenset[Handler]) -> Middleware:
    @web.middleware
    async def measured(request: web.Request, handler: Handler) -> web.StreamResponse:
        if not _is_api(request, endpoints):
            return await handler(request)
        started = time.perf_counter()
        status = 500
        try:
            response = await handler(request)
            status = response.status
            return response
        finally:
            resource = request.match_info.route.resource
            route = resource.canonical if resource is not None else "unmatched"
            metrics.request(request.method, route, status, time.perf_counter() - started)

    return measured


def _version() -> str:
    try:
        return version("lore-bot")
    except PackageNotFoundError:
        return "0"
