"""Indexing-job routes: status, the log as a live stream of JSON lines, cancel.

A job is reached through its index: a key that may not see the index gets the same 404
as for a job that does not exist, so job ids reveal nothing about other people's indexes.
"""

from __future__ import annotations

import contextlib
import json
from datetime import datetime
from typing import Any

from aiohttp import web
from pydantic import BaseModel, Field

from bot.api.auth import caller
from bot.api.bodies import query_params
from bot.api.errors import Forbidden, NotFound
from bot.api.routes import MAX_ID, Reply, Route, find_row
from bot.api.state import state
from knowledge import CONNECTORS
from storage.access import Action, allowed, may_manage_connectors
from storage.records import IndexRef, JobLine, JobRef

TAG = "jobs"
NDJSON = "application/x-ndjson"


class JobOut(BaseModel):
    id: int
    index: str = Field(description="The index the job fills.")
    source_id: int | None = Field(description="The attached source it crawls.")
    trigger: str = Field(description="manual, refresh or schedule.")
    state: str = Field(description="queued, running, succeeded, failed, cancelled or interrupted.")
    finished: bool
    cancel_requested: bool
    counters: dict[str, int] = Field(
        description="pages_found, pages_fetched, pages_unchanged, pages_failed, pages_gone, "
        "documents_added, documents_updated, documents_unchanged, documents_removed, chunks, "
        "attachments_added, attachments_updated, attachments_unchanged (connectors), "
        "and `skipped: <reason>` counts."
    )
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    seconds: float = Field(description="How long it ran (0 until it ends).")
    error: str | None


class LogQuery(BaseModel):
    follow: bool = Field(True, description="Keep the stream open for new lines until the job ends.")
    after: int = Field(0, ge=0, le=MAX_ID, description="Only lines after this line id (to resume).")


def job_out(job: JobRef, index: IndexRef) -> JobOut:
    return JobOut(
        id=job.id,
        index=index.name,
        source_id=job.source_config_id,
        trigger=job.trigger,
        state=str(job.state),
        finished=job.finished,
        cancel_requested=job.cancel_requested,
        counters=dict(job.counters),
        created_at=job.created_at,
        started_at=job.started_at,
        finished_at=job.finished_at,
        seconds=round(job.seconds, 3),
        error=job.error,
    )


async def find_job(request: web.Request, action: Action) -> tuple[JobRef, IndexRef]:
    """The job named in the path, with its index, if the caller may `action` that index."""
    job_id = int(request.match_info["job_id"])
    services, place = state(request).services, caller(request).place
    job = await find_row(job_id, services.jobs.repository.get)
    index = await find_row(job.index_id, services.indexes.get) if job else None
    if job is None or index is None or not allowed(Action.LIST, index.facts, place):
        raise NotFound(f"There is no indexing job {job_id}.")
    if not allowed(action, index.facts, place):
        raise Forbidden(f"This key can't change the {index.name} index's jobs.")
    return job, index


async def get_job(request: web.Request) -> web.Response:
    job, index = await find_job(request, Action.LIST)
    return web.json_response(job_out(job, index).model_dump(mode="json"))


async def cancel_job(request: web.Request) -> web.Response:
    job, index = await find_job(request, Action.LIST)
    if not job.finished:
        job = await state(request).services.actions.sources.cancel_job(caller(request).place, job.id)
    return web.json_response(job_out(job, index).model_dump(mode="json"), status=202)


async def job_log(request: web.Request) -> web.StreamResponse:
    """The log as newline-delimited JSON: `{"type": "line", …}` per line, then one
    `{"type": "job", "job": …}` with the job's state when the stream ends."""
    job, index = await find_job(request, Action.LIST)
    await _may_read_log(request, job)
    query = query_params(request, LogQuery)
    jobs = state(request).services.jobs
    response = web.StreamResponse(headers={"Content-Type": NDJSON, "Cache-Control": "no-cache"})
    await response.prepare(request)
    with contextlib.suppress(ConnectionResetError):  # the caller stopped following
        async for line in jobs.tail_indexing_job(job.id, follow=query.follow, after=query.after):
            await _send(response, _line(line))
        job = await jobs.get_indexing_job_status(job.id)
        await _send(response, {"type": "job", "job": job_out(job, index).model_dump(mode="json")})
        await response.write_eof()
    return response


async def _may_read_log(request: web.Request, job: JobRef) -> None:
    """A sync of a source that restricts its pages logs their titles and links: its log is
    for the connector admins who manage it, not for every reader of the index."""
    if job.source_config_id is None:
        return
    services = state(request).services
    source = await find_row(job.source_config_id, services.sources.get)
    connector = CONNECTORS.get(source.kind) if source is not None else None
    if (
        connector is not None
        and connector.syncs_permissions
        and not may_manage_connectors(caller(request).place)
    ):
        raise Forbidden(
            f"The log of a {connector.label} sync names pages some people may not read; only keys of "
            "connector admins (or service keys) read it."
        )


def _line(line: JobLine) -> dict[str, Any]:
    return {
        "type": "line",
        "id": line.id,
        "at": line.at.isoformat(),
        "level": line.level,
        "message": line.message,
    }


async def _send(response: web.StreamResponse, item: dict[str, Any]) -> None:
    await response.write(json.dumps(item).encode() + b"\n")


JOB = r"/v1/jobs/{job_id:\d+}"

ROUTES = [
    Route(
        "GET",
        JOB,
        get_job,
        "An indexing job's state, counters and timing.",
        TAG,
        {200: Reply("The job.", JobOut)},
    ),
    Route(
        "GET",
        JOB + "/log",
        job_log,
        "The job's log as newline-delimited JSON; with follow (the default), new lines as "
        "they come until the job ends, then a last line with the job's state.",
        TAG,
        {200: Reply("The log, one JSON object per line.", media_type=NDJSON)},
        query=LogQuery,
    ),
    Route(
        "POST",
        JOB + "/cancel",
        cancel_job,
        "Stop a job; what it indexed stays. A finished job is left as it is.",
        TAG,
        {202: Reply("Cancellation requested (or the job had already ended).", JobOut)},
    ),
]
