"""Indexing jobs: a crawl or refresh of one attached source, its log and the pages it handled."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, Column, DateTime, Index, String, Text, UniqueConstraint, text
from sqlmodel import Field, SQLModel

from storage.values import JobState, utcnow

ACTIVE_JOB = text("state IN ('queued', 'running', 'interrupted') AND source_config_id IS NOT NULL")
"""A job under way for an attached source: one at a time per source."""


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
