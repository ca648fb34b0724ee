"""SQLModel tables: Lore's domain as rows. Only `storage/` imports this module.

The schema is created and changed only through Alembic migrations
(`storage/migrations/versions/`); a test checks that the migrations and these classes agree.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Column, DateTime, Index, LargeBinary, String, Text, UniqueConstraint, false, text
from sqlmodel import Field, SQLModel

from storage.values import ConversationKind, DocumentStatus, JobState, Scope, SourceKind, utcnow

__all__ = ["ConversationKind", "DocumentStatus", "JobState", "Scope", "SourceKind", "utcnow"]


OWNED_ONCE = text("scope IN ('channel', 'personal')")
"""A channel has one index of its own and a user one personal index, whatever its name."""
WITHOUT_UNITS = text("units IS NULL")
"""Chunks stored before revision 0022: an index of them only, empty once the repair read them,
so that every start's look for them reads nothing."""
ACTIVE_JOB = text("state IN ('queued', 'running', 'interrupted') AND source_config_id IS NOT NULL")
ACTIVE_FORGET = text("state IN ('queued', 'running')")
"""A job under way for an attached source: one at a time per source."""


class Deployment(SQLModel, table=True):
    """This database's identity (one row): its id names its vectors' collections on a Chroma
    server that other deployments may share (`storage.deployment`)."""

    id: str = Field(primary_key=True, max_length=32)
    legacy_collections_adopted: bool = Field(
        default=False, description="Collections named before deployments existed were renamed."
    )
    created_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))


class Tenant(SQLModel, table=True):
    """A Slack workspace (by team id); the shell and CLI use the `local` tenant."""

    id: str = Field(primary_key=True, max_length=64)
    name: str = Field(default="", max_length=255)
    enterprise_id: str | None = Field(
        default=None,
        max_length=64,
        index=True,
        description="Its Enterprise Grid organisation, if Lore is installed org-wide.",
    )
    created_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))


class User(SQLModel, table=True):
    __table_args__ = (UniqueConstraint("tenant_id", "external_id"),)

    id: int | None = Field(default=None, primary_key=True)
    tenant_id: str = Field(foreign_key="tenant.id", index=True, max_length=64)
    external_id: str = Field(max_length=64, description="Slack user id, or a shell user name.")
    name: str = Field(default="", max_length=255)
    is_admin: bool = False
    home_team: str | None = Field(
        default=None, max_length=64, description="A Slack Connect partner's own organisation."
    )
    is_guest: bool = Field(default=False, description="A Slack guest (single- or multi-channel).")
    email: str | None = Field(
        default=None,
        max_length=320,
        description="The email Slack says is theirs and confirmed (lower-cased): how connected "
        "sources know them.",
    )
    created_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))


class Channel(SQLModel, table=True):
    __table_args__ = (UniqueConstraint("tenant_id", "external_id"),)

    id: int | None = Field(default=None, primary_key=True)
    tenant_id: str = Field(foreign_key="tenant.id", index=True, max_length=64)
    external_id: str = Field(max_length=64, description="Slack channel id, or a shell name.")
    name: str = Field(default="", max_length=255)
    is_private: bool = True
    """Private until a lookup says otherwise: an unknown channel is treated as private."""
    is_shared_externally: bool = Field(
        default=False, description="Shared with another organisation (Slack Connect)."
    )
    created_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))


class KnowledgeIndex(SQLModel, table=True):
    """A searchable set of documents. `owner_key` makes names unique per scope owner:
    `user:<id>` for personal indexes, `channel:<id>` for channel ones, `tenant` for shared."""

    __tablename__ = "knowledge_index"
    __table_args__ = (
        UniqueConstraint("tenant_id", "owner_key", "name"),
        Index(
            "ux_knowledge_index_owner",
            "tenant_id",
            "owner_key",
            unique=True,
            sqlite_where=OWNED_ONCE,
            postgresql_where=OWNED_ONCE,
        ),
    )

    id: int | None = Field(default=None, primary_key=True)
    tenant_id: str = Field(foreign_key="tenant.id", index=True, max_length=64)
    name: str = Field(max_length=120)
    scope: Scope = Field(sa_type=String(16))
    owner_key: str = Field(max_length=80)
    owner_user_id: int | None = Field(default=None, foreign_key="user.id")
    channel_id: int | None = Field(default=None, foreign_key="channel.id")
    embedding_model: str = Field(max_length=120)
    embedding_dimension: int
    content_version: int = Field(default=0, description="Bumped on every content change.")
    documents_only: bool = Field(
        default=False, description="Answers drawing on it never use the model's general knowledge."
    )
    created_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))


