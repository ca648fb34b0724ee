"""Index routes: list, create (shared), get info, delete (owner only). Every lookup goes
through the catalog, so the access policy decides what a key sees and may do."""

from __future__ import annotations

import asyncio
from datetime import datetime

from aiohttp import web
from pydantic import BaseModel, Field, field_validator

from bot.api.auth import caller
from bot.api.bodies import json_body
from bot.api.jobs import JobOut, job_out
from bot.api.routes import Reply, Route
from bot.api.state import ApiState, state
from storage.access import Action, Place, allowed
from storage.records import IndexRef, IndexStats

TAG = "indexes"


class NewIndex(BaseModel):
    name: str = Field(min_length=1, max_length=80, description="The new shared index's name.")

    @field_validator("name")
    @classmethod
    def _addressable(cls, value: str) -> str:
        if "/" in value:
            raise ValueError("an index name used through the API cannot contain '/'")
        if not value.strip():
            raise ValueError("an index name needs at least one visible character")
        return value


class IndexOut(BaseModel):
    id: int
    name: str
    scope: str = Field(description="personal, channel or shared")
    created_at: datetime
    embedding_model: str
    documents: int
    chunks: int
    deletable: bool = Field(description="Whether this key may delete the index.")


class IndexList(BaseModel):
    indexes: list[IndexOut]


class LatestDocument(BaseModel):
    name: str
    time_added: datetime


class IndexInfo(IndexOut):
    latest_document: LatestDocument | None
    last_job: JobOut | None


async def find_index(request: web.Request, action: Action) -> IndexRef:
    """The index named in the path that the caller may `action` (404 or 403 otherwise)."""
    name = request.match_info["index"]
    return await state(request).services.catalog.find(caller(request).place, name, action)


def _summary(index: IndexRef, stats: IndexStats, place: Place) -> IndexOut:
    return IndexOut(
        id=index.id,
        name=index.name,
        scope=str(index.scope),
        created_at=index.created_at,
        embedding_model=index.embedding_model,
        documents=stats.documents,
        chunks=stats.chunks,
        deletable=allowed(Action.DELETE, index.facts, place),
    )


async def _info(api: ApiState, index: IndexRef, place: Place) -> IndexInfo:
    info = await api.services.jobs.get_index_info(index)
    stats, job = info.stats, info.last_job
    latest = None
    if stats.latest_document_name is not None and stats.latest_document_at is not None:
        latest = LatestDocument(name=stats.latest_document_name, time_added=stats.latest_document_at)
    last_job = job_out(job, index) if job is not None else None
    summary = _summary(index, stats, place)
    return IndexInfo(**summary.model_dump(), latest_document=latest, last_job=last_job)


async def list_indexes(request: web.Request) -> web.Response:
    api, place = state(request), caller(request).place
    visible = await api.services.catalog.visible(place)
    access = await api.services.actions.access.for_place(place)
    stats = [await asyncio.to_thread(api.services.indexes.stats, i.id, access) for i in visible]
    listing = IndexList(indexes=[_summary(i, s, place) for i, s in zip(visible, stats, strict=True)])
    return web.json_response(listing.model_dump(mode="json"))


async def create_index(request: web.Request) -> web.Response:
    body = await json_body(request, NewIndex)
    api, place = state(request), caller(request).place
    index = await api.services.actions.indexes.create(place, body.name)
    info = await _info(api, index, place)
    return web.json_response(info.model_dump(mode="json"), status=201)


async def get_index(request: web.Request) -> web.Response:
    index = await find_index(request, Action.LIST)
    info = await _info(state(request), index, caller(request).place)
    return web.json_response(info.model_dump(mode="json"))


async def delete_index(request: web.Request) -> web.Response:
    index = await find_index(request, Action.DELETE)
    await state(request).services.actions.indexes.delete(caller(request).place, index)
    return web.Response(status=204)


ROUTES = [
    Route(
        "GET",
        "/v1/indexes",
        list_indexes,
        "List the indexes this key may use, with their sizes.",
        TAG,
        {200: Reply("The visible indexes.", IndexList)},
    ),
    Route(
        "POST",
        "/v1/indexes",
        create_index,
        "Create a shared index (owned by this key's user).",
        TAG,
        {201: Reply("The new index.", IndexInfo)},
        body=NewIndex,
    ),
    Route(
        "GET",
        "/v1/indexes/{index}",
        get_index,
        "An index's documents, chunks, latest document and last indexing job.",
        TAG,
        {200: Reply("The index.", IndexInfo)},
    ),
    Route(
        "DELETE",
        "/v1/indexes/{index}",
        delete_index,
        "Delete an index and everything in it (only the key that owns it).",
        TAG,
        {204: Reply("Deleted.")},
    ),
]
