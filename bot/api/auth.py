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
from storage.access import Place
from storage.repositories.api_keys import ApiKeyRef
from storage.repositories.directory import Directory

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

    @property
    def place(self) -> Place:
        return Place(tenant_id=self.key.tenant_id, user_id=self.user_id)


CALLER = web.RequestKey("lore_api_caller", Caller)


class ServiceUsers:
    """The service user of each key created for no one, created once and remembered."""

    def __init__(self, directory: Directory) -> None:
        self._directory = directory
        self._known: dict[int, int] = {}

    async def user_id(self, key: ApiKeyRef) -> int:
        if key.user_id is not None:
            return key.user_id
        if key.id not in self._known:
            user = await asyncio.to_thread(
                self._directory.ensure_user, key.tenant_id, f"api-key:{key.id}", f"API key {key.name}"
            )
            self._known[key.id] = user.id
        return self._known[key.id]


async def authenticate(request: web.Request) -> Caller:
    """The caller, or a 401 saying how to authenticate."""
    api = state(request)
    scheme, _, secret = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not secret.strip():
        raise Unauthorized(NO_KEY, headers=CHALLENGE)
    key = await asyncio.to_thread(api.keys.authenticate, secret.strip())
    if key is None:
        raise Unauthorized(BAD_KEY, headers=CHALLENGE)
    return Caller(key, await api.service_users.user_id(key))


def caller(request: web.Request) -> Caller:
    """The authenticated caller of a request to a route that needs a key."""
    return request[CALLER]