class Conversation(SQLModel, table=True):
    """A place Lore is talked to: a channel, or one user's DM. Holds per-place settings."""

    __table_args__ = (UniqueConstraint("tenant_id", "key"),)

    id: int | None = Field(default=None, primary_key=True)
    tenant_id: str = Field(foreign_key="tenant.id", index=True, max_length=64)
    key: str = Field(max_length=80, description="`channel:<channel id>` or `dm:<user id>`.")
    kind: ConversationKind = Field(sa_type=String(16))
    channel_id: int | None = Field(default=None, foreign_key="channel.id")
    user_id: int | None = Field(default=None, foreign_key="user.id")
    response_mode: str | None = Field(default=None, max_length=32)
    rag_strategy: str | None = Field(default=None, max_length=32)
    settings_locked: bool = Field(default=False, description="Only admins change its settings.")
    require_mention: bool = Field(
        default=False, description="Lore answers only when mentioned, not follow-ups in its threads."
    )
    help_channel: bool = Field(
        default=False, description="Lore answers questions posted here without a mention, when confident."
    )
    help_confidence: float | None = Field(
        default=None, description="How confident Lore must be to answer unasked here (None: the default)."
    )
    experts: list[str] = Field(
        default_factory=list,
        sa_column=Column(JSON, nullable=False),
        description="Slack user ids (U…) and user group ids (S…) Lore asks when it cannot answer.",
    )
    created_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))


class EnabledIndex(SQLModel, table=True):
    """An index a conversation searches; the lowest position is the default target."""

    __tablename__ = "enabled_index"
    __table_args__ = (UniqueConstraint("conversation_id", "index_id"),)

    id: int | None = Field(default=None, primary_key=True)
    conversation_id: int = Field(foreign_key="conversation.id", index=True)
    index_id: int = Field(foreign_key="knowledge_index.id", index=True)
    position: int = 0


class DocSource(SQLModel, table=True):
    """A stored connection to somewhere documents come from (a site, Confluence …).

    A site's source belongs to its one attachment; a connector's (Confluence) is a connection
    of the tenant, attached to any number of indexes, with its credentials sealed by
    `storage.secrets` (`credentials_ref`) and only a masked hint of them kept in clear."""

    __tablename__ = "doc_source"

    id: int | None = Field(default=None, primary_key=True)
    tenant_id: str = Field(foreign_key="tenant.id", index=True, max_length=64)
    kind: str = Field(max_length=32)
    name: str = Field(max_length=255)
    base_url: str | None = Field(default=None, max_length=2048, description="A connector's API root.")
    credentials_ref: str | None = Field(
        default=None, sa_column=Column(Text, nullable=True), description="Encrypted, never shown."
    )
    credentials_hint: str | None = Field(
        default=None, max_length=255, description="Masked: who connected, the token's last characters."
    )
    config: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    created_by: int | None = Field(default=None, foreign_key="user.id")
    created_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))
    groups_synced_at: datetime | None = Field(
        default=None, sa_type=DateTime(timezone=True), description="The last group sync that succeeded."
    )
    groups_error: str | None = Field(
        default=None, sa_column=Column(Text, nullable=True), description="Why the last group sync failed."
    )
    groups_claimed_at: datetime | None = Field(
        default=None, sa_type=DateTime(timezone=True), description="A process is syncing its groups."
    )
    groups_failed_at: datetime | None = Field(
        default=None, sa_type=DateTime(timezone=True), description="The last group sync failed then."
    )


