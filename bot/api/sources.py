"""Source routes: attach a site to an index (which starts a crawl), list an index's
sources, change a source's refresh schedule, refresh it now, detach it, and restrict a
connector's attachment to the members of Slack channels and user groups.

Attaching the same start URLs twice keeps one attachment, and a source with a job under
way gets that job back instead of a second one.
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Annotated, Any

from aiohttp import web
from pydantic import AfterValidator, BaseModel, Field, field_validator

from bot.api.auth import caller
from bot.api.bodies import json_body
from bot.api.errors import BadRequest, NotFound
from bot.api.indexes import find_index
from bot.api.jobs import JobOut, job_out
from bot.api.routes import Reply, Route, find_row
from bot.api.state import state
from knowledge import KnowledgeError, Schedule
from storage.access import Action
from storage.records import IndexRef, SourceConfigRef

TAG = "sources"
SCHEDULE_HELP = "hourly, daily, weekly, `every N hours|days|weeks`, or never."


def _schedule(value: str) -> str:
    schedule = Schedule.parse(value)
    if schedule is None:
        raise ValueError(f"“{value}” is not a schedule; use {SCHEDULE_HELP}")
    return schedule.text


ScheduleText = Annotated[str, AfterValidator(_schedule)]


class NewSite(BaseModel):
    urls: list[str] = Field(
        min_length=1,
        max_length=20,
        description="Start URLs (http or https). Pages under each URL's path are crawled, "
        "with the site's sitemap and robots.txt honoured.",
    )
    schedule: ScheduleText = Field("daily", description="How often to refresh: " + SCHEDULE_HELP)
    max_pages: int | None = Field(
        None, ge=1, le=10_000, description="Pages per crawl (default: the server's)."
    )
    max_depth: int | None = Field(None, ge=0, le=100, description="Links followed from a start URL.")

    @field_validator("urls")
    @classmethod
    def _short(cls, urls: list[str]) -> list[str]:
        if any(len(url) > 2048 for url in urls):
            raise ValueError("a URL can be at most 2048 characters")
        return [url.strip() for url in urls]

    def options(self) -> dict[str, Any]:
        limits = {"max_pages": self.max_pages, "max_depth": self.max_depth}
        return {name: value for name, value in limits.items() if value is not None}


class SourceChange(BaseModel):
    schedule: ScheduleText = Field(description="How often to refresh: " + SCHEDULE_HELP)


class SourceOut(BaseModel):
    id: int
    kind: str = Field(description="site, or a connector's kind (confluence, github).")
    name: str = Field(description="How people name it in chat: host and path (a connector: its host).")
    start_urls: list[str] = Field(description="A site's start URLs; a connector's folders (space keys).")
    options: dict[str, Any] = Field(description="Its own crawl limits (max_pages, max_depth).")
    schedule: str
    last_refresh_at: datetime | None = Field(description="When its last crawl or sync succeeded.")
    created_at: datetime
    active_job_id: int | None = Field(description="The job crawling it now, if any.")


class SourceList(BaseModel):
    sources: list[SourceOut]


class Attached(BaseModel):
    source: SourceOut
    job: JobOut = Field(description="The crawl started (or the one already under way).")


class Detached(BaseModel):
    documents_removed: int


SLACK_ID = r"^[A-Z0-9]{2,32}$"


class RestrictionIn(BaseModel):
    channels: list[Annotated[str, Field(pattern=SLACK_ID)]] = Field(
        default_factory=list, max_length=50, description="Slack channel ids (C…) whose members may read it."
    )
    usergroups: list[Annotated[str, Field(pattern=SLACK_ID)]] = Field(
        default_factory=list,
        max_length=50,
        description="Slack user group ids (S…) whose members may read it.",
    )

    def groups(self) -> list[str]:
        return [f"channel:{c}" for c in self.channels] + [f"usergroup:{g}" for g in self.usergroups]


class GroupOut(BaseModel):
    group: str = Field(description="`channel:C…` or `usergroup:S…`.")
    members: int = Field(description="Its members, as Slack last said (none when it would not).")
    error: str | None = Field(description="Why Slack would not say: then nobody reads through it.")


class RestrictionOut(BaseModel):
    source: SourceOut
    groups: list[GroupOut] = Field(description="Empty: not restricted (the index's readers read it).")
    documents_changed: int


async def source_out(request: web.Request, source: SourceConfigRef) -> SourceOut:
    repository = state(request).services.jobs.repository
    active = await asyncio.to_thread(repository.active_for_source, source.id)
    return SourceOut(
        id=source.id,
        kind=source.kind,
        name=source.name,
        start_urls=source.start_urls,
        options=source.options,
        schedule=source.schedule,
        last_refresh_at=source.last_refresh_at,
        created_at=source.created_at,
        active_job_id=active.id if active else None,
    )


async def _find_source(request: web.Request, index: IndexRef) -> SourceConfigRef:
    source_id = int(request.match_info["source_id"])
    source = await find_row(source_id, state(request).services.sources.get)
    if source is not None and source.index_id == index.id:
        return source
    raise NotFound(f"There is no source {source_id} attached to the {index.name} index.")


async def attach_site(request: web.Request) -> web.Response:
    index = await find_index(request, Action.ADD)
    body = await json_body(request, NewSite)
    sources = state(request).services.actions.sources
    try:
        done = await sources.attach_site(
            caller(request).place,
            index,
            body.urls,
            schedule=Schedule.parse(body.schedule),
            options=body.options(),
        )
    except KnowledgeError as exc:
        raise BadRequest(f"Lore won't crawl that URL: {str(exc).split(': ', 1)[-1]}.") from None
    attached = Attached(source=await source_out(request, done.source), job=job_out(done.job, index))
    return web.json_response(attached.model_dump(mode="json"), status=202)


async def list_sources(request: web.Request) -> web.Response:
    index = await find_index(request, Action.LIST)
    sources = await state(request).services.jobs.list_docsources(index)
    listing = SourceList(sources=[await source_out(request, s) for s in sources])
    return web.json_response(listing.model_dump(mode="json"))


async def change_source(request: web.Request) -> web.Response:
    index = await find_index(request, Action.LIST)
    source = await _find_source(request, index)
    body = await json_body(request, SourceChange)
    schedule = Schedule.stored(body.schedule)
    source = await state(request).services.actions.sources.reschedule(caller(request).place, source, schedule)
    return web.json_response((await source_out(request, source)).model_dump(mode="json"))


async def refresh_source(request: web.Request) -> web.Response:
    index = await find_index(request, Action.LIST)
    source = await _find_source(request, index)
    done = await state(request).services.actions.sources.refresh(caller(request).place, source)
    return web.json_response(job_out(done.job, index).model_dump(mode="json"), status=202)


async def detach_source(request: web.Request) -> web.Response:
    index = await find_index(request, Action.LIST)
    source = await _find_source(request, index)
    removed = await state(request).services.actions.sources.detach(caller(request).place, source)
    return web.json_response(Detached(documents_removed=removed).model_dump(mode="json"))


async def restrict_source(request: web.Request) -> web.Response:
    index = await find_index(request, Action.LIST)
    source = await _find_source(request, index)
    body = await json_body(request, RestrictionIn)
    restrictions = state(request).services.actions.restrictions
    done = await restrictions.restrict_attachment(caller(request).place, source, index, body.groups())
    out = RestrictionOut(
        source=await source_out(request, done.source),
        groups=[GroupOut(group=g.key, members=g.members, error=g.error) for g in done.groups],
        documents_changed=done.changed,
    )
    return web.json_response(out.model_dump(mode="json"))


SOURCES = "/v1/indexes/{index}/sources"
SOURCE = SOURCES + r"/{source_id:\d+}"

ROUTES = [
    Route(
        "POST",
        SOURCES,
        attach_site,
        "Attach a site to the index and start crawling it; returns the job.",
        TAG,
        {202: Reply("Attached; the crawl is queued or under way.", Attached)},
        body=NewSite,
    ),
    Route(
        "GET",
        SOURCES,
        list_sources,
        "The sources attached to the index.",
        TAG,
        {200: Reply("The sources.", SourceList)},
    ),
    Route(
        "PATCH",
        SOURCE,
        change_source,
        "Change how often a source is refreshed.",
        TAG,
        {200: Reply("The source.", SourceOut)},
        body=SourceChange,
    ),
    Route(
        "POST",
        SOURCE + "/refresh",
        refresh_source,
        "Crawl a source again now (unchanged pages cost no download and no embedding).",
        TAG,
        {202: Reply("The refresh job (or the one already under way).", JobOut)},
    ),
    Route(
        "PUT",
        SOURCE + "/restriction",
        restrict_source,
        "Let only the members of Slack channels or user groups read what a connector's attachment "
        "brings (no channels and no groups: lift it). Members are read from Slack now and with the "
        "group syncs; when Slack won't say, nobody reads through that group.",
        TAG,
        {200: Reply("The restriction as it is now.", RestrictionOut)},
        body=RestrictionIn,
    ),
    Route(
        "DELETE",
        SOURCE,
        detach_source,
        "Detach a source: stop its crawl and remove its documents from the index.",
        TAG,
        {200: Reply("Detached.", Detached)},
    ),
]
