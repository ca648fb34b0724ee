"""Connections: what surfaces call to connect a source of any registered kind (Confluence,
GitHub: credentials checked, then sealed), list a tenant's connections (masked), list a
connection's folders (spaces, repositories), and attach folders to an index. Every API call
goes through `knowledge.sources.fetch`'s address checks.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from yarl import URL

from knowledge.sources.connectors.base import (
    ApiOptions,
    Connector,
    ConnectorError,
    ConnectorKind,
    Folder,
    FolderSpec,
    NotConfigured,
    NotConnected,
    UnknownFolder,
)
from knowledge.sources.connectors.confluence import KIND
from knowledge.sources.connectors.credentials import Credentials
from knowledge.sources.connectors.registry import CONNECTORS, connector_kind
from knowledge.sources.fetch import Fetcher, Resolve, system_resolve
from knowledge.sources.web import AllowList, Refused, check_url
from storage.records import ConnectionRef, IndexRef, NotFound, SourceConfigRef, StorageError
from storage.repositories.connections import ConnectionRepository
from storage.secrets import MissingSecretKey

MB = 1024 * 1024
Sleep = Callable[[float], Awaitable[object]]


@dataclass(frozen=True)
class ClientLimits:
    timeout: float = 30.0
    max_bytes: int = 50 * MB
    retries: int = 3
    max_wait: float = 60.0
    requests_per_second: Mapping[str, float] = field(default_factory=dict)
    """The average rate each kind's client keeps to, by kind (`LORE_NOTION_REQUESTS_PER_SECOND`);
    a kind not named keeps to its own (`ConnectorKind.requests_per_second`)."""


def normalise_base_url(text: str, allow: AllowList, kind: str = KIND) -> str:
    """The API root a user means: scheme, host, port and path, no query or trailing slash,
    as the kind reads it (a bare Cloud site gets its `/wiki`; `https://github.com` is
    `https://api.github.com`); the kind's default when `text` is empty. Raises
    `ConnectorError` for a URL Lore may not or cannot call."""
    connector = connector_kind(kind)
    text = text.strip() or (connector.default_url or "")
    try:
        url = URL(text)
    except (ValueError, TypeError) as exc:
        raise ConnectorError(f"“{text}” is not a web address") from exc
    if url.scheme not in ("http", "https") or not url.host:
        raise ConnectorError(f"“{text}” is not an http(s) address of a {connector.label} site")
    plain = str(url.with_path(url.path.rstrip("/") or "/").with_query(None).with_fragment(None))
    base = connector.api_root(plain.rstrip("/")).rstrip("/")
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
        base = normalise_base_url(base_url, self._allow, kind)
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
            credentials.hint(connector_kind(kind).credential_label),
            created_by=created_by,
        )
        return ref, account

    async def for_tenant(self, tenant_id: str) -> list[ConnectionRef]:
        return await asyncio.to_thread(self.repository.for_tenant, tenant_id)

    async def every(self, kinds: Sequence[str]) -> list[ConnectionRef]:
        """Every workspace's connections of those kinds (for the schedulers)."""
        return await asyncio.to_thread(self.repository.every, kinds)

    async def find(
        self, tenant_id: str, reference: str | None = None, *, kind: str | None = None
    ) -> ConnectionRef:
        """A connection by id, name or host; with no reference (or only a kind's name), the
        tenant's only one (of that kind)."""
        connections = await self.for_tenant(tenant_id)
        wanted = (reference or "").strip().lower()
        if wanted in CONNECTORS:
            kind, wanted = kind or wanted, ""
        if kind is not None:
            connections = [c for c in connections if c.kind == kind]
        label = connector_kind(kind).label if kind else "source"
        if not connections:
            hint = f"“connect {kind}”" if kind else "“connect confluence” or “connect github”"
            raise NotConnected(f"no {label} is connected yet; an admin can connect one with {hint}")
        if not wanted:
            if len(connections) == 1:
                return connections[0]
            names = ", ".join(c.name for c in connections)
            raise NotConnected(f"several {label}s are connected ({names}); say which one")
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
        selection: Mapping[str, Any] | None = None,
    ) -> SourceConfigRef:
        """Attach folders (spaces or page trees, repositories or owners) to `index`, after
        checking that the account sees each; added to the attachment the index already has,
        if any. `selection` says what of them to index (the kind's options, checked here)."""
        kind = connector_kind(connection.kind)
        try:
            checked = kind.check_options(selection or {}) if selection is not None else None
        except ValueError as exc:
            raise ConnectorError(str(exc)) from exc
        known = {folder.key.lower(): folder for folder in await self.folders(connection)}
        missing = [f.key for f in folders if f.key.lower() not in known]
        if missing:
            choices = ", ".join(sorted(f.key for f in known.values())[:30]) or "none"
            raise UnknownFolder(
                f"{kind.label} at {URL(connection.base_url).host} has no {kind.folder_noun} "
                f"{', '.join(missing)} that this account can read; its {kind.folders_noun}: {choices}"
            )
        canonical = [str(FolderSpec(known[f.key.lower()].key, f.within)) for f in folders]
        return await asyncio.to_thread(
            self.repository.attach,
            connection.id,
            index.id,
            canonical,
            schedule=schedule,
            selection=checked,
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
        connector: ConnectorKind = connector_kind(kind)
        limits = self._limits
        fetcher = Fetcher(
            self._allow, resolve=self._resolve, max_bytes=limits.max_bytes, timeout=limits.timeout
        )
        rate = limits.requests_per_second.get(connector.kind, connector.requests_per_second)
        options = ApiOptions(
            retries=limits.retries,
            max_wait=limits.max_wait,
            sleep=self._sleep,
            note=note,
            requests_per_second=rate,
        )
        async with fetcher.session(max_redirects=3) as session:
            yield connector.open(session, base_url, credentials, options)
