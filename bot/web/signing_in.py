"""Signing in to the console and out: the sign-in page, Sign in with Slack (a state and a
nonce kept in a short signed cookie, checked when Slack sends the browser back), the
one-time links `lore admin link` prints, and signing out (the session ends in SQL too)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from aiohttp import web

from bot.app.audit import Origin, Surface, acting_from
from bot.app.signin import SignInFailed
from bot.web.render import message, page, see_other
from bot.web.session import (
    SESSION_COOKIE,
    SIGN_IN_COOKIE,
    SIGN_IN_SECONDS,
    forget_cookie,
    new_state,
    set_cookie,
)
from bot.web.state import Console, console, me
from knowledge import NotAllowed

if TYPE_CHECKING:
    from bot.app.signin import ConsoleUser

log = logging.getLogger(__name__)
CALLBACK = "/console/auth/slack"
NO_SLACK = "Sign in with Slack needs SLACK_CLIENT_ID and SLACK_CLIENT_SECRET; use `lore admin link` instead."


def _state(request: web.Request) -> Console:
    return console(request)


async def signin_page(request: web.Request) -> web.StreamResponse:
    state = _state(request)
    return page(state.env, "signin.html", title="Sign in", me=None, slack=state.provider is not None)


async def slack_start(request: web.Request) -> web.StreamResponse:
    state = _state(request)
    if state.provider is None:
        return message(state.env, None, NO_SLACK, status=404, title="Sign in", back="/console/signin")
    value, nonce = new_state()
    target = state.provider.authorize_url(state=value, nonce=nonce, redirect_uri=redirect_uri(request, state))
    response = see_other(target)
    set_cookie(
        response,
        SIGN_IN_COOKIE,
        state.signer.sign(f"{value}:{nonce}"),
        secure=state.secure_cookies,
        max_age=SIGN_IN_SECONDS,
    )
    return response


async def slack_callback(request: web.Request) -> web.StreamResponse:
    state = _state(request)
    if state.provider is None:
        raise web.HTTPNotFound()
    kept = state.signer.unsign(request.cookies.get(SIGN_IN_COOKIE)) or ""
    expected, _, nonce = kept.partition(":")
    code, given = request.query.get("code", ""), request.query.get("state", "")
    if request.query.get("error"):
        return _failed(state, "You did not sign in with Slack.")
    if not expected or given != expected or not code:
        log.info("console: a Sign in with Slack callback with a missing or foreign state was refused")
        return _failed(state, "That sign-in did not start here (or took too long); try again.")
    try:
        identity = await state.provider.identify(
            code=code, redirect_uri=redirect_uri(request, state), nonce=nonce
        )
        with acting_from(_origin(request)):
            secret, user = await state.services.signin.signed_in(identity)
    except (SignInFailed, NotAllowed) as exc:
        return _failed(state, _sentence(str(exc)), status=403)
    return _signed_in(state, secret, user)


async def link(request: web.Request) -> web.StreamResponse:
    state = _state(request)
    try:
        with acting_from(_origin(request)):
            secret, user = await state.services.signin.redeem(request.match_info["secret"])
    except (SignInFailed, NotAllowed) as exc:
        return _failed(state, _sentence(str(exc)), status=403)
    return _signed_in(state, secret, user)


async def signout(request: web.Request) -> web.StreamResponse:
    state = _state(request)
    secret = state.signer.unsign(request.cookies.get(SESSION_COOKIE))
    if secret:
        await state.services.signin.sign_out(secret)
    response = see_other("/console/signin")
    forget_cookie(response, SESSION_COOKIE)
    log.info("console: %s signed out", me(request).user.external_id)
    return response


def redirect_uri(request: web.Request, state: Console) -> str:
    """Where Slack sends the browser back: LORE_CONSOLE_URL's, else this request's host."""
    base = state.services.settings.lore_console_url or f"{request.scheme}://{request.host}"
    return base.rstrip("/") + CALLBACK


def _signed_in(state: Console, secret: str, user: ConsoleUser) -> web.StreamResponse:
    first = "/console/overview" if user.role.value == "admin" else "/console/knowledge"
    response = see_other(first)
    set_cookie(
        response,
        SESSION_COOKIE,
        state.signer.sign(secret),
        secure=state.secure_cookies,
        max_age=int(state.services.signin.session_lasts.total_seconds()),
    )
    forget_cookie(response, SIGN_IN_COOKIE)
    return response


def _failed(state: Console, text: str, *, status: int = 400) -> web.StreamResponse:
    response = message(state.env, None, text, status=status, title="Not signed in", back="/console/signin")
    forget_cookie(response, SIGN_IN_COOKIE)
    return response


def _origin(request: web.Request) -> Origin:
    return Origin(Surface.CONSOLE, where=request.remote or "")


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")


ROUTES = [
    ("GET", "/console/signin", signin_page),
    ("GET", "/console/auth/slack/start", slack_start),
    ("GET", CALLBACK, slack_callback),
    ("GET", "/console/link/{secret}", link),
    ("POST", "/console/signout", signout),
]
