"""Answers given and the feedback on them (helpful / not helpful)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from storage.db import Database
from storage.models import AnswerLog, utcnow
from storage.records import NotFound

FEEDBACK_VALUES = ("helpful", "not_helpful")


@dataclass(frozen=True)
class AnswerEntry:
    tenant_id: str
    question: str
    mode: str
    fallback: str | None
    abstained: bool
    cited: list[dict[str, Any]]
    conversation_id: int | None = None
    user_id: int | None = None


class AnswerRepository:
    def __init__(self, db: Database) -> None:
        self._db = db

    def record(self, entry: AnswerEntry) -> int:
        with self._db.session() as session:
            row = AnswerLog(
                tenant_id=entry.tenant_id,
                conversation_id=entry.conversation_id,
                user_id=entry.user_id,
                question=entry.question,
                mode=entry.mode,
                fallback=entry.fallback,
                abstained=entry.abstained,
                cited=entry.cited,
            )
            session.add(row)
            session.flush()
            assert row.id is not None
            return row.id

    def set_feedback(self, answer_id: int, tenant_id: str, user_id: int | None, value: str) -> None:
        if value not in FEEDBACK_VALUES:
            raise ValueError(f"feedback must be one of {FEEDBACK_VALUES}")
        with self._db.session() as session:
            row = session.get(AnswerLog, answer_id)
            if row is None or row.tenant_id != tenant_id:
                raise NotFound(f"answer {answer_id}")
            row.feedback, row.feedback_user_id, row.feedback_at = value, user_id, utcnow()
            session.add(row)

    def feedback(self, answer_id: int) -> tuple[str | None, dict[str, Any]]:
        with self._db.session() as session:
            row = session.get(AnswerLog, answer_id)
            if row is None:
                raise NotFound(f"answer {answer_id}")
            return row.feedback, {
                "question": row.question,
                "cited": row.cited,
                "user_id": row.user_id,
            }
