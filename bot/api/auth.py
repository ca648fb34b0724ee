"""Who is calling: an API key from `Authorization: Bearer lore_…` (`bot.app.keys.Caller`:
the user it acts as, from a private place, like the CLI), or a 401 saying how to authenticate.
"""

from __future__ import annotations

from aiohttp import web

from bot.api.errors import Unauthorized
from bot.api.state import state
from bot.app.keys import Caller

CHALLENGE = {"WWW-Authenticate": 'Bearer realm="lore"'}
NO_KEY = "Send an API key as `Authorization: Bearer lore_…`; create one with `lore api-key create`."
BAD_KEY = (
    "That API key is not valid: it was revoked or mistyped. Create a new one with `lore api-key create`."
)

CALLER = web.RequestKey("lore_api_caller", Caller)


async def authenticate(request: web.Request) -> Caller:
    """The caller, or a 401 saying how to authenticate."""
    api = state(request)
    scheme, _, secret = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not secret.strip():
        raise Unauthorized(NO_KEY, headers=CHALLENGE)
    found = await api.keys.caller(secret.strip(), api.services.settings.connector_admins)
    if found is None:
        raise Unauthorized(BAD_KEY, headers=CHALLENGE)
    return found


def caller(request: web.Request) -> Caller:
    """The authenticated caller of a request to a route that needs a key."""
    return request[CALLER]
