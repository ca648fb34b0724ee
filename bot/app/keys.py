"""API keys as the surfaces use them: issue one (for a user, or a service key of its own),
revoke, list, and tell who a secret belongs to (`Caller`). Secrets are stored only as hashes.

A key acts as a user of its tenant from a private place (like the CLI): the user it was
created for, or else a service user of its own (`api-key:<id>`), created on first use. So
the access policy in `storage.access` applies unchanged to every surface that takes keys
(the HTTP API, MCP over HTTP): shared and public channel indexes are visible, private
channel indexes never, personal indexes only the key's own user's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from bot.app.audit import AuditAction, Auditor
from bot.app.settings import Settings
from storage.access import Place
from storage.db import Database, open_database
from storage.repositories.api_keys import ApiKeyRef, ApiKeyRepository, IssuedKey
from storage.repositories.directory import Directory

__all__ = ["ApiKeyRef", "ApiKeys", "Caller", "IssuedKey", "open_keys"]


@dataclass(frozen=True)
class Caller:
    """Who a key acts as, and with which rights."""

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


class ApiKeys:
    def __init__(self, db: Database) -> None:
        self._keys = ApiKeyRepository(db)
        self._directory = Directory(db)
        self._audit = Auditor(db, self._directory)
        self._service_users: dict[int, int] = {}

    def create(
        self, tenant_id: str, name: str, *, user: str | None = None, reads_audit: bool = False
    ) -> IssuedKey:
        """A new key of `tenant_id`, acting as the Slack user `user` if given; `reads_audit`:
        it may read the workspace's audit log (a SIEM's key)."""
        self._directory.ensure_tenant(tenant_id)
        user_id = self._directory.ensure_user(tenant_id, user).id if user else None
        issued = self._keys.create(tenant_id, name, user_id=user_id, reads_audit=reads_audit)
        details = {"key": issued.key.id, "as_user": user, "reads_audit": reads_audit}
        self._audit.record_sync(tenant_id, None, AuditAction.API_KEY_CREATE, name, details)
        return issued

    def revoke(self, id_or_name: str, *, tenant_id: str | None = None) -> ApiKeyRef:
        key = self._keys.revoke(id_or_name, tenant_id=tenant_id)
        self._audit.record_sync(key.tenant_id, None, AuditAction.API_KEY_REVOKE, key.name, {"key": key.id})
        return key

    def listing(self, tenant_id: str | None = None) -> list[ApiKeyRef]:
        return self._keys.list_keys(tenant_id)

    async def authenticate(self, secret: str) -> ApiKeyRef | None:
        return await asyncio.to_thread(self._keys.authenticate, secret)

    async def caller(self, secret: str, connector_admins: frozenset[str]) -> Caller | None:
        """Who `secret` acts as; None for a key that is unknown or revoked."""
        key = await self.authenticate(secret)
        if key is None:
            return None
        user_id = await self.user_id(key)
        if key.user_id is None:
            return Caller(key, user_id, connector_admin=True)
        user = await asyncio.to_thread(self._directory.user, user_id)
        return Caller(
            key,
            user_id,
            is_admin=user.is_admin,
            connector_admin=user.is_admin or user.external_id in connector_admins,
        )

    async def user_id(self, key: ApiKeyRef) -> int:
        """The user a key acts as: the one it was created for, or its own service user
        (`api-key:<id>`, created on first use)."""
        if key.user_id is not None:
            return key.user_id
        if key.id not in self._service_users:
            user = await asyncio.to_thread(
                self._directory.ensure_user, key.tenant_id, f"api-key:{key.id}", f"API key {key.name}"
            )
            self._service_users[key.id] = user.id
        return self._service_users[key.id]


@contextmanager
def open_keys(settings: Settings) -> Iterator[ApiKeys]:
    """API keys over their own connection to the database (for the CLI)."""
    settings.lore_home.mkdir(parents=True, exist_ok=True)
    db = open_database(settings.effective_database_url)
    try:
        yield ApiKeys(db)
    finally:
        db.dispose()
