"""Frozen values that repositories hand out. SQLModel rows never leave `storage/`."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from storage.access import IndexFacts
from storage.models import ConversationKind, DocumentStatus, Scope, SourceKind


class StorageError(Exception):
    """Base of the errors repositories raise on purpose."""


class NameTaken(StorageError):
    """An index with that name already exists for that owner."""


class NotFound(StorageError):
    """The row asked for does not exist (any more)."""


@dataclass(frozen=True)
class UserRef:
    id: int
    tenant_id: str
    external_id: str
    name: str
    is_admin: bool


@dataclass(frozen=True)
class ChannelRef:
    id: int
    tenant_id: str
    external_id: str
    name: str
    is_private: bool


@dataclass(frozen=True)
class ConversationRef:
    id: int
    tenant_id: str
    key: str
    kind: ConversationKind
    channel_id: int | None
    user_id: int | None
    response_mode: str | None
    rag_strategy: str | None


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


@dataclass(frozen=True)
class NewChunk:
    position: int
    heading: str
    text: str


@dataclass(frozen=True)
class ChunkRecord:
    id: int
    document_id: int
    index_id: int
    position: int
    heading: str
    text: str
