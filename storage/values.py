"""Domain values every layer shares: what kind of thing a row is, its state, and the clock.

They live apart from the tables (`storage.models`, private to `storage/`) so the layers
above can name them without reaching into the schema.
"""

from __future__ import annotations

import enum
import re
from datetime import UTC, datetime
from typing import TypeVar

ChoiceT = TypeVar("ChoiceT", bound=enum.StrEnum)

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


class ResponseMode(enum.StrEnum):
    """How a conversation is answered: from the documents, the model, or both (`knowledge.engine`)."""

    RAG_ONLY = "RAG_ONLY"
    LLM_ONLY = "LLM_ONLY"
    HYBRID = "HYBRID"
    SMART_FALLBACK = "SMART_FALLBACK"
    RAG_PRIORITY = "RAG_PRIORITY"
    LLM_PRIORITY = "LLM_PRIORITY"

    @classmethod
    def parse(cls, text: str) -> ResponseMode:
        """Accepts `rag only`, `rag-only`, `RAG_ONLY` …; raises ValueError naming the modes."""
        key = re.sub(r"[\s-]+", "_", text.strip()).upper().removesuffix("_MODE")
        try:
            return cls(key)
        except ValueError:
            names = ", ".join(m.value for m in cls)
            raise ValueError(f"unknown response mode {text!r}; choose one of {names}") from None


def choice(kind: type[ChoiceT], value: str | None) -> ChoiceT | None:
    """A stored choice as its enum; None when none was made, or when what is stored names no
    choice of this version (set by another)."""
    try:
        return kind(value) if value else None
    except ValueError:
        return None


class Strategy(enum.StrEnum):
    """When to retrieve: on every question (`always`), only when retrieval is confident
    (`confidence`), only for questions about knowledge (`smart`), or when the model asks
    for it through tool calls (`function`, needs a model)."""

    ALWAYS = "always"
    CONFIDENCE = "confidence"
    SMART = "smart"
    FUNCTION = "function"
