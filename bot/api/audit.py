"""`GET /v1/audit`: the workspace's audit log, newest first, as JSON lines (or CSV), for a
SIEM to collect. For keys made with `lore api-key create --audit`, and keys acting as a
workspace admin; the export is itself recorded. `since` (or `before`, an entry id) lets a
collector ask only for what it has not seen."""

from __future__ import annotations

import contextlib
from datetime import datetime

from aiohttp import web
from pydantic import BaseModel, Field

from bot.api.auth import caller
from bot.api.bodies import query_params
from bot.api.errors import Forbidden
from bot.api.routes import Reply, Route
from bot.api.state import state
from bot.app.audit import AuditFilter
from bot.app.exports import Format, audit_lines

TAG = "audit"
NDJSON = "application/x-ndjson"
NOT_AUDIT = (
    "This key may not read the audit log: create one with `lore api-key create --audit`, or use a key "
    "of a workspace admin."
)


class AuditQuery(BaseModel):
    format: str = Field("jsonl", pattern="^(jsonl|csv)$", description="jsonl (the default) or csv.")
    action: str | None = Field(None, max_length=48, description="An action, or its family (`index`).")
    actor: str | None = Field(None, max_length=80, description="Who acted: a Slack user id, `cli:NAME` …")
    surface: str | None = Field(None, max_length=16, description="slack, shell, cli, api, console or lore.")
    since: datetime | None = Field(None, description="Entries at or after this time.")
    until: datetime | None = Field(None, description="Entries before this time.")
    before: int | None = Field(None, ge=1, description="Entries with a smaller id (the next page back).")


async def read_audit(request: web.Request) -> web.StreamResponse:
    query = query_params(request, AuditQuery)
    who = caller(request)
    if not (who.key.reads_audit or (who.place.user_is_admin and not who.place.partner)):
        raise Forbidden(NOT_AUDIT)
    how = Format.parse(query.format)
    wanted = AuditFilter(query.actor, query.action, query.surface, query.since, query.until, query.before)
    admin = state(request).services.actions.admin
    entries = await admin.export_for_tenant(who.key.tenant_id, wanted, how=f"api {how.value}")
    response = web.StreamResponse(headers={"Content-Type": how.media_type, "Cache-Control": "no-store"})
    await response.prepare(request)
    with contextlib.suppress(ConnectionResetError):  # the collector stopped reading
        async for line in audit_lines(entries, how):
            await response.write(line.encode("utf-8"))
        await response.write_eof()
    return response


ROUTES = [
    Route(
        "GET",
        "/v1/audit",
        read_audit,
        "The workspace's audit log, newest first: every administrative action on every surface "
        "(who, when, where from, what, on what), as JSON lines or CSV. Needs a key made with "
        "`lore api-key create --audit`, or a workspace admin's.",
        TAG,
        {200: Reply("One entry per line.", media_type=NDJSON)},
        query=AuditQuery,
        streams=("text/csv",),
    ),
]
