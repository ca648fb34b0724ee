"""The console's cookies and forms: a signed, HttpOnly, SameSite session cookie, the short
cookie that carries a Sign in with Slack attempt's state and nonce, and the CSRF check every
form passes.

A cookie's value is `<secret>.<HMAC-SHA256 of it>`, keyed from LORE_SECRET_KEY (or, without
one, a key kept in LORE_HOME, readable by Lore alone): a forged or altered cookie is refused
before the database is asked. The session's secret itself is random, and the database keeps
only its hash (`bot.app.signin`).

Every POST carries the session's CSRF token in a hidden field, compared in constant time;
an `Origin` header, when the browser sends one, must be the console's own.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path

from aiohttp import web
from multidict import MultiMapping

from bot.app.settings import Settings

SESSION_COOKIE = "lore_console"
SIGN_IN_COOKIE = "lore_console_signin"
CONSOLE_PATH = "/console"
KEY_FILE = "console.key"
SIGN_IN_SECONDS = 600
Form = MultiMapping[str | bytes | bytearray | web.FileField]


class CookieSigner:
    def __init__(self, key: bytes) -> None:
        self._key = key

    @classmethod
    def for_settings(cls, settings: Settings) -> CookieSigner:
        if settings.lore_secret_key is not None:
            root = settings.lore_secret_key.get_secret_value().encode()
        else:
            root = _kept_key(settings.lore_home / KEY_FILE)
        return cls(hmac.new(root, b"lore console cookies", hashlib.sha256).digest())

    def sign(self, value: str) -> str:
        return f"{value}.{self._mac(value)}"

    def unsign(self, signed: str | None) -> str | None:
        """The value of a cookie this signer signed (None: absent, forged or altered)."""
        if not signed or "." not in signed:
            return None
        value, _, mac = signed.rpartition(".")
        return value if hmac.compare_digest(mac, self._mac(value)) else None

    def _mac(self, value: str) -> str:
        return hmac.new(self._key, value.encode(), hashlib.sha256).hexdigest()


def set_cookie(
    response: web.StreamResponse, name: str, value: str, *, secure: bool, max_age: int | None = None
) -> None:
    response.set_cookie(
        name, value, path=CONSOLE_PATH, httponly=True, samesite="Lax", secure=secure, max_age=max_age
    )


def forget_cookie(response: web.StreamResponse, name: str) -> None:
    response.del_cookie(name, path=CONSOLE_PATH)


def new_state() -> tuple[str, str]:
    """A Sign in with Slack attempt's state and nonce."""
    return secrets.token_urlsafe(24), secrets.token_urlsafe(24)


def csrf_ok(form: Form, expected: str) -> bool:
    given = form.get("csrf")
    return isinstance(given, str) and hmac.compare_digest(given.encode(), expected.encode())


def same_origin(request: web.Request, console_url: str | None) -> bool:
    """The request's `Origin` (when the browser sends one) is the console's own address."""
    origin = request.headers.get("Origin")
    if origin is None:
        return True
    allowed = {f"{request.scheme}://{request.host}"}
    if console_url:
        allowed.add(console_url.rstrip("/"))
    return origin in allowed


def _kept_key(path: Path) -> bytes:
    """A random key kept in a file only Lore's user may read, made on first need."""
    if path.exists():
        return path.read_bytes()
    path.parent.mkdir(parents=True, exist_ok=True)
    key = secrets.token_bytes(32)
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process made it first
        return path.read_bytes()
    with os.fdopen(descriptor, "wb") as out:
        out.write(key)
    return key
