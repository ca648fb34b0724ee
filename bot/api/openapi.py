"""The OpenAPI 3.1 document, built from the route table and the routes' pydantic models, so
every route is described and the schemas are the ones requests are validated with."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Literal

from aiohttp import web
from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from bot.api.errors import ErrorBody
from bot.api.routes import JSON, MAX_ID, Reply, Route

Json = dict[str, Any]
Mode = Literal["validation", "serialization"]
Refs = dict[tuple[Any, Mode], Json]
REF = "#/components/schemas/{model}"
PARAMETER = re.compile(r"\{(\w+)(?::[^}]*)?\}")
OPENAPI_DOCUMENT = web.AppKey("lore_openapi_document", dict)


def openapi_path(path: str) -> str:
    """`/v1/indexes/{index}/documents/{document_id:\\d+}` → `…/{document_id}`."""
    return PARAMETER.sub(lambda m: "{" + m.group(1) + "}", path)


def build_document(routes: Sequence[Route], *, version: str) -> Json:
    wanted = _models(routes)
    refs, definitions = models_json_schema(wanted, ref_template=REF)
    paths: dict[str, Json] = {}
    for route in routes:
        operation = _operation(route, refs)
        paths.setdefault(openapi_path(route.path), {})[route.method.lower()] = operation
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Lore",
            "version": version,
            "description": "A team's shared memory over HTTP: OpenAI-compatible chat over knowledge "
            "indexes, and index, document and query management. Authenticate with "
            "`Authorization: Bearer <API key>` (`lore api-key create`).",
        },
        "paths": paths,
        "components": {
            "schemas": definitions.get("$defs", {}),
            "securitySchemes": {"bearerAuth": {"type": "http", "scheme": "bearer"}},
        },
        "security": [{"bearerAuth": []}],
    }


def _models(routes: Sequence[Route]) -> list[tuple[type[BaseModel], Mode]]:
    found: dict[tuple[type[BaseModel], Mode], None] = {(ErrorBody, "serialization"): None}
    for route in routes:
        for model in (route.body, route.form, route.query):
            if model is not None:
                found[(model, "validation")] = None
        for reply in route.replies.values():
            if reply.model is not None:
                found[(reply.model, "serialization")] = None
    return list(found)


def _operation(route: Route, refs: Refs) -> Json:
    operation: Json = {
        "operationId": route.name,
        "summary": route.summary,
        "tags": [route.tag],
        "parameters": _path_parameters(route.path) + _query_parameters(route),
        "responses": _responses(route, refs),
    }
    if route.public:
        operation["security"] = []
    if route.body is not None:
        schema = refs[(route.body, "validation")]
        operation["requestBody"] = {"required": True, "content": {JSON: {"schema": schema}}}
    if route.form is not None:
        schema = refs[(route.form, "validation")]
        operation["requestBody"] = {"required": True, "content": {"multipart/form-data": {"schema": schema}}}
    return operation


def _path_parameters(path: str) -> list[Json]:
    parameters = []
    for match in PARAMETER.finditer(path):
        numeric = match.group(0).endswith(r":\d+}")
        schema: Json = (
            {"type": "integer", "minimum": 0, "maximum": MAX_ID}
            if numeric
            else {"type": "string", "minLength": 1, "maxLength": 120}
        )
        parameters.append({"name": match.group(1), "in": "path", "required": True, "schema": schema})
    return parameters


def _query_parameters(route: Route) -> list[Json]:
    if route.query is None:
        return []
    schema = route.query.model_json_schema(ref_template=REF)
    required = set(schema.get("required", []))
    return [
        {"name": name, "in": "query", "required": name in required, "schema": _plain(prop)}
        for name, prop in schema.get("properties", {}).items()
    ]


def _plain(schema: Json) -> Json:
    """A query parameter's schema without the `null` pydantic allows for absent values."""
    options = schema.get("anyOf")
    if options:
        kept = [o for o in options if o.get("type") != "null"]
        if len(kept) == 1:
            rest = {k: v for k, v in schema.items() if k not in ("anyOf", "default")}
            return {**rest, **kept[0]}
    return {k: v for k, v in schema.items() if k != "title"}


def _responses(route: Route, refs: Refs) -> Json:
    responses: Json = {}
    for status, reply in route.replies.items():
        entry: Json = {"description": reply.description}
        content: Json = {}
        if reply.model is not None:
            content[reply.media_type] = {"schema": refs[(reply.model, "serialization")]}
        elif reply.media_type != JSON:
            content[reply.media_type] = {"schema": {"type": "string"}}
        if 200 <= status < 300 and route.streams:
            content.update({media: {"schema": {"type": "string"}} for media in route.streams})
        if content:
            entry["content"] = content
        responses[str(status)] = entry
    error = {"schema": refs[(ErrorBody, "serialization")]}
    responses["default"] = {"description": "An error, in the stable error shape.", "content": {JSON: error}}
    return responses


async def openapi_json(request: web.Request) -> web.Response:
    return web.json_response(request.app[OPENAPI_DOCUMENT])


ROUTES = [
    Route(
        "GET",
        "/openapi.json",
        openapi_json,
        "This document.",
        "operations",
        {200: Reply("The OpenAPI 3.1 document.")},
        public=True,
    ),
]
