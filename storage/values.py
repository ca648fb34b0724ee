"""Domain values every layer shares: what kind of thing a row is, its state, and the clock.

They live apart from the tables (`storage.models`, private to `storage/`) so the layers
above can name them without reaching into the schema.
"""

from __future__ import annotations

import enum
from datetime import UTC, datetime

LOCAL_TENANT = "local"
"""The workspace of the shell and the CLI."""


def utcnow() -> datetime:
    return datetime.now(UTC)


class Scope(enum.StrEnum):
    PERSONAL = "personal"
    CHANNEL = "channel"
    SHARED = "shared"


class ConversationKind(enum.StrEnum):
    CHANNEL = "channel"
    DM = "dm"


class SourceKind(enum.StrEnum):
    FILE = "file"
    URL = "url"
    TEXT = "text"
    CONNECTOR = "connector"


class DocumentStatus(enum.StrEnum):
    PENDING = "pending"  # rows written, vectors being written: never searched
    READY = "ready"
    DELETING = "deleting"  # replaced or removed: vectors being deleted, then the rows


class JobState(enum.StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"
    INTERRUPTED = "interrupted"


class FeedbackReason(enum.StrEnum):
    """What was wrong with an unhelpful answer."""

    WRONG = "wrong"
    OUTDATED = "outdated"
    MISSING_SOURCE = "missing source"
    OTHER = "other"
