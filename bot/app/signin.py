"""Signing in to the admin console: who someone is (Sign in with Slack, through an
`IdentityProvider`; or a one-time link `lore admin link` printed), whether the console has
anything for them (`AdminActions.role`), and their session.

A session lives in SQL (only a hash of its secret), so signing out ends it everywhere and a
copy of the database opens nothing. Each request re-reads the person from the directory: an
admin who is no longer one loses the admin pages at once, not when the session ends.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Protocol

from bot.app.actions.admin import ConsoleRole
from bot.app.audit import AuditAction
from bot.app.conversations import place_of
from knowledge import NotAllowed
from storage.access import Place
from storage.records import NotFound, UserRef
from storage.repositories.console import ConsoleAccess
from storage.values import LOCAL_TENANT

if TYPE_CHECKING:
    from bot.app.services import Services

log = logging.getLogger(__name__)
LINK_LASTS = timedelta(minutes=15)
NOTHING_FOR_YOU = (
    "the console is for workspace admins, LORE_CONNECTOR_ADMINS and the owners of shared indexes; "
    "ask one of your workspace's admins"
)


class SignInFailed(Exception):
    """Signing in did not work; the message says why, for the person trying."""


@dataclass(frozen=True)
class Identity:
    """Who someone proved to be: a person of a workspace, by Slack user id (or shell name),
    and what their workspace says of them (`is_admin` None: not known)."""

    tenant_id: str
    user_external_id: str
    name: str = ""
    is_admin: bool | None = None
    is_guest: bool | None = None
    home_team: str | None = None


class IdentityProvider(Protocol):
    """Sign in with Slack (OpenID Connect), as `bot.slack.signin` implements it."""

    def authorize_url(self, *, state: str, nonce: str, redirect_uri: str) -> str:
        """Where to send the browser to sign in."""
        ...

    async def identify(self, *, code: str, redirect_uri: str, nonce: str) -> Identity:
        """Who the code returned to `redirect_uri` stands for (`SignInFailed` otherwise)."""
        ...


@dataclass(frozen=True)
class ConsoleUser:
    """A signed-in person, as of this request."""

    user: UserRef
    place: Place
    role: ConsoleRole
    csrf: str
    via: str


class ConsoleSignIn:
    def __init__(self, services: Services) -> None:
        self._services = services
        self._access = ConsoleAccess(services.db)

    @property
    def session_lasts(self) -> timedelta:
        return timedelta(hours=self._services.settings.lore_console_session_hours)

    def link(self, tenant_id: str = LOCAL_TENANT, user: str | None = None) -> str:
        """A one-time sign-in link's secret for a person (the local user by default)."""
        from bot.app.local import local_user_name

        who = user or local_user_name()
        self._services.directory.ensure_tenant(tenant_id)
        if tenant_id == LOCAL_TENANT and user is None:
            self._services.directory.ensure_user(tenant_id, who, who, is_admin=True)
        return self._access.grant(tenant_id, who, lasts=LINK_LASTS)

    async def redeem(self, secret: str) -> tuple[str, ConsoleUser]:
        """Sign in with a one-time link: the new session's secret and who it is."""
        grant = await asyncio.to_thread(self._access.redeem, secret)
        if grant is None:
            raise SignInFailed("that sign-in link was used already or has expired; ask for a new one")
        user = await asyncio.to_thread(
            self._services.directory.find_user, grant.tenant_id, grant.user_external_id
        )
        if user is None:
            user = await asyncio.to_thread(
                self._services.directory.ensure_user, grant.tenant_id, grant.user_external_id
            )
        return await self._open(user, via="link")

    async def signed_in(self, identity: Identity) -> tuple[str, ConsoleUser]:
        """Someone Slack vouched for: their session's secret and who they are."""
        directory = self._services.directory
        await asyncio.to_thread(directory.ensure_tenant, identity.tenant_id)
        user = await asyncio.to_thread(
            directory.ensure_user,
            identity.tenant_id,
            identity.user_external_id,
            identity.name,
            is_admin=identity.is_admin,
            home_team=identity.home_team,
            is_guest=identity.is_guest,
        )
        return await self._open(user, via="slack")

    async def current(self, secret: str) -> ConsoleUser | None:
        """Who a session's secret signs in, as of now (None: no live session, or the
        console has nothing for them any more)."""
        session = await asyncio.to_thread(self._access.session, secret)
        if session is None:
            return None
        try:
            user = await asyncio.to_thread(self._services.directory.user, session.user_id)
        except NotFound:
            return None
        place = place_of(self._services, user)
        role = await self._services.actions.admin.role(place)
        if role is None:
            return None
        return ConsoleUser(user, place, role, session.csrf, session.via)

    async def sign_out(self, secret: str) -> None:
        await asyncio.to_thread(self._access.end, secret)

    async def _open(self, user: UserRef, *, via: str) -> tuple[str, ConsoleUser]:
        place = place_of(self._services, user)
        role = await self._services.actions.admin.role(place)
        if role is None:
            log.info("console: %s of %s may not use the console", user.external_id, user.tenant_id)
            raise NotAllowed(NOTHING_FOR_YOU)
        secret, session = await asyncio.to_thread(
            self._access.open_session, user.tenant_id, user.id, via=via, lasts=self.session_lasts
        )
        await self._services.audit.record(
            place, AuditAction.CONSOLE_SIGN_IN, user.external_id, via=via, role=role
        )
        return secret, ConsoleUser(user, place, role, session.csrf, via)
