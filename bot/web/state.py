"""What the console's handlers share: the services, the sign-in provider, the cookie signer
and the templates (on the application), and the signed-in person (on the request)."""

from __future__ import annotations

from dataclasses import dataclass

from aiohttp import web
from jinja2 import Environment

from bot.app.services import Services
from bot.app.signin import ConsoleUser, IdentityProvider
from bot.web.session import CookieSigner


@dataclass(frozen=True)
class Console:
    services: Services
    provider: IdentityProvider | None
    signer: CookieSigner
    env: Environment

    @property
    def secure_cookies(self) -> bool:
        """Cookies only over HTTPS, when the console's address is an https one."""
        url = self.services.settings.lore_console_url
        return url is not None and url.startswith("https://")


CONSOLE = web.AppKey("lore_console", Console)
ME = web.RequestKey("lore_console_user", ConsoleUser)


def console(request: web.Request) -> Console:
    return request.app[CONSOLE]


def me(request: web.Request) -> ConsoleUser:
    return request[ME]
