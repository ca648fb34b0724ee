"""SQLModel tables: Lore's domain as rows. Only `storage/` imports this package.

One module per concept (`workspace`, `indexes`, `documents`, `access`, `jobs`, `answers`,
`admin`, `removals`); importing the package registers every table on `SQLModel.metadata`,
which is what Alembic compares. The schema is created and changed only through Alembic
migrations (`storage/migrations/versions/`); a test checks that the migrations and these
classes agree.
"""

from __future__ import annotations

from storage.models.access import (
    AccessGrant,
    DocumentAccessEntry,
    SlackGroup,
    SlackGroupMember,
    SourceAccount,
    SourceGroupMember,
)
from storage.models.admin import ApiKey, AuditEntry, ConsoleGrant, ConsoleSession, UsageDay
from storage.models.answers import (
    AnswerCitation,
    AnswerFeedback,
    AnswerIndex,
    AnswerLog,
    CoverageGap,
    QuestionVector,
    VerifiedAnswer,
)
from storage.models.documents import Chunk, Document
from storage.models.indexes import DocSource, DocSourceConfig, EnabledIndex, KnowledgeIndex
from storage.models.jobs import IndexingJob, IndexingJobLog, IndexingJobPage
from storage.models.removals import ForgetJob, TenantRemoval
from storage.models.workspace import (
    Channel,
    Conversation,
    Deployment,
    ProcessedEvent,
    Tenant,
    User,
    WorkspaceSetting,
)
from storage.values import ConversationKind, DocumentStatus, JobState, Scope, SourceKind, utcnow

__all__ = [
    "AccessGrant",
    "AnswerCitation",
    "AnswerFeedback",
    "AnswerIndex",
    "AnswerLog",
    "ApiKey",
    "AuditEntry",
    "Channel",
    "Chunk",
    "ConsoleGrant",
    "ConsoleSession",
    "Conversation",
    "ConversationKind",
    "CoverageGap",
    "Deployment",
    "DocSource",
    "DocSourceConfig",
    "Document",
    "DocumentAccessEntry",
    "DocumentStatus",
    "EnabledIndex",
    "ForgetJob",
    "IndexingJob",
    "IndexingJobLog",
    "IndexingJobPage",
    "JobState",
    "KnowledgeIndex",
    "ProcessedEvent",
    "QuestionVector",
    "Scope",
    "SlackGroup",
    "SlackGroupMember",
    "SourceAccount",
    "SourceGroupMember",
    "SourceKind",
    "Tenant",
    "TenantRemoval",
    "UsageDay",
    "User",
    "VerifiedAnswer",
    "WorkspaceSetting",
    "utcnow",
]