class DocSourceConfig(SQLModel, table=True):
    """A source attached to an index: which folders/URLs to pull, and how often."""

    __tablename__ = "doc_source_config"
    __table_args__ = (UniqueConstraint("index_id", "source_id"),)

    id: int | None = Field(default=None, primary_key=True)
    index_id: int = Field(foreign_key="knowledge_index.id", index=True)
    source_id: int = Field(foreign_key="doc_source.id", index=True)
    folders: list[str] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    options: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    schedule: str = Field(default="daily", max_length=64)
    last_refresh_at: datetime | None = Field(default=None, sa_type=DateTime(timezone=True))
    sync_cursor: datetime | None = Field(
        default=None,
        sa_type=DateTime(timezone=True),
        description="A connector's last successful sync began here; the next asks for changes since.",
    )
    last_full_sync_at: datetime | None = Field(
        default=None,
        sa_type=DateTime(timezone=True),
        description="A connector's last complete listing (the one that prunes).",
    )
    access_synced_at: datetime | None = Field(
        default=None, sa_type=DateTime(timezone=True), description="The last permission sync that succeeded."
    )
    access_error: str | None = Field(
        default=None,
        sa_column=Column(Text, nullable=True),
        description="Why the last permission sync failed.",
    )
    access_claimed_at: datetime | None = Field(
        default=None, sa_type=DateTime(timezone=True), description="A process is syncing its permissions."
    )
    access_failed_at: datetime | None = Field(
        default=None, sa_type=DateTime(timezone=True), description="The last permission sync failed then."
    )
    created_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))


class Document(SQLModel, table=True):
    """One ingested document and its standard metadata. `status` is `pending` while its
    chunks and vectors are being written and `deleting` while they are being removed; only
    `ready` documents are ever searched. The process writing or removing it holds a lease on
    it (`writer`, `lease_expires_at`, see `storage.leases`); once that expires, any process
    finishes the removal."""

    __table_args__ = (
        Index("ix_document_index_source", "index_id", "source_key"),
        Index("ix_document_index_hash", "index_id", "content_hash"),
        Index("ix_document_access_clauses", "index_id", "access_clauses"),
    )

    id: int | None = Field(default=None, primary_key=True)
    index_id: int = Field(foreign_key="knowledge_index.id", index=True)
    source_kind: SourceKind = Field(sa_type=String(16))
    source_key: str = Field(max_length=2048, description="URL, or file name within the index.")
    source_config_id: int | None = Field(default=None, foreign_key="doc_source_config.id")
    name: str = Field(max_length=512)
    url: str | None = Field(default=None, max_length=2048)
    external_id: str | None = Field(default=None, max_length=255)
    time_added: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))
    doc_timestamp: datetime | None = Field(default=None, sa_type=DateTime(timezone=True))
    author: str | None = Field(default=None, max_length=255)
    mime_type: str = Field(max_length=128)
    size: int = 0
    characters: int = 0
    content_hash: str = Field(max_length=64)
    chunk_count: int = 0
    status: DocumentStatus = Field(default=DocumentStatus.PENDING, sa_type=String(16), index=True)
    meta: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    added_by: int | None = Field(default=None, foreign_key="user.id")
    writer: str | None = Field(
        default=None, max_length=128, description="The process writing or removing it (`storage.leases`)."
    )
    lease_expires_at: datetime | None = Field(
        default=None, sa_type=DateTime(timezone=True), description="Its writer vouches for it until then."
    )
    access_clauses: int = Field(
        default=0,
        description="0: public (whoever may read the index); n > 0: restricted, a reader needs a "
        "principal of each of n clauses (`DocumentAccessEntry` rows); -1: unknown, nobody.",
    )


class DocumentAccessEntry(SQLModel, table=True):
    """A principal of one clause of a restricted document's access (`storage.document_access`)."""

    __tablename__ = "document_access"
    __table_args__ = (Index("ix_document_access_principal", "principal", "document_id"),)

    document_id: int = Field(foreign_key="document.id", primary_key=True)
    clause: int = Field(primary_key=True)
    principal: str = Field(primary_key=True, max_length=320)


