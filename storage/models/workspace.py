"""Workspaces and the people and places in them: this deployment, tenants (Slack
workspaces), users, channels, the conversations Lore is talked in, the Slack deliveries
already handled, and the settings admins change at run time."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Column, DateTime, String, UniqueConstraint
from sqlmodel import Field, SQLModel

from storage.values import ConversationKind, utcnow


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


class ProcessedEvent(SQLModel, table=True):
    """A Slack delivery already handled (by event id, or by channel and message ts), kept
    for a while so retries and double deliveries are answered once, across restarts."""

    __tablename__ = "processed_event"

    key: str = Field(primary_key=True, max_length=255)
    seen_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True), index=True)


class WorkspaceSetting(SQLModel, table=True):
    """A setting of one workspace that its admins change at run time (in the console), or a
    fact a job keeps about it (when coverage gaps were last computed)."""

    __tablename__ = "workspace_setting"

    tenant_id: str = Field(foreign_key="tenant.id", primary_key=True, max_length=64)
    name: str = Field(primary_key=True, max_length=64)
    value: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    updated_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))
