"""Who is calling: an API key from `Authorization: Bearer lore_…`, and the place it acts from.

A key acts as a user of its tenant from a private place (like the CLI): the user it was
created for, or else a service user of its own (`api-key:<id>`), created on first use. So
the access policy in `storage.access` applies unchanged: shared and public channel indexes
are visible, private channel indexes never, personal indexes only the key's own user's,
and a shared index created through a key can be deleted through that key (or its user).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from aiohttp import web

from bot.api.errors import Unauthorized
from bot.api.state import state
from bot.app.keys import ApiKeyRef
from storage.access import Place

CHALLENGE = {"WWW-Authenticate": 'Bearer realm="lore"'}
NO_KEY = "Send an API key as `Authorization: Bearer lore_…`; create one with `lore api-key create`."
BAD_KEY = (
    "That API key is not valid: it was revoked or mistyped. Create a new one with `lore api-key create`."
)


@dataclass(frozen=True)
class Caller:
    key: ApiKeyRef
    user_id: int
    """The user the key acts as: the one it was created for, or its service user."""
    is_admin: bool = False
    """A key created for a workspace admin acts as one."""
    connector_admin: bool = False
    """A service key, or a key created for an admin or a user in LORE_CONNECTOR_ADMINS."""

    @property
    def place(self) -> Place:
        return Place(
            tenant_id=self.key.tenant_id,
            user_id=self.user_id,
            user_is_admin=self.is_admin,
            connector_admin=self.connector_admin,
        )


CALLER = web.RequestKey("lore_api_caller", Caller)


async def authenticate(request: web.Request) -> Caller:
    """The caller, or a 401 saying how to authenticate."""
    api = state(request)
    scheme, _, secret = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not secret.strip():
        raise Unauthorized(NO_KEY, headers=CHALLENGE)
    key = await api.keys.authenticate(secret.strip())
    if key is None:
        raise Unauthorized(BAD_KEY, headers=CHALLENGE)
    user_id = await api.keys.user_id(key)
    if key.user_id is None:
        return Caller(key, user_id, connector_admin=True)
    user = await asyncio.to_thread(api.services.directory.user, user_id)
    admins = api.services.settings.connector_admins
    return Caller(
        key, user_id, is_admin=user.is_admin, connector_admin=user.is_admin or user.external_id in admins
    )


def caller(request: web.Request) -> Caller:
    """The authenticated caller of a request to a route that needs a key."""
    return request[CALLER]