class SourceAccount(SQLModel, table=True):
    """A person of a connected source, as its group sync found them: how a Slack user's
    confirmed email becomes the source's own account."""

    __tablename__ = "source_account"
    __table_args__ = (Index("ix_source_account_email", "source_id", "email"),)

    source_id: int = Field(foreign_key="doc_source.id", primary_key=True)
    account_id: str = Field(primary_key=True, max_length=255)
    email: str | None = Field(default=None, max_length=320)
    name: str = Field(default="", max_length=255)


class SourceGroupMember(SQLModel, table=True):
    """A member of a group of a connected source, as its last group sync found it."""

    __tablename__ = "source_group_member"

    source_id: int = Field(foreign_key="doc_source.id", primary_key=True)
    group_name: str = Field(primary_key=True, max_length=255)
    account_id: str = Field(primary_key=True, max_length=255)


class SlackGroup(SQLModel, table=True):
    """A Slack channel (`channel:C…`) or user group (`usergroup:S…`) a connector attachment
    is restricted to: when Lore last read its members, and why that last failed."""

    __tablename__ = "slack_group"

    tenant_id: str = Field(foreign_key="tenant.id", primary_key=True, max_length=64)
    group_key: str = Field(primary_key=True, max_length=80)
    read_at: datetime | None = Field(default=None, sa_type=DateTime(timezone=True))
    error: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    failed_at: datetime | None = Field(default=None, sa_type=DateTime(timezone=True))
    claimed_by: str | None = Field(default=None, max_length=128)
    """The process reading its members on schedule now (`SlackGroupRepository.claim_due`)."""
    claimed_until: datetime | None = Field(default=None, sa_type=DateTime(timezone=True))
    """After this, another process may take the read over (its reader stopped)."""


class SlackGroupMember(SQLModel, table=True):
    """A member of a Slack channel or user group, as Lore last read it (by Slack user id)."""

    __tablename__ = "slack_group_member"
    __table_args__ = (Index("ix_slack_group_member_user", "tenant_id", "user_external_id"),)

    tenant_id: str = Field(foreign_key="tenant.id", primary_key=True, max_length=64)
    group_key: str = Field(primary_key=True, max_length=80)
    user_external_id: str = Field(primary_key=True, max_length=64)


class AccessGrant(SQLModel, table=True):
    """A source principal an admin granted a Lore user (a service key's user, say) beyond
    what their own identity in the source gives them."""

    __tablename__ = "access_grant"

    user_id: int = Field(foreign_key="user.id", primary_key=True)
    principal: str = Field(primary_key=True, max_length=320)
    granted_by: int | None = Field(default=None, foreign_key="user.id")
    created_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))


class Chunk(SQLModel, table=True):
    """A passage of a document: the unit that is embedded, keyword-indexed and cited.
    Its id is also its vector's id in the vector store."""

    __table_args__ = (
        Index("ix_chunk_document_position", "document_id", "position"),
        Index(
            "ix_chunk_without_units",
            "document_id",
            sqlite_where=WITHOUT_UNITS,
            postgresql_where=WITHOUT_UNITS,
        ),
    )

    id: int | None = Field(default=None, primary_key=True)
    document_id: int = Field(foreign_key="document.id")
    index_id: int = Field(foreign_key="knowledge_index.id", index=True)
    position: int
    heading: str = Field(default="", sa_column=Column(Text, nullable=False))
    text: str = Field(sa_column=Column(Text, nullable=False))
    start: int | None = None
    """Where the chunk's text starts in its document's text (chunks overlap: this says by how much)."""
    units: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    """Its quotable units as the engine read them at ingest (JSON, `knowledge.indexing.units`);
    None for a chunk written before revision 0022, until the repair at start reads them."""


