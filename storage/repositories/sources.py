"""Doc sources attached to indexes: a site (start URLs, limits, schedule) is a `DocSource`
of kind `site` plus the `DocSourceConfig` that ties it to an index. A connector's source (a
Confluence connection, `storage.repositories.connections`) outlives its attachments."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlmodel import col, select

from storage.db import Database
from storage.models import DocSource, DocSourceConfig, Document, IndexingJob, KnowledgeIndex, utcnow
from storage.records import DocumentRef, JobClaim, NotFound, SourceConfigRef
from storage.repositories._rows import aware, document_ref
from storage.repositories.jobs import hold

SITE = "site"
SLACK_CHANNEL = "slack-channel"
"""A Slack channel's history, learned into the channel's own index (read by the bot)."""
OWNED = "owned_by_attachment"
"""In a source's config: it belongs to its one attachment and goes with it (like a site's)."""


class SourceRepository:
    def __init__(self, db: Database) -> None:
        self._db = db

    def attach_site(
        self,
        tenant_id: str,
        index_id: int,
        name: str,
        start_urls: Sequence[str],
        *,
        options: dict[str, Any] | None = None,
        schedule: str = "daily",
        created_by: int | None = None,
    ) -> SourceConfigRef:
        """Attach a site to an index, or return the attachment it already has with the same
        start URLs (asking twice does not attach twice, even from two processes at once)."""
        source = DocSource(tenant_id=tenant_id, kind=SITE, name=name, created_by=created_by)
        return self._attach(source, index_id, start_urls, options, schedule)

    def attach_owned(
        self,
        tenant_id: str,
        index_id: int,
        kind: str,
        name: str,
        folders: Sequence[str],
        *,
        options: dict[str, Any] | None = None,
        schedule: str = "daily",
        created_by: int | None = None,
    ) -> SourceConfigRef:
        """Attach a source of `kind` that belongs to this attachment alone (a learned Slack
        channel), or return the one of that kind and folders the index already has."""
        source = DocSource(
            tenant_id=tenant_id, kind=kind, name=name, created_by=created_by, config={OWNED: True}
        )
        return self._attach(source, index_id, folders, options, schedule)

    def _attach(
        self,
        source: DocSource,
        index_id: int,
        folders: Sequence[str],
        options: dict[str, Any] | None,
        schedule: str,
    ) -> SourceConfigRef:
        """Write a new source and its attachment to `index_id`, unless the index already has
        one of the same kind and folders (then that one). The index's row is locked first,
        so two processes attaching the same thing at once take turns and attach it once."""
        with self._db.session() as session:
            session.exec(select(KnowledgeIndex.id).where(KnowledgeIndex.id == index_id).with_for_update())
            attached = session.exec(
                select(DocSourceConfig, DocSource).where(
                    DocSource.id == DocSourceConfig.source_id,
                    DocSourceConfig.index_id == index_id,
                    DocSource.kind == source.kind,
                )
            ).all()
            for config, existing in attached:
                if list(config.folders) == list(folders):
                    return source_config_ref(config, existing)
            session.add(source)
            session.flush()
            assert source.id is not None
            config = DocSourceConfig(
                index_id=index_id,
                source_id=source.id,
                folders=list(folders),
                options=dict(options or {}),
                schedule=schedule,
            )
            session.add(config)
            session.flush()
            return source_config_ref(config, source)

    def set_options(self, config_id: int, updates: dict[str, Any]) -> SourceConfigRef:
        """Merge `updates` into an attachment's options (a sync's own bookkeeping)."""
        with self._db.session() as session:
            config = session.get(DocSourceConfig, config_id)
            if config is None:
                raise NotFound(f"no source attachment {config_id}")
            config.options = {**config.options, **updates}
            session.add(config)
        return self.get(config_id)

    def get(self, config_id: int) -> SourceConfigRef:
        with self._db.session() as session:
            config = session.get(DocSourceConfig, config_id)
            source = session.get(DocSource, config.source_id) if config else None
            if config is None or source is None:
                raise NotFound(f"no source attachment {config_id}")
            return source_config_ref(config, source)

    def for_index(self, index_id: int) -> list[SourceConfigRef]:
        return self._listed(col(DocSourceConfig.index_id) == index_id)

    def all(self) -> list[SourceConfigRef]:
        return self._listed(None)

    def set_schedule(self, config_id: int, schedule: str) -> SourceConfigRef:
        with self._db.session() as session:
            config = session.get(DocSourceConfig, config_id)
            if config is None:
                raise NotFound(f"no source attachment {config_id}")
            config.schedule = schedule
            session.add(config)
        return self.get(config_id)

    def mark_refreshed(
        self, config_id: int, at: datetime | None = None, *, claim: JobClaim | None = None
    ) -> None:
        """Note the attachment's refresh (with `claim`: only while that job is held)."""
        with self._db.session() as session:
            hold(session, claim)
            config = session.get(DocSourceConfig, config_id)
            if config is not None:
                config.last_refresh_at = at or utcnow()
                session.add(config)

    def documents(self, config_id: int) -> list[DocumentRef]:
        """The ready documents this attachment brought in."""
        with self._db.session() as session:
            rows = session.exec(
                select(Document).where(
                    col(Document.source_config_id) == config_id, col(Document.status) == "ready"
                )
            ).all()
            return [document_ref(row) for row in rows]

    def detach(self, config_id: int) -> None:
        """Remove the attachment, and its source if that belongs to it alone (a site's, a
        learned channel's; a connection stays for its other attachments); the caller removes its documents first. Jobs keep their history
        but no longer point at it."""
        with self._db.session() as session:
            config = session.get(DocSourceConfig, config_id)
            if config is None:
                return
            for job in session.exec(select(IndexingJob).where(IndexingJob.source_config_id == config_id)):
                job.source_config_id = None
                session.add(job)
            for document in session.exec(select(Document).where(Document.source_config_id == config_id)):
                document.source_config_id = None
                session.add(document)
            source = session.get(DocSource, config.source_id)
            session.delete(config)
            session.flush()
            if source is not None and (source.kind == SITE or source.config.get(OWNED)):
                session.delete(source)

    def _listed(self, where: Any) -> list[SourceConfigRef]:
        with self._db.session() as session:
            query = select(DocSourceConfig, DocSource).where(DocSource.id == DocSourceConfig.source_id)
            if where is not None:
                query = query.where(where)
            rows = session.exec(query.order_by(col(DocSourceConfig.id))).all()
            return [source_config_ref(config, source) for config, source in rows]


def source_config_ref(config: DocSourceConfig, source: DocSource) -> SourceConfigRef:
    assert config.id is not None and source.id is not None
    return SourceConfigRef(
        id=config.id,
        index_id=config.index_id,
        source_id=source.id,
        kind=source.kind,
        name=source.name,
        start_urls=list(config.folders),
        options=dict(config.options),
        schedule=config.schedule,
        last_refresh_at=aware(config.last_refresh_at),
        created_at=aware(config.created_at),
        sync_cursor=aware(config.sync_cursor),
        last_full_sync_at=aware(config.last_full_sync_at),
        created_by=source.created_by,
    )
