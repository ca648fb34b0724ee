"""`query_index`: search one index by vector, keyword or both, with a metadata filter."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from aiohttp import web
from pydantic import BaseModel, Field

from bot.api.auth import caller
from bot.api.bodies import json_body
from bot.api.indexes import find_index
from bot.api.routes import Reply, Route
from bot.api.state import state
from bot.chat.messages import notice as worded
from knowledge import Hit, QueryType, document_fields
from storage.access import Action


class QueryBody(BaseModel):
    query: str = Field(min_length=1, max_length=4000)
    query_type: QueryType = Field(QueryType.HYBRID, description="vector, keyword or hybrid")
    properties: dict[str, Any] = Field(
        default_factory=dict,
        description='Metadata every match must have, e.g. {"author": "ada", "context_type": "api_docs"}.',
    )
    top_k: int = Field(8, ge=1, le=100)


class Locator(BaseModel):
    url: str | None
    position: int = Field(description="The passage's position in its document, from 0.")
    heading: str


class Match(BaseModel):
    doc_id: int
    chunk_id: int
    name: str
    time_added: datetime
    doc_timestamp: datetime | None
    text: str
    locator: Locator
    score: float
    similarity: float | None = Field(description="Cosine similarity, when found by vector.")
    metadata: dict[str, Any]


class QueryResult(BaseModel):
    matches: list[Match]
    warnings: list[str]


def _match(hit: Hit) -> Match:
    doc = hit.document
    return Match(
        doc_id=doc.id,
        chunk_id=hit.chunk_id,
        name=doc.name,
        time_added=doc.time_added,
        doc_timestamp=doc.doc_timestamp,
        text=hit.text,
        locator=Locator(url=doc.url, position=hit.position, heading=hit.heading),
        score=hit.score,
        similarity=hit.similarity,
        metadata={k: v for k, v in document_fields(doc).items() if k != "doc_id"},
    )


async def query_index(request: web.Request) -> web.Response:
    index = await find_index(request, Action.SEARCH)
    body = await json_body(request, QueryBody)
    retrieval = await state(request).services.actions.search.search(
        caller(request).place,
        [index],
        body.query,
        top_k=body.top_k,
        query_type=body.query_type,
        where=body.properties,
    )
    result = QueryResult(
        matches=[_match(h) for h in retrieval.hits], warnings=[worded(n) for n in retrieval.notices]
    )
    return web.json_response(result.model_dump(mode="json"))


ROUTES = [
    Route(
        "POST",
        "/v1/indexes/{index}/query",
        query_index,
        "Search an index (query_index): the best passages, with their documents' metadata.",
        "query",
        {200: Reply("The matches, best first.", QueryResult)},
        body=QueryBody,
    ),
]
