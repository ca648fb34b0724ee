"""Removing data for good: a workspace Lore was removed from, and forgetting one person."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, Column, DateTime, Index, String, Text, text
from sqlmodel import Field, SQLModel

from storage.values import JobState, utcnow

ACTIVE_FORGET = text("state IN ('queued', 'running')")
"""A forget job under way: one at a time per person."""


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
