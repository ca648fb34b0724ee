"""Frozen values that repositories hand out. SQLModel rows never leave `storage/`."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from storage.access import AnswerFacts, Given, IndexFacts
from storage.document_access import PUBLIC, DocumentAccess
from storage.values import (
    ConversationKind,
    DocumentStatus,
    JobState,
    ResponseMode,
    Scope,
    SourceKind,
    Strategy,
)


class StorageError(Exception):
    """Base of the errors repositories raise on purpose."""


class NameTaken(StorageError):
    """An index with that name already exists for that owner."""


class NotFound(StorageError):
    """The row asked for does not exist (any more)."""


class ClaimLost(StorageError):
    """A job's write was refused: another worker took the job over (or it was interrupted)
    since this one claimed it. The run must stop without writing anything more."""


class LeaseLost(StorageError):
    """A document's write was refused: its lease expired and another process took it over to
    remove it (this writer was paused or cut off for longer than a lease)."""


@dataclass(frozen=True)
class JobClaim:
    """A worker's hold on a running job: the job and the token drawn when it was taken."""

    job_id: int
    token: str


@dataclass(frozen=True)
class UserRef:
    id: int
    tenant_id: str
    external_id: str
    name: str
    is_admin: bool
    home_team: str | None = None
    """Set for a Slack Connect partner: the organisation they belong to."""
    is_guest: bool = False
    email: str | None = None
    """Their confirmed email, as Slack gives it (lower-cased): how sources know them."""


@dataclass(frozen=True)
class ChannelRef:
    id: int
    tenant_id: str
    external_id: str
    name: str
    is_private: bool
    is_shared_externally: bool = False


@dataclass(frozen=True)
class ConversationRef:
    id: int
    tenant_id: str
    key: str
    kind: ConversationKind
    channel_id: int | None
    user_id: int | None
    response_mode: ResponseMode | None
    rag_strategy: Strategy | None
    settings_locked: bool = False
    require_mention: bool = False
    """Lore answers only when mentioned (not follow-ups in threads it answered in)."""
    help_channel: bool = False
    """Lore answers questions posted here without a mention, when it is confident."""
    help_confidence: float | None = None
    """How confident Lore must be to answer unasked here; None: the default."""
    experts: tuple[str, ...] = ()
    """Who Lore asks when it cannot answer: Slack user ids (U…) and user group ids (S…)."""


@dataclass(frozen=True)
class IndexRef:
    id: int
    tenant_id: str
    name: str
    scope: Scope
    owner_user_id: int | None
    channel_id: int | None
    channel_is_private: bool
    embedding_model: str
    embedding_dimension: int
    content_version: int
    created_at: datetime
    documents_only: bool = False
    """Answers drawing on it use the documents alone (RAG_ONLY), whatever the conversation says."""

    @property
    def facts(self) -> IndexFacts:
        """What the access policy needs."""
        return IndexFacts(
            tenant_id=self.tenant_id,
            scope=self.scope,
            owner_user_id=self.owner_user_id,
            channel_id=self.channel_id,
            channel_is_private=self.channel_is_private,
        )


@dataclass(frozen=True)
class IndexStats:
    documents: int
    chunks: int
    latest_document_at: datetime | None
    latest_document_name: str | None


@dataclass(frozen=True)
class NewDocument:
    """A document about to be written (as pending)."""

    index_id: int
    source_kind: SourceKind
    source_key: str
    name: str
    mime_type: str
    content_hash: str
    size: int
    characters: int
    url: str | None = None
    external_id: str | None = None
    author: str | None = None
    doc_timestamp: datetime | None = None
    source_config_id: int | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    added_by: int | None = None
    access: DocumentAccess = field(default_factory=DocumentAccess.public)
    """What its source lets read it (public unless a connector says otherwise)."""


@dataclass(frozen=True)
class DocumentRef:
    id: int
    index_id: int
    source_kind: SourceKind
    source_key: str
    name: str
    url: str | None
    external_id: str | None
    time_added: datetime
    doc_timestamp: datetime | None
    author: str | None
    mime_type: str
    size: int
    characters: int
    content_hash: str
    chunk_count: int
    status: DocumentStatus
    meta: dict[str, Any]
    source_config_id: int | None = None
    added_by: int | None = None
    access_clauses: int = PUBLIC
    """`storage.document_access`: 0 public, n > 0 restricted by its source, -1 unknown."""

    @property
    def restricted(self) -> bool:
        """Its source restricts who may read it (or its access is unknown)."""
        return self.access_clauses != PUBLIC


@dataclass(frozen=True)
class NewChunk:
    position: int
    heading: str
    text: str
    start: int | None = None
    """Where `text` starts in the document's text (`knowledge.indexing.chunking.TextChunk.start`)."""
    units: str | None = None
    """Its quotable units, encoded by the engine at ingest (`knowledge.indexing.units`)."""


