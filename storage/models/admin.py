"""Administration: HTTP API keys, the audit log, console sign-in links and sessions, and
the console's per-day usage figures."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Column, DateTime, Index, false
from sqlmodel import Field, SQLModel

from storage.values import utcnow


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
