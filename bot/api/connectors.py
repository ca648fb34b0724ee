"""Connector routes (Confluence): connect a source with credentials in the body (checked
against the site, then kept encrypted), list the tenant's sources (credentials masked),
list a source's spaces, attach spaces to an index (a job starts), disconnect. A site that
cannot be reached is the caller's mistake when connecting (400: check the url), and the
site's when a stored source is used (502).

Any key of the tenant may list; connecting, attaching and disconnecting decide what indexes
hold (who may read each page is then Confluence's to say), so they take a key acting as its
own service user, or a key created for a workspace admin or for a user in
LORE_CONNECTOR_ADMINS. A source's base URL
passes the fetcher's address checks before Lore calls it.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from datetime import datetime
from typing import Annotated, Literal

from aiohttp import web
from pydantic import AfterValidator, BaseModel, Field, field_validator

from bot.api.auth import caller
from bot.api.bodies import json_body
from bot.api.errors import BadRequest, Forbidden, NotFound
from bot.api.jobs import job_out
from bot.api.routes import MAX_ID, Reply, Route
from bot.api.sources import SCHEDULE_HELP, Attached, ScheduleText, source_out
from bot.api.state import state
from bot.chat import messages
from bot.chat.render import plain
from knowledge.sources.connectors import ConnectorUnavailable, Credentials, FolderSpec, NotConnected
from knowledge.sources.jobs import Schedule
from storage.access import Action, allowed
from storage.records import ConnectionRef
from storage.records import NotFound as RowNotFound

TAG = "connectors"
SPACE_KEY = re.compile(r"^~?[A-Za-z0-9_.-]{1,255}$")


def _space_keys(keys: list[str]) -> list[str]:
    for key in keys:
        if not SPACE_KEY.match(key):
            raise ValueError(f"“{key[:40]}” is not a space key")
    return keys


SpaceKeys = Annotated[list[str], AfterValidator(_space_keys)]


class NewConnector(BaseModel):
    kind: Literal["confluence"] = Field("confluence", description="What to connect.")
    url: str = Field(
        min_length=1,
        max_length=2048,
        description="Confluence's address: https://acme.atlassian.net/wiki (Cloud).",
    )
    email: str | None = Field(
        None,
        min_length=3,
        max_length=255,
        description="Cloud: the account's email. Leave out for a Data Center token.",
    )
    token: str = Field(
        min_length=1,
        max_length=4096,
        description="Cloud: an API token (with `email`); Data Center: a personal access token. Stored encrypted, "
        "never shown back.",
    )
    name: str | None = Field(
        None, min_length=1, max_length=120, description="What to call it (default: the host)."
    )

    @field_validator("email")
    @classmethod
    def _an_email(cls, value: str | None) -> str | None:
        if value is not None and "@" not in value:
            raise ValueError("an email address has an @")
        return value

    @field_validator("token")
    @classmethod
    def _visible(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the token is empty")
        return value.strip()


class AttachmentOut(BaseModel):
    source_id: int = Field(description="The attachment, as listed under the index's sources.")
    index: str
    folders: list[str] = Field(description="Space keys, or SPACE/page id for a page tree.")
    schedule: str
    last_sync_at: datetime | None
    last_full_sync_at: datetime | None


class ConnectorOut(BaseModel):
    id: int
    kind: str
    name: str
    base_url: str
    credentials: str = Field(description="Masked: the account, and the token's last 4 characters at most.")
    created_at: datetime
    attachments: list[AttachmentOut] = Field(description="The indexes it fills that this key may see.")


class Connected(ConnectorOut):
    account: str = Field(description="Who Confluence says the credentials belong to.")


class ConnectorList(BaseModel):
    connectors: list[ConnectorOut]


class SpaceOut(BaseModel):
    key: str
    name: str
    type: str
    url: str | None


class SpaceList(BaseModel):
    spaces: list[SpaceOut]


class AttachSpaces(BaseModel):
    index: str = Field(
        min_length=1, max_length=80, description="The index to fill; a shared one is created if new."
    )
    spaces: SpaceKeys = Field(min_length=1, max_length=50, description="Space keys, e.g. ENG.")
    page: str | None = Field(
        None,
        pattern=r"^\d{1,20}$",
        description="Only this page and its descendants (with exactly one space).",
    )
    schedule: ScheduleText = Field("daily", description="How often to sync: " + SCHEDULE_HELP)

    def folders(self) -> list[FolderSpec]:
        if self.page is not None and len(self.spaces) != 1:
            raise BadRequest("Invalid request: page: a page tree goes with exactly one space.")
        return [FolderSpec(key, self.page) for key in self.spaces]


class Disconnected(BaseModel):
    documents_removed: int


def _may_connect(request: web.Request) -> None:
    """403 unless the key is a service key, or acts for an admin or an allowlisted user."""
    if not state(request).services.actions.connectors.allowed(caller(request).place):
        raise Forbidden(
            "Only workspace admins (or users in LORE_CONNECTOR_ADMINS) may connect sources or choose "
            "what they index; use a service key or an admin's key."
        )


async def _find(request: web.Request) -> ConnectionRef:
    connector_id = int(request.match_info["connector_id"])
    tenant = caller(request).key.tenant_id
    if connector_id <= MAX_ID:
        with contextlib.suppress(NotConnected):
            return await state(request).services.connections.get(tenant, connector_id)
    raise NotFound(f"There is no connector {connector_id}.")


async def _out(request: web.Request, connection: ConnectionRef) -> ConnectorOut:
    services, place = state(request).services, caller(request).place
    attachments = []
    for attached in await asyncio.to_thread(services.connections.repository.attachments, connection.id):
        with contextlib.suppress(RowNotFound):
            index = await asyncio.to_thread(services.indexes.get, attached.index_id)
            if allowed(Action.LIST, index.facts, place):
                attachments.append(
                    AttachmentOut(
                        source_id=attached.id,
                        index=index.name,
                        folders=attached.folders,
                        schedule=attached.schedule,
                        last_sync_at=attached.sync_cursor,
                        last_full_sync_at=attached.last_full_sync_at,
                    )
                )
    return ConnectorOut(
        id=connection.id,
        kind=connection.kind,
        name=connection.name,
        base_url=connection.base_url,
        credentials=connection.credentials_hint,
        created_at=connection.created_at,
        attachments=attachments,
    )


async def create_connector(request: web.Request) -> web.Response:
    _may_connect(request)
    body = await json_body(request, NewConnector)
    connectors = state(request).services.actions.connectors
    try:
        connected = await connectors.connect(
            caller(request).place,
            body.url,
            Credentials(body.token, body.email),
            kind=body.kind,
            name=body.name,
        )
    except ConnectorUnavailable as exc:  # the address the caller gave leads nowhere
        raise BadRequest(f"{plain(messages.failed_file(str(exc)))} Check the url.") from None
    out = await _out(request, connected.connection)
    return web.json_response(
        Connected(**out.model_dump(), account=connected.account).model_dump(mode="json"), status=201
    )


async def list_connectors(request: web.Request) -> web.Response:
    connections = await state(request).services.connections.for_tenant(caller(request).key.tenant_id)
    listing = ConnectorList(connectors=[await _out(request, c) for c in connections])
    return web.json_response(listing.model_dump(mode="json"))


async def list_spaces(request: web.Request) -> web.Response:
    connection = await _find(request)
    folders = await state(request).services.connections.folders(connection)
    spaces = SpaceList(spaces=[SpaceOut(key=f.key, name=f.name, type=f.kind, url=f.url) for f in folders])
    return web.json_response(spaces.model_dump(mode="json"))


async def attach_spaces(request: web.Request) -> web.Response:
    _may_connect(request)
    connection = await _find(request)
    body = await json_body(request, AttachSpaces)
    done = await state(request).services.actions.connectors.attach(
        caller(request).place, connection, body.index, body.folders(), schedule=Schedule.parse(body.schedule)
    )
    attached = Attached(source=await source_out(request, done.source), job=job_out(done.job, done.index))
    return web.json_response(attached.model_dump(mode="json"), status=202)


async def delete_connector(request: web.Request) -> web.Response:
    """Detach it from every index (its documents go) and forget its credentials."""
    _may_connect(request)
    removed = await state(request).services.actions.connectors.disconnect(
        caller(request).place, await _find(request)
    )
    return web.json_response(Disconnected(documents_removed=removed).model_dump(mode="json"))


CONNECTORS = "/v1/connectors"
CONNECTOR = CONNECTORS + r"/{connector_id:\d+}"

ROUTES = [
    Route(
        "POST",
        CONNECTORS,
        create_connector,
        "Connect Confluence: the credentials are checked against it, then stored encrypted "
        "(connecting the same URL again replaces them).",
        TAG,
        {201: Reply("Connected.", Connected)},
        body=NewConnector,
    ),
    Route(
        "GET",
        CONNECTORS,
        list_connectors,
        "The tenant's connected sources, credentials masked.",
        TAG,
        {200: Reply("The connectors.", ConnectorList)},
    ),
    Route(
        "GET",
        CONNECTOR + "/spaces",
        list_spaces,
        "The spaces the connected account can read.",
        TAG,
        {200: Reply("The spaces.", SpaceList)},
    ),
    Route(
        "POST",
        CONNECTOR + "/attach",
        attach_spaces,
        "Attach spaces (or one page tree) to an index and start syncing them; returns the job.",
        TAG,
        {202: Reply("Attached; the sync is queued or under way.", Attached)},
        body=AttachSpaces,
    ),
    Route(
        "DELETE",
        CONNECTOR,
        delete_connector,
        "Disconnect: detach it from every index (removing its documents) and forget its credentials.",
        TAG,
        {200: Reply("Disconnected.", Disconnected)},
    ),
]
