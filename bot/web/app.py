"""The admin console on aiohttp: its routes under `/console`, and the door every request to
them passes (`_door`): who is signed in, the CSRF check of every form, the security headers,
and one error boundary that answers refusals and mistakes with a page, never a traceback.

`install_console` adds it to an application that serves other routes too (Slack's events
and the HTTP API in `lore run`'s HTTP mode, the API alone in `lore serve`, the operations
routes in Socket Mode): their requests never meet the console's door.
"""

from __future__ import annotations

import logging
from importlib.resources import files

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

from bot.app.services import Services
from bot.app.signin import IdentityProvider
from bot.web import pages, signing_in
from bot.web.render import SECURITY_HEADERS, environment, message, with_headers
from bot.web.session import SESSION_COOKIE, CookieSigner, csrf_ok, same_origin
from bot.web.state import CONSOLE, ME, Console, console

log = logging.getLogger(__name__)
PREFIX = "/console"
OPEN_PATHS = ("/console/signin", "/console/auth/", "/console/link/", "/console/static/")
"""What answers without a session."""
FORM_LIMIT = 64 * 1024
EXPIRED_FORM = "This form has expired or did not come from the console; reload the page and try again."


def install_console(web_app: web.Application, services: Services, provider: IdentityProvider | None) -> None:
    """Serve the console on `web_app` (Sign in with Slack through `provider`, when given)."""
    web_app[CONSOLE] = Console(
        services, provider, CookieSigner.for_settings(services.settings), environment()
    )
    routes = [*signing_in.ROUTES, *pages.ROUTES]
    handlers = set()
    for method, path, handler in routes:
        web_app.router.add_route(method, path, handler)
        handlers.add(handler)
    web_app.router.add_get(PREFIX, _home)
    web_app.router.add_get(PREFIX + "/", _home)
    web_app.router.add_get(PREFIX + "/static/{name}", _static)
    handlers.update({_home, _static})
    web_app.middlewares.append(_door(frozenset(handlers)))


async def _home(request: web.Request) -> web.StreamResponse:
    raise web.HTTPSeeOther("/console/overview")


async def _static(request: web.Request) -> web.StreamResponse:
    name = request.match_info["name"]
    if name != "console.css":
        raise web.HTTPNotFound()
    text = files("bot.web").joinpath("static", name).read_text(encoding="utf-8")
    return with_headers(
        web.Response(text=text, content_type="text/css", headers={"Cache-Control": "max-age=3600"})
    )


def _door(handlers: frozenset[Handler]) -> Middleware:
    @web.middleware
    async def door(request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.match_info.handler not in handlers:
            return await handler(request)
        state = console(request)
        try:
            if not request.path.startswith(OPEN_PATHS):
                refused = await _sign_in_check(request, state)
                if refused is not None:
                    return refused
            return with_headers(await handler(request))
        except web.HTTPException as exc:  # raised redirects and 404s: sent with the headers too
            for name, value in SECURITY_HEADERS.items():
                exc.headers.setdefault(name, value)
            raise
        except Exception:
            log.exception("the console failed on %s %s", request.method, request.path)
            me_ = request.get(ME)
            text = "Something went wrong on Lore's side (it was logged for whoever runs Lore). Try again."
            return message(state.env, me_, text, status=500, title="Something went wrong")

    return door


async def _sign_in_check(request: web.Request, state: Console) -> web.StreamResponse | None:
    """The signed-in person on `request[ME]`, and their form's CSRF token checked; else the
    answer to give instead (the sign-in page, or a refusal)."""
    secret = state.signer.unsign(request.cookies.get(SESSION_COOKIE))
    user = await state.services.signin.current(secret) if secret else None
    if user is None:
        if request.method == "GET":
            raise web.HTTPSeeOther("/console/signin")
        return message(state.env, None, "Sign in first.", status=401, title="Signed out")
    request[ME] = user
    if request.method == "POST":
        if request.content_length is not None and request.content_length > pages.UPLOAD_LIMIT:
            return message(state.env, user, "That is too big to send here.", status=413, title="Too big")
        form = await request.post()
        settings = state.services.settings
        if not csrf_ok(form, user.csrf) or not same_origin(request, settings.lore_console_url):
            log.info(
                "console: refused a form without a valid CSRF token (%s %s)", request.method, request.path
            )
            return message(state.env, user, EXPIRED_FORM, status=403, title="Refused")
    return None