class IndexingJob(SQLModel, table=True):
    """A crawl or refresh of one attached source. Taken by one worker at a time; a job whose
    worker stopped beating is interrupted and resumed (its pages table says what is done).
    Each taking draws a new `claim` token, and every write of the run checks it in its own
    transaction, so a worker that comes back after its job was taken over writes nothing.
    At most one job per source is under way (a partial unique index)."""

    __tablename__ = "indexing_job"
    __table_args__ = (
        Index(
            "ux_indexing_job_active_source",
            "source_config_id",
            unique=True,
            sqlite_where=ACTIVE_JOB,
            postgresql_where=ACTIVE_JOB,
        ),
    )

    id: int | None = Field(default=None, primary_key=True)
    index_id: int = Field(foreign_key="knowledge_index.id", index=True)
    source_config_id: int | None = Field(default=None, foreign_key="doc_source_config.id")
    conversation_id: int | None = Field(default=None, foreign_key="conversation.id", index=True)
    trigger: str = Field(default="manual", max_length=16, description="manual, schedule or refresh.")
    cancel_requested: bool = False
    state: JobState = Field(default=JobState.QUEUED, sa_type=String(16), index=True)
    counters: dict[str, int] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    created_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))
    started_at: datetime | None = Field(default=None, sa_type=DateTime(timezone=True))
    finished_at: datetime | None = Field(default=None, sa_type=DateTime(timezone=True))
    heartbeat_at: datetime | None = Field(default=None, sa_type=DateTime(timezone=True))
    worker: str | None = Field(default=None, max_length=128)
    claim: str | None = Field(
        default=None,
        max_length=32,
        description="Token of the worker's current claim: its writes to the job check it.",
    )
    error: str | None = Field(default=None, sa_column=Column(Text, nullable=True))


class IndexingJobLog(SQLModel, table=True):
    __tablename__ = "indexing_job_log"

    id: int | None = Field(default=None, primary_key=True)
    job_id: int = Field(foreign_key="indexing_job.id", index=True)
    at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))
    level: str = Field(default="info", max_length=16)
    message: str = Field(sa_column=Column(Text, nullable=False))


class IndexingJobPage(SQLModel, table=True):
    """A page a job has handled, with the links found on it, so a resumed job neither
    fetches it again nor loses the pages it leads to."""

    __tablename__ = "indexing_job_page"
    __table_args__ = (UniqueConstraint("job_id", "url"),)

    id: int | None = Field(default=None, primary_key=True)
    job_id: int = Field(foreign_key="indexing_job.id", index=True)
    url: str = Field(max_length=2048)
    outcome: str = Field(max_length=16)
    links: list[str] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))


class ProcessedEvent(SQLModel, table=True):
    """A Slack delivery already handled (by event id, or by channel and message ts), kept
    for a while so retries and double deliveries are answered once, across restarts."""

    __tablename__ = "processed_event"

    key: str = Field(primary_key=True, max_length=255)
    seen_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True), index=True)


class AnswerLog(SQLModel, table=True):
    """An answer Lore gave: the question, the answer's text, what it cited. The indexes it
    searched are `AnswerIndex` rows; what people thought of it, `AnswerFeedback` rows."""

    __tablename__ = "answer_log"
    __table_args__ = (
        # covers the console's usage figures: each is counted from the index alone
        Index(
            "ix_answer_log_usage",
            "tenant_id",
            "created_at",
            "abstained",
            "verified",
            "user_id",
            "conversation_id",
            "latency_ms",
            "escalated_at",
        ),
    )

    id: int | None = Field(default=None, primary_key=True)
    tenant_id: str = Field(foreign_key="tenant.id", index=True, max_length=64)
    conversation_id: int | None = Field(default=None, foreign_key="conversation.id")
    user_id: int | None = Field(default=None, foreign_key="user.id")
    question: str = Field(sa_column=Column(Text, nullable=False))
    text: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    """The answer as shown (None for answers recorded before it was kept)."""
    mode: str = Field(max_length=32)
    fallback: str | None = Field(default=None, max_length=32)
    abstained: bool = False
    cited: list[dict[str, Any]] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    restricted: list[int] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    """Documents restricted in their source that the answer drew on: it is never shared in a
    channel, and a review shows it only to people who may read them all."""
    given_in: str | None = Field(default=None, max_length=32)
    """Where it was given, as `storage.access.Given` names it (None for answers recorded
    before it was kept: their conversation says)."""
    latency_ms: int | None = Field(default=None, description="From the question's arrival to the answer.")
    verified: bool = Field(default=False, sa_column_kwargs={"server_default": false()})
    """It quoted a verified answer (a document written from a coverage gap, `meta.verified`)."""
    created_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))
    brief: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    """The answer at a glance, as chat showed it first (None before it was kept)."""
    thread: str | None = Field(default=None, max_length=64)
    """The Slack thread it was given in (its parent's ts), where there is one."""
    escalated_at: datetime | None = Field(default=None, sa_type=DateTime(timezone=True))
    """When someone asked the conversation's experts about it ("Ask an expert")."""


