"""Connections to connectors (Confluence): a tenant's `DocSource` rows with an API root and
sealed credentials, attached to indexes through `DocSourceConfig`s whose folders say what
to pull and whose sync cursor says where the last sync stopped.

Credentials go in through `save` and come out only through `credentials`; everything else
hands out `ConnectionRef`s, which carry a masked hint, never a secret.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlmodel import col, select

from storage.db import Database
from storage.models import DocSource, DocSourceConfig
from storage.records import ConnectionRef, JobClaim, NotFound, SourceConfigRef
from storage.repositories._rows import aware
from storage.repositories.jobs import hold
from storage.repositories.sources import SITE, source_config_ref
from storage.secrets import MissingSecretKey, SecretBox


class ConnectionRepository:
    def __init__(self, db: Database, box: SecretBox | None) -> None:
        self._db = db
        self._box = box

    @property
    def can_store_credentials(self) -> bool:
        return self._box is not None

    def require_key(self) -> SecretBox:
        """The box that seals credentials; `MissingSecretKey` when LORE_SECRET_KEY is unset."""
        if self._box is None:
            raise MissingSecretKey()
        return self._box

    def save(
        self,
        tenant_id: str,
        kind: str,
        name: str,
        base_url: str,
        credentials: Mapping[str, str],
        hint: str,
        *,
        created_by: int | None = None,
    ) -> ConnectionRef:
        """Store a connection, sealed; connecting the same base URL again replaces its
        credentials (a rotated token) and keeps its attachments."""
        sealed = self.require_key().seal(credentials)
        with self._db.session() as session:
            row = session.exec(
                select(DocSource).where(
                    col(DocSource.tenant_id) == tenant_id,
                    col(DocSource.kind) == kind,
                    col(DocSource.base_url) == base_url,
                )
            ).first()
            if row is None:
                row = DocSource(
                    tenant_id=tenant_id, kind=kind, base_url=base_url, created_by=created_by, name=""
                )
            row.name, row.credentials_ref, row.credentials_hint = name, sealed, hint
            session.add(row)
            session.flush()
            return _connection(row)

    def get(self, connection_id: int) -> ConnectionRef:
        with self._db.session() as session:
            row = session.get(DocSource, connection_id)
            if row is None or row.kind == SITE or row.base_url is None:
                raise NotFound(f"no connection {connection_id}")
            return _connection(row)

    def for_tenant(self, tenant_id: str, kind: str | None = None) -> list[ConnectionRef]:
        query = select(DocSource).where(
            col(DocSource.tenant_id) == tenant_id,
            col(DocSource.kind) != SITE,
            col(DocSource.base_url).is_not(None),
        )
        if kind is not None:
            query = query.where(col(DocSource.kind) == kind)
        with self._db.session() as session:
            return [_connection(row) for row in session.exec(query.order_by(col(DocSource.id))).all()]

    def every(self, kinds: Sequence[str]) -> list[ConnectionRef]:
        """Every workspace's connections of those kinds, oldest first."""
        if not kinds:
            return []
        with self._db.session() as session:
            query = select(DocSource).where(
                col(DocSource.kind).in_(list(kinds)), col(DocSource.base_url).is_not(None)
            )
            return [_connection(row) for row in session.exec(query.order_by(col(DocSource.id))).all()]

    def credentials(self, connection_id: int) -> dict[str, str]:
        """The connection's credentials, opened: only for the code that calls its API."""
        with self._db.session() as session:
            row = session.get(DocSource, connection_id)
            if row is None or not row.credentials_ref:
                raise NotFound(f"no credentials for connection {connection_id}")
            sealed = row.credentials_ref
        return self.require_key().open(sealed)

    def attach(
        self,
        connection_id: int,
        index_id: int,
        folders: Sequence[str],
        *,
        schedule: str = "daily",
        selection: Mapping[str, Any] | None = None,
    ) -> SourceConfigRef:
        """Attach the connection to an index with `folders`, or add them to the attachment it
        already has there (asking twice does not attach twice). `selection` (what of the
        folders to index, as the connector's kind checked it) replaces the attachment's when
        given."""
        with self._db.session() as session:
            source = session.get(DocSource, connection_id)
            if source is None:
                raise NotFound(f"no connection {connection_id}")
            config = session.exec(
                select(DocSourceConfig).where(
                    col(DocSourceConfig.index_id) == index_id, col(DocSourceConfig.source_id) == connection_id
                )
            ).first()
            if config is None:
                config = DocSourceConfig(index_id=index_id, source_id=connection_id, schedule=schedule)
            config.folders = list(dict.fromkeys([*config.folders, *folders]))
            if selection is not None and config.options.get("selection") != dict(selection):
                # what is indexed changes: the next sync lists everything, without validators
                config.options = {**config.options, "selection": dict(selection), "state": {}}
                config.last_full_sync_at = None
            session.add(config)
            session.flush()
            return source_config_ref(config, source)

    def drop_folder(self, config_id: int, folder: str) -> SourceConfigRef:
        """Take one folder out of an attachment (its documents go at its next sync, which
        lists the rest completely)."""
        with self._db.session() as session:
            config = session.get(DocSourceConfig, config_id)
            source = session.get(DocSource, config.source_id) if config is not None else None
            if config is None or source is None:
                raise NotFound(f"no attachment {config_id}")
            config.folders = [f for f in config.folders if f.lower() != folder.lower()]
            session.add(config)
            session.flush()
            return source_config_ref(config, source)

    def attachments(self, connection_id: int) -> list[SourceConfigRef]:
        with self._db.session() as session:
            source = session.get(DocSource, connection_id)
            if source is None:
                return []
            rows = session.exec(
                select(DocSourceConfig)
                .where(col(DocSourceConfig.source_id) == connection_id)
                .order_by(col(DocSourceConfig.id))
            ).all()
            return [source_config_ref(config, source) for config in rows]

    def record_sync(
        self,
        config_id: int,
        started_at: datetime,
        *,
        complete: bool,
        folders: Sequence[str],
        state: Mapping[str, Any] | None = None,
        claim: JobClaim | None = None,
    ) -> None:
        """A sync that began at `started_at` succeeded: the next one asks for changes since
        then; a complete one also dates the listing and the folders it covered. `state` is
        what the connector keeps until the next sync (validators of its listings). `claim`:
        written for that indexing job, refused (`ClaimLost`) once the job was taken over, so
        a paused worker coming back does not move the cursor past what its successor saw."""
        with self._db.session() as session:
            hold(session, claim)
            config = session.get(DocSourceConfig, config_id)
            if config is None:
                return
            config.sync_cursor = started_at
            config.last_refresh_at = started_at
            if complete:
                config.last_full_sync_at = started_at
                config.options = {**config.options, "listed_folders": list(folders)}
            if state is not None:
                config.options = {**config.options, "state": dict(state)}
            session.add(config)

    def remove(self, connection_id: int) -> None:
        """Forget a connection and its credentials; the caller detaches it everywhere first."""
        with self._db.session() as session:
            row = session.get(DocSource, connection_id)
            if row is not None and row.kind != SITE:
                session.delete(row)


def _connection(row: DocSource) -> ConnectionRef:
    assert row.id is not None and row.base_url is not None
    return ConnectionRef(
        id=row.id,
        tenant_id=row.tenant_id,
        kind=row.kind,
        name=row.name,
        base_url=row.base_url,
        credentials_hint=row.credentials_hint or "",
        created_by=row.created_by,
        created_at=aware(row.created_at),
    )
