"""Row-to-record conversion shared by the repositories."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, overload

from sqlalchemy import literal_column
from sqlmodel import Session, SQLModel, col

from storage.models import (
    Channel,
    Conversation,
    Document,
    ForgetJob,
    IndexingJob,
    JobState,
    KnowledgeIndex,
    User,
)
from storage.records import ChannelRef, ConversationRef, DocumentRef, IndexRef, JobClaim, UserRef
from storage.values import ResponseMode, Strategy, choice


@overload
def aware(value: datetime) -> datetime: ...
@overload
def aware(value: None) -> None: ...
def aware(value: datetime | None) -> datetime | None:
    """SQLite drops the zone of stored timestamps; every timestamp Lore stores is UTC."""
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=UTC)


def _id(value: int | None) -> int:
    assert value is not None, "row read from the database has no id"
    return value


def user_ref(row: User) -> UserRef:
    return UserRef(
        _id(row.id),
        row.tenant_id,
        row.external_id,
        row.name,
        row.is_admin,
        row.home_team,
        row.is_guest,
        row.email,
    )


def channel_ref(row: Channel) -> ChannelRef:
    return ChannelRef(
        _id(row.id), row.tenant_id, row.external_id, row.name, row.is_private, row.is_shared_externally
    )


def conversation_ref(row: Conversation) -> ConversationRef:
    return ConversationRef(
        id=_id(row.id),
        tenant_id=row.tenant_id,
        key=row.key,
        kind=row.kind,
        channel_id=row.channel_id,
        user_id=row.user_id,
        response_mode=choice(ResponseMode, row.response_mode),
        rag_strategy=choice(Strategy, row.rag_strategy),
        settings_locked=row.settings_locked,
        require_mention=row.require_mention,
        help_channel=row.help_channel,
        help_confidence=row.help_confidence,
        experts=tuple(row.experts or ()),
    )


def index_ref(row: KnowledgeIndex, channel_is_private: bool) -> IndexRef:
    return IndexRef(
        id=_id(row.id),
        tenant_id=row.tenant_id,
        name=row.name,
        scope=row.scope,
        owner_user_id=row.owner_user_id,
        channel_id=row.channel_id,
        channel_is_private=channel_is_private,
        embedding_model=row.embedding_model,
        embedding_dimension=row.embedding_dimension,
        content_version=row.content_version,
        created_at=aware(row.created_at),
        documents_only=row.documents_only,
    )


def document_ref(row: Document) -> DocumentRef:
    return DocumentRef(
        id=_id(row.id),
        index_id=row.index_id,
        source_kind=row.source_kind,
        source_key=row.source_key,
        name=row.name,
        url=row.url,
        external_id=row.external_id,
        time_added=aware(row.time_added),
        doc_timestamp=aware(row.doc_timestamp),
        author=row.author,
        mime_type=row.mime_type,
        size=row.size,
        characters=row.characters,
        content_hash=row.content_hash,
        chunk_count=row.chunk_count,
        status=row.status,
        meta=dict(row.meta),
        source_config_id=row.source_config_id,
        added_by=row.added_by,
        access_clauses=row.access_clauses,
    )


def insert_ignoring_conflict(session: Session, model: type[SQLModel], values: dict[str, Any]) -> bool:
    """`INSERT … ON CONFLICT DO NOTHING` of one row (SQLite and PostgreSQL): a row another
    process inserted first under the same unique key wins, with no error and no read before.
    True if this insert wrote the row. `values` names every column without a SQL default
    (SQLModel's Python-side defaults do not apply here)."""
    if session.get_bind().dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as postgresql_insert

        statement: Any = postgresql_insert(model.__table__).values(**values).on_conflict_do_nothing()  # type: ignore[attr-defined]
    else:
        from sqlalchemy.dialects.sqlite import insert as sqlite_insert

        statement = sqlite_insert(model.__table__).values(**values).on_conflict_do_nothing()  # type: ignore[attr-defined]
    # RETURNING says whether a row was written (the driver's rowcount does not, here).
    return session.exec(statement.returning(literal_column("1"))).first() is not None


def held(table: type[IndexingJob] | type[ForgetJob], statement: Any, claim: JobClaim) -> Any:
    """`statement` narrowed to the claimed job's row while the claim still holds it (the
    same token, still running): a write through it does nothing once the job was taken over."""
    return statement.where(
        col(table.id) == claim.job_id,
        col(table.claim) == claim.token,
        col(table.state) == JobState.RUNNING,
    )