class AnswerIndex(SQLModel, table=True):
    """An index an answer searched (`cited`: and quoted), so the people who look after an
    index can find the answers it gave or could not give."""

    __tablename__ = "answer_index"

    answer_id: int = Field(foreign_key="answer_log.id", primary_key=True)
    index_id: int = Field(foreign_key="knowledge_index.id", primary_key=True, index=True)
    cited: bool = False


class AnswerCitation(SQLModel, table=True):
    """A document an answer quoted, so the documents cited most (and never) are counted in SQL."""

    __tablename__ = "answer_citation"

    answer_id: int = Field(foreign_key="answer_log.id", primary_key=True)
    document_id: int = Field(primary_key=True, index=True)
    """No foreign key: the document may be removed while the answer is kept."""
    index_id: int = Field(index=True)


class QuestionVector(SQLModel, table=True):
    """A question's embedding, kept for the coverage-gap job so each question is embedded once."""

    __tablename__ = "question_vector"

    answer_id: int = Field(foreign_key="answer_log.id", primary_key=True)
    model: str = Field(max_length=120)
    vector: bytes = Field(sa_column=Column(LargeBinary, nullable=False))
    """float32, little-endian."""


class AnswerFeedback(SQLModel, table=True):
    """One person's verdict on one answer (pressing again changes it): helpful or not, and
    for an unhelpful one what was wrong and a comment."""

    __tablename__ = "answer_feedback"
    __table_args__ = (UniqueConstraint("answer_id", "user_id"),)

    id: int | None = Field(default=None, primary_key=True)
    answer_id: int = Field(foreign_key="answer_log.id", index=True)
    tenant_id: str = Field(foreign_key="tenant.id", max_length=64)
    user_id: int = Field(foreign_key="user.id")
    helpful: bool
    reason: str | None = Field(default=None, max_length=32)
    """wrong, outdated, missing source or other (`storage.values.FeedbackReason`)."""
    comment: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    created_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))
    updated_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))


class ApiKey(SQLModel, table=True):
    """A key for the HTTP API. Only the sha256 of its secret is kept (the secret is shown
    once, at creation), with a short prefix to recognise it by. A key acts for `user_id`
    when it was created for a user, else as a service user of its own."""

    __tablename__ = "api_key"

    id: int | None = Field(default=None, primary_key=True)
    tenant_id: str = Field(foreign_key="tenant.id", index=True, max_length=64)
    name: str = Field(max_length=80)
    key_hash: str = Field(max_length=64, unique=True, index=True)
    prefix: str = Field(max_length=16)
    user_id: int | None = Field(default=None, foreign_key="user.id")
    created_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))
    revoked_at: datetime | None = Field(default=None, sa_type=DateTime(timezone=True))
    last_used_at: datetime | None = Field(default=None, sa_type=DateTime(timezone=True))
    reads_audit: bool = Field(
        default=False,
        sa_column_kwargs={"server_default": false()},
        description="May read its workspace's audit log (`GET /v1/audit`), for a SIEM.",
    )


