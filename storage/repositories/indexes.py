"""Knowledge indexes and which of them each conversation has enabled.

A channel's own index and a user's personal index are created on first need, possibly by
two processes at once (two replicas receiving a new channel's first messages): both insert
and the database keeps one (a unique index per owner, `INSERT … ON CONFLICT DO NOTHING`),
then both read the one kept, so neither sees an error and there is one index, whatever
name each process knew the channel by.
"""

from __future__ import annotations

from sqlalchemy import and_, func, update
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, delete, select

from storage.db import Database
from storage.document_access import PUBLIC_ONLY, AccessFilter, readable_sql
from storage.models import (
    AnswerIndex,
    Channel,
    Chunk,
    DocSourceConfig,
    Document,
    DocumentAccessEntry,
    DocumentStatus,
    EnabledIndex,
    IndexingJob,
    IndexingJobLog,
    KnowledgeIndex,
    Scope,
    VerifiedAnswer,
)
from storage.records import ChannelRef, IndexRef, IndexStats, NameTaken, NotFound, UserRef
from storage.repositories._rows import aware, index_ref, insert_ignoring_conflict
from storage.repositories.answers import forget_quotes
from storage.repositories.usage import stale_days
from storage.values import utcnow

PERSONAL_INDEX_NAME = "personal"


def owner_key(scope: Scope, owner_user_id: int | None, channel_id: int | None) -> str:
    """The key that makes index names unique per scope owner."""
    if scope == Scope.PERSONAL:
        return f"user:{owner_user_id}"
    if scope == Scope.CHANNEL:
        return f"channel:{channel_id}"
    return "tenant"


