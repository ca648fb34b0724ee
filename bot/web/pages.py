"""The console's pages and forms: each handler reads its input, calls one use case of
`bot.app.actions` as the signed-in person (`me(request).place`), and renders what comes
back. Refusals (`NotAllowed`) are 403 pages; what Lore declines for a reason a person can
fix (`KnowledgeError`) is a 400 page saying why; every form posts back and is redirected to
the page it came from, with a fixed message saying what was done."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any
from urllib.parse import urlencode, urlsplit

from aiohttp import web
from multidict import MultiMapping

from bot.app.actions.admin import Named
from bot.app.audit import AuditFilter, Origin, Surface, acting_from
from bot.app.exports import Format, audit_lines, history_lines
from bot.web import charts
from bot.web.render import message, page
from bot.web.state import console, me
from knowledge import IndexNotFound, KnowledgeError, NotAllowed
from storage.values import utcnow

UPLOAD_LIMIT = 50 * 1024 * 1024
AUDIT_PAGE = 100
SURFACES = tuple(s.value for s in Surface)
DONE = {
    "forgot": "The document is forgotten.",
    "refreshing": "A refresh is queued.",
    "stopped": "The job was asked to stop.",
    "nothing-running": "Nothing was running.",
    "deleted": "The index is deleted.",
    "answered": "The answer is added; Lore quotes it from now on.",
    "added": "The document is added.",
    "grouped": "The questions are grouped again.",
    "grouping": "A grouping is already under way.",
    "retention": "The retention is saved.",
    "purged": "What was past the retention is removed.",
    "forget-queued": "Forgetting them is queued: the job below says what it removed once done.",
}
Page = Callable[[web.Request], Awaitable[web.StreamResponse]]
Form = MultiMapping[str | bytes | bytearray | web.FileField] | MultiMapping[str]


def acting(handler: Page) -> Page:
    """Run a handler as the console (its audit entries say so, and from which address), and
    turn what the use cases raise into pages."""

    async def run(request: web.Request) -> web.StreamResponse:
        state = console(request)
        try:
            with acting_from(Origin(Surface.CONSOLE, where=request.remote or "")):
                return await handler(request)
        except NotAllowed as exc:
            return message(state.env, me(request), _sentence(str(exc)), status=403, title="Not allowed")
        except IndexNotFound:
            return message(
                state.env, me(request), "There is no such index here.", status=404, title="Not found"
            )
        except KnowledgeError as exc:
            back = _back(request)
            return message(
                state.env, me(request), _sentence(str(exc)), status=400, title="Not done", back=back
            )

    run.__name__ = handler.__name__
    return run


# --- pages ---


@acting
async def overview(request: web.Request) -> web.StreamResponse:
    who = me(request)
    found = await console(request).services.actions.admin.overview(
        who.place, _int(request.query.get("days"), 30)
    )
    usage = found.usage
    judged = usage.helpful + usage.unhelpful
    p50, p95 = usage.latency_p50_ms, usage.latency_p95_ms
    return page(
        console(request).env,
        "overview.html",
        title="Overview",
        me=who,
        here="/console/overview",
        o=found,
        answered_rate=_percent(usage.answered, usage.questions),
        helpful_rate=_percent(usage.helpful, judged),
        latency=f"{_seconds(p50)} / {_seconds(p95)}" if p50 is not None else "—",
        per_day=charts.per_day(usage.days, found.since.date(), utcnow().date()),
        outcomes=charts.shares(found.outcomes, "questions", ("answered", "verified", "abstained")),
        verdicts=charts.shares(
            [Named("helpful", usage.helpful), Named("not helpful", usage.unhelpful)], "verdicts"
        ),
        places=charts.ranked(found.places, "questions"),
        indexes=charts.ranked(found.indexes, "questions"),
    )


@acting
async def coverage(request: web.Request) -> web.StreamResponse:
    who = me(request)
    found = await console(request).services.actions.coverage.coverage(who.place)
    return _page(request, "coverage.html", "Coverage gaps", "/console/coverage", c=found)


@acting
async def gap(request: web.Request) -> web.StreamResponse:
    who = me(request)
    actions = console(request).services.actions.coverage
    found = await actions.gap(who.place, _int(request.match_info["rank"], -1))
    targets = await actions.targets(who.place)
    title = found.title if len(found.title) <= 80 else found.title[:79] + "…"
    return _page(request, "gap.html", title, "/console/coverage", g=found, targets=targets)


@acting
async def knowledge(request: web.Request) -> web.StreamResponse:
    found = await console(request).services.actions.inventory.inventory(me(request).place)
    return _page(request, "knowledge.html", "Knowledge", "/console/knowledge", k=found)


@acting
async def index(request: web.Request) -> web.StreamResponse:
    actions = console(request).services.actions.inventory
    found = await actions.index(me(request).place, _int(request.match_info["index"], -1))
    return _page(request, "index.html", found.index.name, "/console/knowledge", v=found)


@acting
async def audit(request: web.Request) -> web.StreamResponse:
    who = me(request)
    admin = console(request).services.actions.admin
    wanted = _audit_filter(request.query, before=_int(request.query.get("before"), 0) or None)
    entries = await admin.audit(who.place, wanted, limit=AUDIT_PAGE)
    more = None
    if len(entries) == AUDIT_PAGE:
        query = {k: v for k, v in request.query.items() if k != "before" and v}
        more = "/console/audit?" + urlencode({**query, "before": entries[-1].id})
    return _page(
        request,
        "audit.html",
        "Audit log",
        "/console/audit",
        entries=entries,
        actions=await admin.audit_actions(who.place),
        surfaces=SURFACES,
        f=wanted,
        filtered=any((wanted.action, wanted.actor, wanted.surface)),
        more=more,
    )


@acting
async def settings(request: web.Request) -> web.StreamResponse:
    admin = console(request).services.actions.admin
    found = await admin.settings_view(me(request).place)
    forgetting = await admin.forget_jobs(me(request).place)
    return _page(request, "settings.html", "Settings", "/console/settings", s=found, forgetting=forgetting)


# --- exports ---


@acting
async def export_audit(request: web.Request) -> web.StreamResponse:
    form = await request.post()
    try:
        how = Format.parse(_text(form, "format"))
    except ValueError as exc:
        raise KnowledgeError(str(exc)) from None
    entries = await console(request).services.actions.admin.export_audit(
        me(request).place, _audit_filter(form), how=f"console {how.value}"
    )
    return await _download(request, audit_lines(entries, how), f"lore-audit.{how.value}", how.media_type)


@acting
async def export_history(request: web.Request) -> web.StreamResponse:
    form = await request.post()
    days = _int(_text(form, "days"), 30)
    lines = await console(request).services.actions.admin.export_history(me(request).place, days)
    return await _download(request, history_lines(lines), "lore-questions.csv", "text/csv")


# --- forms ---


@acting
async def forget_document(request: web.Request) -> web.StreamResponse:
    index_id = _int(request.match_info["index"], -1)
    inventory = console(request).services.actions.inventory
    await inventory.forget(me(request).place, index_id, _int(request.match_info["document"], -1))
    return _done(f"/console/knowledge/{index_id}", "forgot")


@acting
async def refresh_source(request: web.Request) -> web.StreamResponse:
    inventory = console(request).services.actions.inventory
    job = await inventory.refresh(me(request).place, _int(request.match_info["source"], -1))
    return _done(f"/console/knowledge/{job.index_id}", "refreshing")


@acting
async def stop_source(request: web.Request) -> web.StreamResponse:
    inventory = console(request).services.actions.inventory
    job = await inventory.stop(me(request).place, _int(request.match_info["source"], -1))
    return _done("/console/knowledge", "stopped" if job is not None else "nothing-running")


@acting
async def delete_index(request: web.Request) -> web.StreamResponse:
    form = await request.post()
    inventory = console(request).services.actions.inventory
    index_id = _int(request.match_info["index"], -1)
    shown = await inventory.index(me(request).place, index_id)
    if _text(form, "confirm").strip() != shown.index.name:
        raise KnowledgeError(f"type the index's name, {shown.index.name}, to delete it")
    await inventory.delete(me(request).place, index_id)
    return _done("/console/knowledge", "deleted")


@acting
async def regroup(request: web.Request) -> web.StreamResponse:
    run = await console(request).services.actions.coverage.recompute(me(request).place)
    return _done("/console/coverage", "grouped" if run is not None else "grouping")


@acting
async def add_answer(request: web.Request) -> web.StreamResponse:
    form = await request.post()
    actions = console(request).services.actions.coverage
    outcome = await actions.add_answer(
        me(request).place, _int(_text(form, "index"), -1), _text(form, "question"), _text(form, "answer")
    )
    if not outcome.ok:
        raise KnowledgeError(outcome.error or "the answer could not be added")
    return _done(f"/console/coverage/{request.match_info['rank']}", "answered")


@acting
async def add_document(request: web.Request) -> web.StreamResponse:
    form = await request.post()
    upload = form.get("file")
    if not isinstance(upload, web.FileField) or not upload.filename:
        raise KnowledgeError("choose a file to add")
    data = upload.file.read()
    actions = console(request).services.actions.coverage
    outcome = await actions.add_document(
        me(request).place, _int(_text(form, "index"), -1), upload.filename, data, upload.content_type
    )
    if not outcome.ok:
        raise KnowledgeError(outcome.error or "the document could not be added")
    return _done(f"/console/coverage/{request.match_info['rank']}", "added")


@acting
async def set_retention(request: web.Request) -> web.StreamResponse:
    form = await request.post()
    days = _int(_text(form, "days"), -1)
    await console(request).services.actions.admin.set_retention(me(request).place, days)
    return _done("/console/settings", "retention")


@acting
async def run_retention(request: web.Request) -> web.StreamResponse:
    await console(request).services.actions.admin.run_retention(me(request).place)
    return _done("/console/settings", "purged")


@acting
async def forget_person(request: web.Request) -> web.StreamResponse:
    form = await request.post()
    await console(request).services.actions.admin.forget_user(me(request).place, _text(form, "user"))
    return _done("/console/settings", "forget-queued")


# --- helpers ---


def _page(request: web.Request, template: str, title: str, here: str, **values: Any) -> web.Response:
    done = DONE.get(request.query.get("done", ""))
    return page(console(request).env, template, title=title, me=me(request), here=here, done=done, **values)


def _done(path: str, what: str) -> web.StreamResponse:
    raise web.HTTPSeeOther(f"{path}?{urlencode({'done': what})}")


async def _download(
    request: web.Request, lines: AsyncIterator[str], name: str, media_type: str
) -> web.StreamResponse:
    response = web.StreamResponse(
        headers={
            "Content-Type": f"{media_type}; charset=utf-8",
            "Content-Disposition": f'attachment; filename="{name}"',
            "Cache-Control": "no-store",
            "X-Content-Type-Options": "nosniff",
        }
    )
    await response.prepare(request)
    async for line in lines:
        await response.write(line.encode("utf-8"))
    await response.write_eof()
    return response


def _audit_filter(values: Form, *, before: int | None = None) -> AuditFilter:
    def text(name: str) -> str | None:
        value = values.get(name)
        return value.strip() or None if isinstance(value, str) else None

    surface = text("surface")
    return AuditFilter(
        actor=text("actor"),
        action=text("action"),
        surface=surface if surface in SURFACES else None,
        before=before,
    )


def _back(request: web.Request) -> str | None:
    """The console page a form came from (never another site's address)."""
    path = urlsplit(request.headers.get("Referer", "")).path
    return path if request.method == "POST" and path.startswith("/console/") else None


def _text(form: Form, name: str) -> str:
    value = form.get(name)
    return value if isinstance(value, str) else ""


def _int(text: str | None, default: int) -> int:
    try:
        return int(text or "")
    except ValueError:
        return default


def _percent(part: int, whole: int) -> str:
    return f"{round(100 * part / whole)}%" if whole else "—"


def _seconds(ms: int | None) -> str:
    return "—" if ms is None else f"{ms / 1000:.1f} s"


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")


ROUTES = [
    ("GET", "/console/overview", overview),
    ("GET", "/console/coverage", coverage),
    ("GET", "/console/coverage/{rank}", gap),
    ("GET", "/console/knowledge", knowledge),
    ("GET", "/console/knowledge/{index}", index),
    ("GET", "/console/audit", audit),
    ("GET", "/console/settings", settings),
    ("POST", "/console/audit/export", export_audit),
    ("POST", "/console/history/export", export_history),
    ("POST", "/console/knowledge/{index}/documents/{document}/forget", forget_document),
    ("POST", "/console/knowledge/{index}/delete", delete_index),
    ("POST", "/console/sources/{source}/refresh", refresh_source),
    ("POST", "/console/sources/{source}/stop", stop_source),
    ("POST", "/console/coverage/run", regroup),
    ("POST", "/console/coverage/{rank}/answer", add_answer),
    ("POST", "/console/coverage/{rank}/document", add_document),
    ("POST", "/console/settings/retention", set_retention),
    ("POST", "/console/retention/run", run_retention),
    ("POST", "/console/people/forget", forget_person),
]