class VerifiedAnswer(SQLModel, table=True):
    """A question and the answer a person marked as right, kept in an index (a channel's
    own): answered first when a question asked later means the same (`question_vector`).
    Saving the same message (or Lore's same answer) again updates it (`source_key`)."""

    __tablename__ = "verified_answer"
    __table_args__ = (UniqueConstraint("index_id", "source_key"),)

    id: int | None = Field(default=None, primary_key=True)
    tenant_id: str = Field(foreign_key="tenant.id", max_length=64)
    index_id: int = Field(foreign_key="knowledge_index.id", index=True)
    source_key: str = Field(
        max_length=255, description="What it was saved from: a message, or Lore's answer."
    )
    question: str = Field(sa_column=Column(Text, nullable=False))
    answer: str = Field(sa_column=Column(Text, nullable=False))
    question_vector: list[float] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    embedding_model: str = Field(max_length=120)
    answered_by: str = Field(default="", max_length=255, description="Who wrote the answer (a name).")
    answered_by_user: int | None = Field(default=None, foreign_key="user.id")
    """Who wrote the answer, as a Lore user (None: unknown, or forgotten): forgetting them
    blanks `answered_by`."""
    verified_by: int = Field(foreign_key="user.id")
    verified_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))
    link: str | None = Field(default=None, max_length=2048, description="The thread it was given in.")
    cited: list[dict[str, Any]] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    """The documents it rests on: id, content hash when verified, name, url."""
    answer_id: int | None = Field(default=None, foreign_key="answer_log.id")
    asked_by: int | None = Field(default=None, foreign_key="user.id")
    """Who asked the question in these words (None once an expert wrote it anew): when they
    are forgotten, their wording goes and the answer awaits a question from the experts."""
    review_at: datetime | None = Field(default=None, sa_type=DateTime(timezone=True))
    """After this it awaits review (flagged `expired`)."""
    flagged: str | None = Field(default=None, max_length=32)
    """Why it awaits review (expired, document changed, marked); not answered while flagged."""
    updated_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))


class TenantRemoval(SQLModel, table=True):
    """A workspace Lore was removed from (uninstalled, or its bot token revoked). Its data is
    purged once `purge_after` has passed, unless Lore is installed there again first
    (`cancelled_at`). The row outlives the purge as the record of what was removed
    (`removed`: rows per table, vector collections), so it names the tenant without a key."""

    __tablename__ = "tenant_removal"

    id: int | None = Field(default=None, primary_key=True)
    tenant_id: str = Field(max_length=64, index=True)
    enterprise_id: str | None = Field(default=None, max_length=64)
    reason: str = Field(max_length=32)
    requested_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))
    purge_after: datetime = Field(sa_type=DateTime(timezone=True), index=True)
    cancelled_at: datetime | None = Field(default=None, sa_type=DateTime(timezone=True))
    claimed_by: str | None = Field(default=None, max_length=128)
    claimed_at: datetime | None = Field(default=None, sa_type=DateTime(timezone=True))
    purged_at: datetime | None = Field(default=None, sa_type=DateTime(timezone=True))
    removed: dict[str, int] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))


class ForgetJob(SQLModel, table=True):
    """Forgetting one person (`lore forget-user`, the console's button): queued, taken by
    one worker at a time (a worker whose `heartbeat_at` went stale is taken over), done in
    steps that each may run again (`steps` lists those done), `removed` adding up what each
    removed. At most one is under way per person (a partial unique index), so asking twice
    queues it once. The row outlives the person's data as the record of what went."""

    __tablename__ = "forget_job"
    __table_args__ = (
        Index(
            "ux_forget_job_active",
            "tenant_id",
            "user_id",
            unique=True,
            sqlite_where=ACTIVE_FORGET,
            postgresql_where=ACTIVE_FORGET,
        ),
    )

    id: int | None = Field(default=None, primary_key=True)
    tenant_id: str = Field(foreign_key="tenant.id", index=True, max_length=64)
    user_id: int = Field(foreign_key="user.id")
    person: str = Field(max_length=255, description="The person's Slack user id (or shell name).")
    requested_by: int | None = Field(default=None, foreign_key="user.id")
    surface: str = Field(max_length=16, description="Where it was asked for (the audit entry's surface).")
    origin: str = Field(default="", max_length=255)
    actor: str | None = Field(default=None, max_length=80)
    state: JobState = Field(default=JobState.QUEUED, sa_type=String(16), index=True)
    steps: list[str] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    removed: dict[str, int] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    created_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))
    started_at: datetime | None = Field(default=None, sa_type=DateTime(timezone=True))
    heartbeat_at: datetime | None = Field(default=None, sa_type=DateTime(timezone=True))
    finished_at: datetime | None = Field(default=None, sa_type=DateTime(timezone=True))
    worker: str | None = Field(default=None, max_length=128)
    claim: str | None = Field(default=None, max_length=32)
    error: str | None = Field(default=None, sa_column=Column(Text, nullable=True))


