"""Pages from Jinja2 templates (autoescaped: every name, question and comment is text, never
markup), and the headers every console response carries."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from aiohttp import web
from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

from bot.app.actions.admin import ConsoleRole
from bot.app.signin import ConsoleUser

SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; "
        "frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}
ADMIN_NAV = (
    ("/console/overview", "Overview"),
    ("/console/coverage", "Coverage"),
    ("/console/knowledge", "Knowledge"),
    ("/console/audit", "Audit log"),
    ("/console/settings", "Settings"),
)
OWNER_NAV = (("/console/coverage", "Coverage"), ("/console/knowledge", "Knowledge"))


def environment() -> Environment:
    env = Environment(
        loader=PackageLoader("bot.web", "templates"),
        autoescape=select_autoescape(["html"]),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals["static"] = lambda name: f"/console/static/{name}"
    env.filters["web_link"] = web_link
    return env


def web_link(url: object) -> str | None:
    """A URL fit for a link: http(s) only (a document's URL is anyone's text)."""
    if not isinstance(url, str):
        return None
    return url if urlsplit(url.strip()).scheme.lower() in ("http", "https") else None


def page(
    env: Environment,
    template: str,
    *,
    title: str,
    me: ConsoleUser | None,
    here: str = "",
    status: int = 200,
    done: str | None = None,
    **values: Any,
) -> web.Response:
    nav = ADMIN_NAV if me is not None and me.role == ConsoleRole.ADMIN else OWNER_NAV
    csrf = Markup('<input type="hidden" name="csrf" value="{}">').format(me.csrf) if me else Markup("")
    text = env.get_template(template).render(
        title=title, me=me, nav=nav, here=here, done=done, csrf_field=csrf, **values
    )
    return web.Response(text=text, content_type="text/html", status=status, headers=SECURITY_HEADERS)


def message(
    env: Environment, me: ConsoleUser | None, text: str, *, status: int, title: str, back: str | None = None
) -> web.Response:
    css = "refused" if status in (401, 403) else "failed"
    return page(env, "message.html", title=title, me=me, status=status, message=text, css=css, back=back)


def see_other(location: str) -> web.Response:
    """A redirect the browser follows with a GET (after a form, a sign-in)."""
    return web.Response(status=303, headers={"Location": location})


def with_headers(
    response: web.StreamResponse, more: Mapping[str, str] = SECURITY_HEADERS
) -> web.StreamResponse:
    for name, value in more.items():
        response.headers.setdefault(name, value)
    return response