@dataclass(frozen=True)
class ChunkRecord:
    id: int
    document_id: int
    index_id: int
    position: int
    heading: str
    text: str
    start: int | None = None
    """Where `text` starts in its document's text; None for a chunk written without it."""
    units: str | None = None
    """Its quotable units as recorded at ingest; None for a chunk written before they were."""


@dataclass(frozen=True)
class SourceConfigRef:
    """A source attached to an index: where to crawl from, with which limits, how often."""

    id: int
    index_id: int
    source_id: int
    kind: str
    name: str
    start_urls: list[str]
    options: dict[str, Any]
    schedule: str
    last_refresh_at: datetime | None
    created_at: datetime
    sync_cursor: datetime | None = None
    """A connector's last successful sync began here (None: it has not synced yet)."""
    last_full_sync_at: datetime | None = None
    """A connector's last complete listing, the one that prunes."""
    created_by: int | None = None
    """Who attached it."""

    @property
    def folders(self) -> list[str]:
        """What a connector pulls: a space key (`ENG`) or a page tree (`ENG/12345`); a site's
        start URLs are its folders too."""
        return self.start_urls


@dataclass(frozen=True)
class ConnectionRef:
    """A stored, authenticated connection to a connector (Confluence): never its credentials,
    only a masked hint of them."""

    id: int
    tenant_id: str
    kind: str
    name: str
    base_url: str
    credentials_hint: str
    created_by: int | None
    created_at: datetime


@dataclass(frozen=True)
class JobRef:
    id: int
    index_id: int
    source_config_id: int | None
    conversation_id: int | None
    trigger: str
    state: JobState
    counters: dict[str, int]
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    heartbeat_at: datetime | None
    worker: str | None
    error: str | None
    cancel_requested: bool
    claim_token: str | None = None
    """The current claim's token (None while no worker holds it)."""

    @property
    def claim(self) -> JobClaim:
        """The hold a worker that took this job has on it."""
        return JobClaim(self.id, self.claim_token or "")

    @property
    def finished(self) -> bool:
        return self.state in (JobState.SUCCEEDED, JobState.FAILED, JobState.CANCELLED)

    @property
    def seconds(self) -> float:
        """How long it ran: from its first start to its end (0 while it has not ended)."""
        started = self.started_at or self.created_at
        return ((self.finished_at or started) - started).total_seconds()


@dataclass(frozen=True)
class JobLine:
    id: int
    job_id: int
    at: datetime
    level: str
    message: str


@dataclass(frozen=True)
class AnswerRecord:
    """An answer Lore gave, as recorded: `cited` holds `{n, name, url, index, index_id,
    document_id}` per source; `index_ids` the indexes it searched."""

    id: int
    tenant_id: str
    conversation_id: int | None
    user_id: int | None
    question: str
    text: str | None
    mode: str
    abstained: bool
    cited: list[dict[str, Any]]
    created_at: datetime
    index_ids: tuple[int, ...] = ()
    restricted: tuple[int, ...] = ()
    """Documents restricted in their source that it drew on."""
    given: Given = Given.DM
    """Where it was given: the stricter of what was recorded then and what its conversation
    is now (a channel made private since makes its answers private too)."""
    channel_id: int | None = None
    """The channel it was given in (None in a DM)."""
    brief: str | None = None
    """The answer at a glance, as chat showed it first."""
    thread: str | None = None
    """The Slack thread it was given in, where there is one."""
    escalated_at: datetime | None = None
    """When someone asked the conversation's experts about it."""

    @property
    def facts(self) -> AnswerFacts:
        """What the access policy needs."""
        return AnswerFacts(self.tenant_id, self.given, self.user_id, self.channel_id)

    @property
    def cited_index_ids(self) -> tuple[int, ...]:
        return tuple(sorted({int(c["index_id"]) for c in self.cited if c.get("index_id") is not None}))


@dataclass(frozen=True)
class VerifiedRef:
    """A verified answer: the question and the answer a person marked as right, in an index."""

    id: int
    tenant_id: str
    index_id: int
    source_key: str
    question: str
    answer: str
    question_vector: tuple[float, ...]
    embedding_model: str
    answered_by: str
    verified_by: int
    verified_by_name: str
    verified_at: datetime
    link: str | None
    cited: tuple[dict[str, Any], ...]
    answer_id: int | None
    review_at: datetime | None
    flagged: str | None
    updated_at: datetime
    asked_by: int | None = None
    """Who asked the question in these words (None once an expert wrote it)."""

    @property
    def live(self) -> bool:
        """Answered with, as opposed to awaiting review."""
        return self.flagged is None


@dataclass(frozen=True)
class FeedbackRecord:
    """One person's verdict on an answer."""

    answer_id: int
    user_id: int
    helpful: bool
    reason: str | None
    comment: str | None
    updated_at: datetime


@dataclass(frozen=True)
class ReviewItem:
    """An answer worth a second look (unhelpful, or unanswered) and the verdicts on it."""

    answer: AnswerRecord
    feedback: tuple[FeedbackRecord, ...]
