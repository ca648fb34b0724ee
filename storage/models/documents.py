"""Documents and their chunks: what is ingested, searched and cited."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Column, DateTime, Index, String, Text, text
from sqlmodel import Field, SQLModel

from storage.values import DocumentStatus, SourceKind, utcnow

WITHOUT_UNITS = text("units IS NULL")
"""Chunks stored before revision 0022: an index of them only, empty once the repair read them,
so that every start's look for them reads nothing."""


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
