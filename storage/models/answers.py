"""Answers Lore gave and what followed from them: the indexes searched and documents
cited, question vectors, people's verdicts, verified answers and coverage gaps."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Column, DateTime, Index, LargeBinary, Text, UniqueConstraint, false
from sqlmodel import Field, SQLModel

from storage.values import utcnow


class AnswerLog(SQLModel, table=True):
    """An answer Lore gave: the question, the answer's text, what it cited. The indexes it
    searched are `AnswerIndex` rows; what people thought of it, `AnswerFeedback` rows."""

    __tablename__ = "answer_log"
    __table_args__ = (
        # covers the console's usage figures: each is counted from the index alone
        Index(
            "ix_answer_log_usage",
            "tenant_id",
            "created_at",
            "abstained",
            "verified",
            "user_id",
            "conversation_id",
            "latency_ms",
            "escalated_at",
        ),
    )

    id: int | None = Field(default=None, primary_key=True)
    tenant_id: str = Field(foreign_key="tenant.id", index=True, max_length=64)
    conversation_id: int | None = Field(default=None, foreign_key="conversation.id")
    user_id: int | None = Field(default=None, foreign_key="user.id")
    question: str = Field(sa_column=Column(Text, nullable=False))
    text: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    """The answer as shown (None for answers recorded before it was kept)."""
    mode: str = Field(max_length=32)
    fallback: str | None = Field(default=None, max_length=32)
    abstained: bool = False
    cited: list[dict[str, Any]] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    restricted: list[int] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    """Documents restricted in their source that the answer drew on: it is never shared in a
    channel, and a review shows it only to people who may read them all."""
    given_in: str | None = Field(default=None, max_length=32)
    """Where it was given, as `storage.access.Given` names it (None for answers recorded
    before it was kept: their conversation says)."""
    latency_ms: int | None = Field(default=None, description="From the question's arrival to the answer.")
    verified: bool = Field(default=False, sa_column_kwargs={"server_default": false()})
    """It quoted a verified answer (a document written from a coverage gap, `meta.verified`)."""
    created_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))
    brief: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    """The answer at a glance, as chat showed it first (None before it was kept)."""
    thread: str | None = Field(default=None, max_length=64)
    """The Slack thread it was given in (its parent's ts), where there is one."""
    escalated_at: datetime | None = Field(default=None, sa_type=DateTime(timezone=True))
    """When someone asked the conversation's experts about it ("Ask an expert")."""


class AnswerIndex(SQLModel, table=True):
    """An index an answer searched (`cited`: and quoted), so the people who look after an
    index can find the answers it gave or could not give."""

    __tablename__ = "answer_index"

    answer_id: int = Field(foreign_key="answer_log.id", primary_key=True)
    index_id: int = Field(foreign_key="knowledge_index.id", primary_key=True, index=True)
    cited: bool = False


class AnswerCitation(SQLModel, table=True):
    """A document an answer quoted, so the documents cited most (and never) are counted in SQL."""

    __tablename__ = "answer_citation"

    answer_id: int = Field(foreign_key="answer_log.id", primary_key=True)
    document_id: int = Field(primary_key=True, index=True)
    """No foreign key: the document may be removed while the answer is kept."""
    index_id: int = Field(index=True)


class QuestionVector(SQLModel, table=True):
    """A question's embedding, kept for the coverage-gap job so each question is embedded once."""

    __tablename__ = "question_vector"

    answer_id: int = Field(foreign_key="answer_log.id", primary_key=True)
    model: str = Field(max_length=120)
    vector: bytes = Field(sa_column=Column(LargeBinary, nullable=False))
    """float32, little-endian."""


class AnswerFeedback(SQLModel, table=True):
    """One person's verdict on one answer (pressing again changes it): helpful or not, and
    for an unhelpful one what was wrong and a comment."""

    __tablename__ = "answer_feedback"
    __table_args__ = (UniqueConstraint("answer_id", "user_id"),)

    id: int | None = Field(default=None, primary_key=True)
    answer_id: int = Field(foreign_key="answer_log.id", index=True)
    tenant_id: str = Field(foreign_key="tenant.id", max_length=64)
    user_id: int = Field(foreign_key="user.id")
    helpful: bool
    reason: str | None = Field(default=None, max_length=32)
    """wrong, outdated, missing source or other (`storage.values.FeedbackReason`)."""
    comment: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    created_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))
    updated_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))


class VerifiedAnswer(SQLModel, table=True):
    """A question and the answer a person marked as right, kept in an index (a channel's
    own): answered first when a question asked later means the same (`question_vector`).
    Saving the same message (or Lore's same answer) again updates it (`source_key`)."""

    __tablename__ = "verified_answer"
    __table_args__ = (UniqueConstraint("index_id", "source_key"),)

    id: int | None = Field(default=None, primary_key=True)
    tenant_id: str = Field(foreign_key="tenant.id", max_length=64)
    index_id: int = Field(foreign_key="knowledge_index.id", index=True)
    source_key: str = Field(
        max_length=255, description="What it was saved from: a message, or Lore's answer."
    )
    question: str = Field(sa_column=Column(Text, nullable=False))
    answer: str = Field(sa_column=Column(Text, nullable=False))
    question_vector: list[float] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    embedding_model: str = Field(max_length=120)
    answered_by: str = Field(default="", max_length=255, description="Who wrote the answer (a name).")
    answered_by_user: int | None = Field(default=None, foreign_key="user.id")
    """Who wrote the answer, as a Lore user (None: unknown, or forgotten): forgetting them
    blanks `answered_by`."""
    verified_by: int = Field(foreign_key="user.id")
    verified_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))
    link: str | None = Field(default=None, max_length=2048, description="The thread it was given in.")
    cited: list[dict[str, Any]] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    """The documents it rests on: id, content hash when verified, name, url."""
    answer_id: int | None = Field(default=None, foreign_key="answer_log.id")
    asked_by: int | None = Field(default=None, foreign_key="user.id")
    """Who asked the question in these words (None once an expert wrote it anew): when they
    are forgotten, their wording goes and the answer awaits a question from the experts."""
    review_at: datetime | None = Field(default=None, sa_type=DateTime(timezone=True))
    """After this it awaits review (flagged `expired`)."""
    flagged: str | None = Field(default=None, max_length=32)
    """Why it awaits review (expired, document changed, marked); not answered while flagged."""
    updated_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))


class CoverageGap(SQLModel, table=True):
    """A group of similar questions Lore could not answer or that people found unhelpful,
    as the last coverage-gap job found them (biggest first by `rank`)."""

    __tablename__ = "coverage_gap"

    id: int | None = Field(default=None, primary_key=True)
    tenant_id: str = Field(foreign_key="tenant.id", index=True, max_length=64)
    rank: int
    answer_ids: list[int] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    computed_at: datetime = Field(default_factory=utcnow, sa_type=DateTime(timezone=True))