class IndexRepository:
    def __init__(self, db: Database) -> None:
        self._db = db

    def create(
        self,
        tenant_id: str,
        name: str,
        scope: Scope,
        *,
        embedding_model: str,
        embedding_dimension: int,
        owner_user_id: int | None = None,
        channel_id: int | None = None,
    ) -> IndexRef:
        """A new index; raises `NameTaken` if its owner already has one of that name."""
        row = KnowledgeIndex(
            tenant_id=tenant_id,
            name=name,
            scope=scope,
            owner_key=owner_key(scope, owner_user_id, channel_id),
            owner_user_id=owner_user_id,
            channel_id=channel_id,
            embedding_model=embedding_model,
            embedding_dimension=embedding_dimension,
        )
        try:
            with self._db.session() as session:
                session.add(row)
                session.flush()
                return _ref(session, row)
        except IntegrityError as exc:
            raise NameTaken(f"an index named {name!r} already exists") from exc

    def get(self, index_id: int) -> IndexRef:
        with self._db.session() as session:
            row = session.get(KnowledgeIndex, index_id)
            if row is None:
                raise NotFound(f"index {index_id}")
            return _ref(session, row)

    def list_for_tenant(self, tenant_id: str) -> list[IndexRef]:
        with self._db.session() as session:
            rows = session.exec(
                select(KnowledgeIndex, Channel.is_private)
                .join(Channel, col(KnowledgeIndex.channel_id) == Channel.id, isouter=True)
                .where(KnowledgeIndex.tenant_id == tenant_id)
                .order_by(col(KnowledgeIndex.id))
            ).all()
            return [index_ref(row, bool(private)) for row, private in rows]

    def list_all(self) -> list[IndexRef]:
        """Every index of every tenant (for start-up repair and scheduling)."""
        with self._db.session() as session:
            rows = session.exec(
                select(KnowledgeIndex, Channel.is_private)
                .join(Channel, col(KnowledgeIndex.channel_id) == Channel.id, isouter=True)
                .order_by(col(KnowledgeIndex.id))
            ).all()
            return [index_ref(row, bool(private)) for row, private in rows]

    def ensure_personal(self, user: UserRef, *, model: str, dimension: int) -> IndexRef:
        """The user's personal index, created the first time it is needed."""
        return self._ensure(
            user.tenant_id,
            PERSONAL_INDEX_NAME,
            Scope.PERSONAL,
            model,
            dimension,
            owner_user_id=user.id,
        )

    def ensure_channel(self, channel: ChannelRef, *, model: str, dimension: int) -> IndexRef:
        """The channel's own index (named after the channel), created on first need."""
        name = channel.name or channel.external_id
        return self._ensure(channel.tenant_id, name, Scope.CHANNEL, model, dimension, channel_id=channel.id)

    def enabled(self, conversation_id: int) -> list[IndexRef]:
        """The conversation's enabled indexes, default first."""
        with self._db.session() as session:
            rows = session.exec(
                select(KnowledgeIndex, Channel.is_private)
                .join(EnabledIndex, col(EnabledIndex.index_id) == KnowledgeIndex.id)
                .join(Channel, col(KnowledgeIndex.channel_id) == Channel.id, isouter=True)
                .where(EnabledIndex.conversation_id == conversation_id)
                .order_by(col(EnabledIndex.position), col(EnabledIndex.id))
            ).all()
            return [index_ref(row, bool(private)) for row, private in rows]

    def enable(self, conversation_id: int, index_id: int, *, as_default: bool = False) -> bool:
        """Enable the index for the conversation (last, or first if `as_default`).
        Returns False when it was already enabled (its position is then only changed
        if `as_default`). Enabling it from two processes at once enables it once."""
        with self._db.session() as session:
            positions = [
                row.position
                for row in session.exec(
                    select(EnabledIndex).where(EnabledIndex.conversation_id == conversation_id)
                )
            ]
            position = min(positions, default=1) - 1 if as_default else max(positions, default=-1) + 1
            values = {"conversation_id": conversation_id, "index_id": index_id, "position": position}
            if insert_ignoring_conflict(session, EnabledIndex, values):
                return True
            existing = _enabled_row(session, conversation_id, index_id)
            if as_default and existing is not None:
                existing.position = position
                session.add(existing)
            return False

    def disable(self, conversation_id: int, index_id: int) -> bool:
        with self._db.session() as session:
            row = _enabled_row(session, conversation_id, index_id)
            if row is None:
                return False
            session.delete(row)
            return True

    def delete(self, index_id: int) -> None:
        """Remove the index and every row that belongs to it. The caller drops its vectors."""
        with self._db.session() as session:
            forget_quotes(session, index_id=index_id)
            jobs = select(IndexingJob.id).where(IndexingJob.index_id == index_id)
            session.exec(delete(IndexingJobLog).where(col(IndexingJobLog.job_id).in_(jobs)))
            session.exec(delete(IndexingJob).where(col(IndexingJob.index_id) == index_id))
            session.exec(delete(Chunk).where(col(Chunk.index_id) == index_id))
            documents = select(Document.id).where(Document.index_id == index_id)
            session.exec(
                delete(DocumentAccessEntry).where(col(DocumentAccessEntry.document_id).in_(documents))
            )
            session.exec(delete(Document).where(col(Document.index_id) == index_id))
            session.exec(delete(DocSourceConfig).where(col(DocSourceConfig.index_id) == index_id))
            session.exec(delete(EnabledIndex).where(col(EnabledIndex.index_id) == index_id))
            session.exec(delete(AnswerIndex).where(col(AnswerIndex.index_id) == index_id))
            index = session.get(KnowledgeIndex, index_id)
            if index is not None:  # the overview's kept figures counted its questions
                session.exec(stale_days(index.tenant_id))
            session.exec(delete(VerifiedAnswer).where(col(VerifiedAnswer.index_id) == index_id))
            session.exec(delete(KnowledgeIndex).where(col(KnowledgeIndex.id) == index_id))

    def set_documents_only(self, index_id: int, documents_only: bool) -> IndexRef:
        """Lock (or unlock) an index to answers from its documents alone."""
        with self._db.session() as session:
            row = session.get(KnowledgeIndex, index_id)
            if row is None:
                raise NotFound(f"index {index_id}")
            row.documents_only = documents_only
            session.add(row)
            session.flush()
            return _ref(session, row)

    def bump_version(self, index_id: int) -> None:
        """Mark the index's content as changed (invalidates cached answers)."""
        with self._db.session() as session:
            bump_content_version(session, index_id)

    def stats(self, index_id: int, access: AccessFilter | None = PUBLIC_ONLY) -> IndexStats:
        """How many documents and passages of the index `access` may read (all of them with
        None), and the latest of them."""
        with self._db.session() as session:
            ready = and_(col(Document.index_id) == index_id, col(Document.status) == DocumentStatus.READY)
            if access is not None:
                ready = and_(ready, readable_sql(access))
            documents, chunks = session.exec(
                select(func.count(col(Document.id)), func.coalesce(func.sum(Document.chunk_count), 0)).where(
                    ready
                )
            ).one()
            latest = session.exec(
                select(Document).where(ready).order_by(col(Document.time_added).desc()).limit(1)
            ).first()
            return IndexStats(
                documents=int(documents),
                chunks=int(chunks),
                latest_document_at=aware(latest.time_added) if latest else None,
                latest_document_name=latest.name if latest else None,
            )

    def _ensure(
        self,
        tenant_id: str,
        name: str,
        scope: Scope,
        model: str,
        dimension: int,
        *,
        owner_user_id: int | None = None,
        channel_id: int | None = None,
    ) -> IndexRef:
        """The owner's one index of `scope`: found, or inserted (the insert of a process that
        loses the race to another does nothing, and it reads the other's)."""
        key = owner_key(scope, owner_user_id, channel_id)
        with self._db.session() as session:
            query = select(KnowledgeIndex).where(
                KnowledgeIndex.tenant_id == tenant_id,
                KnowledgeIndex.owner_key == key,
                KnowledgeIndex.scope == scope,
            )
            row = session.exec(query).first()
            if row is None:
                values = {
                    "tenant_id": tenant_id,
                    "name": name,
                    "scope": scope,
                    "owner_key": key,
                    "owner_user_id": owner_user_id,
                    "channel_id": channel_id,
                    "embedding_model": model,
                    "embedding_dimension": dimension,
                    "content_version": 0,
                    "documents_only": False,
                    "created_at": utcnow(),
                }
                insert_ignoring_conflict(session, KnowledgeIndex, values)
                row = session.exec(query).one()
            return _ref(session, row)


def bump_content_version(session: Session, index_id: int) -> None:
    session.exec(
        update(KnowledgeIndex)
        .where(col(KnowledgeIndex.id) == index_id)
        .values(content_version=KnowledgeIndex.content_version + 1)
    )


def _ref(session: Session, row: KnowledgeIndex) -> IndexRef:
    private = False
    if row.channel_id is not None:
        channel = session.get(Channel, row.channel_id)
        private = bool(channel and channel.is_private)
    return index_ref(row, private)


def _enabled_row(session: Session, conversation_id: int, index_id: int) -> EnabledIndex | None:
    return session.exec(
        select(EnabledIndex).where(
            EnabledIndex.conversation_id == conversation_id, EnabledIndex.index_id == index_id
        )
    ).first()
