"""Connections: what surfaces call to connect a Confluence (credentials checked, then sealed),
list a tenant's connections (masked), list a connection's spaces, and attach spaces or page
trees to an index. Every API call goes through `knowledge.sources.fetch`'s address checks.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass

from yarl import URL

from knowledge.sources.connectors.base import (
    ApiOptions,
    Connector,
    ConnectorError,
    Folder,
    FolderSpec,
    NotConfigured,
    NotConnected,
    UnknownFolder,
)
from knowledge.sources.connectors.confluence import KIND
from knowledge.sources.connectors.confluence_api import Sleep
from knowledge.sources.connectors.credentials import Credentials
from knowledge.sources.connectors.registry import connector_kind
from knowledge.sources.fetch import Fetcher, Resolve, system_resolve
from knowledge.sources.web import AllowList, Refused, check_url
from storage.records import ConnectionRef, IndexRef, NotFound, SourceConfigRef, StorageError
from storage.repositories.connections import ConnectionRepository
from storage.secrets import MissingSecretKey

MB = 1024 * 1024


@dataclass(frozen=True)
class ClientLimits:
    timeout: float = 30.0
    max_bytes: int = 50 * MB
    retries: int = 3
    max_wait: float = 60.0


def normalise_base_url(text: str, allow: AllowList) -> str:
    """The API root a user means: scheme, host, port and path, no query or trailing slash;
    a bare Cloud site (`https://x.atlassian.net`) gets its `/wiki`. Raises `ConnectorError`
    for a URL Lore may not or cannot call."""
    try:
        url = URL(text.strip())
    except (ValueError, TypeError) as exc:
        raise ConnectorError(f"“{text}” is not a web address") from exc
    if url.scheme not in ("http", "https") or not url.host:
        raise ConnectorError(f"“{text}” is not an http(s) address of a Confluence site")
    path = url.path.rstrip("/")
    if not path and url.host.endswith(".atlassian.net"):
        path = "/wiki"
    base = str(url.with_path(path or "/").with_query(None).with_fragment(None)).rstrip("/")
    try:
        check_url(base, allow)
    except Refused as exc:
        raise ConnectorError(f"Lore may not connect to {url.host}: {exc}") from exc
    return base


class Connections:
    def __init__(
        self,
        repository: ConnectionRepository,
        allow: AllowList,
        *,
        resolve: Resolve = system_resolve,
        limits: ClientLimits | None = None,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self.repository = repository
        self._allow = allow
        self._resolve = resolve
        self._limits = limits or ClientLimits()
        self._sleep = sleep

    async def connect(
        self,
        tenant_id: str,
        base_url: str,
        credentials: Credentials,
        *,
        kind: str = KIND,
        created_by: int | None = None,
        name: str | None = None,
    ) -> tuple[ConnectionRef, str]:
        """Check the credentials against the site, then store them sealed; the connection and
        the account's name. Nothing is stored when the check fails."""
        connector_kind(kind)
        if not self.repository.can_store_credentials:
            raise NotConfigured(str(MissingSecretKey()))
        base = normalise_base_url(base_url, self._allow)
        async with self.client(base, credentials, kind=kind) as connector:
            account = await connector.account()
        label = name or (URL(base).host or base)
        ref = await asyncio.to_thread(
            self.repository.save,
            tenant_id,
            kind,
            label,
            base,
            credentials.as_mapping(),
            credentials.hint(),
            created_by=created_by,
        )
        return ref, account

    async def for_tenant(self, tenant_id: str) -> list[ConnectionRef]:
        return await asyncio.to_thread(self.repository.for_tenant, tenant_id)

    async def every(self, kinds: Sequence[str]) -> list[ConnectionRef]:
        """Every workspace's connections of those kinds (for the schedulers)."""
        return await asyncio.to_thread(self.repository.every, kinds)

    async def find(self, tenant_id: str, reference: str | None = None) -> ConnectionRef:
        """A connection by id, name or host; with no reference, the tenant's only one."""
        connections = await self.for_tenant(tenant_id)
        if not connections:
            raise NotConnected(
                "no Confluence is connected yet; an admin can connect one with “connect confluence”"
            )
        if reference is None or not reference.strip() or reference.strip().lower() == KIND:
            if len(connections) == 1:
                return connections[0]
            names = ", ".join(c.name for c in connections)
            raise NotConnected(f"several Confluence sites are connected ({names}); say which one")
        wanted = reference.strip().lower()
        for connection in connections:
            host = (URL(connection.base_url).host or "").lower()
            if wanted in (str(connection.id), connection.name.lower(), host, connection.base_url.lower()):
                return connection
        raise NotConnected(f"there is no connection called “{reference}”; see `lore source list`")

    async def get(self, tenant_id: str, connection_id: int) -> ConnectionRef:
        """The tenant's connection `connection_id` (`NotConnected` for another tenant's)."""
        try:
            connection = await asyncio.to_thread(self.repository.get, connection_id)
        except NotFound:
            connection = None
        if connection is None or connection.tenant_id != tenant_id:
            raise NotConnected(f"there is no connection {connection_id}")
        return connection

    async def folders(self, connection: ConnectionRef) -> list[Folder]:
        async with self.open(connection) as connector:
            return await connector.folders()

    async def attach(
        self,
        connection: ConnectionRef,
        index: IndexRef,
        folders: Sequence[FolderSpec],
        *,
        schedule: str = "daily",
    ) -> SourceConfigRef:
        """Attach spaces (or page trees) to `index`, after checking that the account sees
        each space; added to the attachment the index already has, if any."""
        known = {folder.key.lower(): folder for folder in await self.folders(connection)}
        missing = [f.space for f in folders if f.space.lower() not in known]
        if missing:
            choices = ", ".join(sorted(f.key for f in known.values())[:30]) or "none"
            raise UnknownFolder(
                f"Confluence at {URL(connection.base_url).host} has no space {', '.join(missing)} that "
                f"this account can read; its spaces: {choices}"
            )
        canonical = [str(FolderSpec(known[f.space.lower()].key, f.page_id)) for f in folders]
        return await asyncio.to_thread(
            self.repository.attach, connection.id, index.id, canonical, schedule=schedule
        )

    @asynccontextmanager
    async def open(
        self, connection: ConnectionRef, *, note: Callable[[str], Awaitable[None]] | None = None
    ) -> AsyncIterator[Connector]:
        """A connector for a stored connection (its credentials opened for this use only)."""
        try:
            stored = await asyncio.to_thread(self.repository.credentials, connection.id)
        except MissingSecretKey as exc:
            raise NotConfigured(str(exc)) from exc
        except StorageError as exc:
            raise NotConfigured(f"the credentials of {connection.name} can't be used: {exc}") from exc
        credentials = Credentials.from_mapping(stored)
        async with self.client(
            connection.base_url, credentials, kind=connection.kind, note=note
        ) as connector:
            yield connector

    @asynccontextmanager
    async def client(
        self,
        base_url: str,
        credentials: Credentials,
        *,
        kind: str = KIND,
        note: Callable[[str], Awaitable[None]] | None = None,
    ) -> AsyncIterator[Connector]:
        """A client of the `kind` connector over an address-checked session."""
        connector = connector_kind(kind)
        limits = self._limits
        fetcher = Fetcher(
            self._allow, resolve=self._resolve, max_bytes=limits.max_bytes, timeout=limits.timeout
        )
        options = ApiOptions(retries=limits.retries, max_wait=limits.max_wait, sleep=self._sleep, note=note)
        async with fetcher.session(max_redirects=3) as session:
            yield connector.open(session, base_url, credentials, options)
