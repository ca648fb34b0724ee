"""Who may read what a connected source restricts: each document's access clauses, the
source's accounts and groups, Slack channels and user groups as groups, and grants by admins
(`storage.document_access`, `storage.repositories.source_access`)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Column, DateTime, Index, Text
from sqlmodel import Field, SQLModel

from storage.values import utcnow


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