class UsageDay(SQLModel, table=True):
    """A workspace's usage figures of one whole past day (UTC), as the console's overview
    sums them (`storage.repositories.usage`): computed the first time a window needs that
    day, then read instead of its questions. What changes a past day's figures drops its
    row (a verdict or an escalation on one of its answers; retention, forgetting a person,
    deleting an index), to be computed again."""

    __tablename__ = "usage_day"

    tenant_id: str = Field(foreign_key="tenant.id", primary_key=True, max_length=64)
    day: str = Field(primary_key=True, max_length=10, description="YYYY-MM-DD, UTC.")
    figures: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    computed_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))


class AuditEntry(SQLModel, table=True):
    """One administrative action, on any surface: who, when, where from, what, on what.
    Rows are only ever added (`storage.repositories.audit` has no update); a workspace's
    purge after an uninstall removes them with the rest of its data, but its record."""

    __tablename__ = "audit_log"
    __table_args__ = (Index("ix_audit_log_tenant_at", "tenant_id", "at"),)

    id: int | None = Field(default=None, primary_key=True)
    tenant_id: str = Field(max_length=64)
    """No foreign key: the record of a workspace's purge outlives the workspace."""
    at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))
    actor: str = Field(max_length=80, description="A Slack user id, `cli:<user>`, `api-key:<id>` or `lore`.")
    actor_name: str = Field(default="", max_length=255)
    surface: str = Field(max_length=16, description="slack, shell, cli, api, console or lore.")
    origin: str = Field(default="", max_length=255, description="Where from: a channel, an address, a key.")
    action: str = Field(max_length=48, index=True)
    target: str = Field(default="", max_length=512)
    details: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))


class ConsoleGrant(SQLModel, table=True):
    """A one-time sign-in link for the console (`lore admin link`): only its hash is kept."""

    __tablename__ = "console_grant"

    token_hash: str = Field(primary_key=True, max_length=64)
    tenant_id: str = Field(max_length=64)
    user_external_id: str = Field(max_length=64)
    created_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))
    expires_at: datetime = Field(sa_type=DateTime(timezone=True))
    used_at: datetime | None = Field(default=None, sa_type=DateTime(timezone=True))


class ConsoleSession(SQLModel, table=True):
    """A signed-in console session: the cookie carries its secret, the row only its hash."""

    __tablename__ = "console_session"

    id_hash: str = Field(primary_key=True, max_length=64)
    tenant_id: str = Field(foreign_key="tenant.id", index=True, max_length=64)
    user_id: int = Field(foreign_key="user.id", index=True)
    csrf: str = Field(max_length=64)
    via: str = Field(max_length=16, description="slack (Sign in with Slack) or link (`lore admin link`).")
    created_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))
    expires_at: datetime = Field(sa_type=DateTime(timezone=True))
    ended_at: datetime | None = Field(default=None, sa_type=DateTime(timezone=True))


class CoverageGap(SQLModel, table=True):
    """A group of similar questions Lore could not answer or that people found unhelpful,
    as the last coverage-gap job found them (biggest first by `rank`)."""

    __tablename__ = "coverage_gap"

    id: int | None = Field(default=None, primary_key=True)
    tenant_id: str = Field(foreign_key="tenant.id", index=True, max_length=64)
    rank: int
    answer_ids: list[int] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    computed_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))


class WorkspaceSetting(SQLModel, table=True):
    """A setting of one workspace that its admins change at run time (in the console), or a
    fact a job keeps about it (when coverage gaps were last computed)."""

    __tablename__ = "workspace_setting"

    tenant_id: str = Field(foreign_key="tenant.id", primary_key=True, max_length=64)
    name: str = Field(primary_key=True, max_length=64)
    value: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    updated_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))
