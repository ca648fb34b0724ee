"""Answers, the indexes they searched and the verdicts on them, against SQLite and PostgreSQL;
and the migration that moved the feedback given before into its own table."""

from __future__ import annotations

import pytest
from alembic import command
from sqlalchemy import create_engine, text

from storage.db import Database, open_database
from storage.migrations_runner import alembic_config
from storage.records import NotFound
from storage.repositories.answers import AnswerEntry, AnswerRepository
from storage.repositories.directory import Directory
from storage.repositories.indexes import IndexRepository
from storage.values import FeedbackReason, Scope

MODEL, DIM = "local:test", 8


def entry(tenant: str, question: str, **extra: object) -> AnswerEntry:
    values: dict[str, object] = {"mode": "rag_only", "fallback": None, "abstained": False, "cited": []}
    return AnswerEntry(tenant_id=tenant, question=question, **{**values, **extra})  # type: ignore[arg-type]


def test_feedback_is_one_verdict_per_person_per_answer(database: Database) -> None:
    directory, answers = Directory(database), AnswerRepository(database)
    ada, bob = directory.ensure_user("T1", "UADA"), directory.ensure_user("T1", "UBOB")
    answer = answers.record(entry("T1", "when do we deploy?", text="On Tuesdays [1]"))
    answers.set_feedback(answer, "T1", ada.id, True)
    answers.set_feedback(answer, "T1", bob.id, False, reason=FeedbackReason.OUTDATED, comment="we moved")
    answers.set_feedback(answer, "T1", ada.id, False, reason=FeedbackReason.WRONG)  # ada changes her mind
    verdicts = answers.verdicts(answer)
    assert [(v.user_id, v.helpful, v.reason, v.comment) for v in verdicts] == [
        (ada.id, False, "wrong", None),
        (bob.id, False, "outdated", "we moved"),
    ]
    answers.set_feedback(answer, "T1", bob.id, False, comment="it is Wednesdays now")  # the modal's comment
    assert answers.verdicts(answer)[1].reason == "outdated"
    assert answers.verdicts(answer)[1].comment == "it is Wednesdays now"
    answers.set_feedback(answer, "T1", bob.id, True)  # helpful after all: no reason, no comment
    assert (answers.verdicts(answer)[1].reason, answers.verdicts(answer)[1].comment) == (None, None)
    with pytest.raises(NotFound):
        answers.set_feedback(answer, "T2", ada.id, True)  # another workspace's answer
    assert answers.get(answer, "T1").text == "On Tuesdays [1]"
    with pytest.raises(NotFound):
        answers.get(answer, "T2")


def test_review_finds_unhelpful_and_unanswered_answers_by_index(database: Database) -> None:
    directory, answers, indexes = Directory(database), AnswerRepository(database), IndexRepository(database)
    ada = directory.ensure_user("T1", "UADA")
    eng = indexes.create("T1", "eng", Scope.SHARED, embedding_model=MODEL, embedding_dimension=DIM)
    ops = indexes.create("T1", "ops", Scope.SHARED, embedding_model=MODEL, embedding_dimension=DIM)
    cited = [{"n": 1, "name": "deploy.md", "index": "eng", "index_id": eng.id, "document_id": 7}]
    good = answers.record(entry("T1", "good", searched=[eng.id, ops.id], cited=cited))
    bad = answers.record(entry("T1", "bad", searched=[eng.id], cited=cited))
    unanswered = answers.record(entry("T1", "who is on call?", searched=[ops.id], abstained=True))
    answers.set_feedback(good, "T1", ada.id, True)
    answers.set_feedback(bad, "T1", ada.id, False, reason=FeedbackReason.MISSING_SOURCE, comment="no link")

    [item] = answers.review("T1", [eng.id])
    assert item.answer.id == bad and item.answer.index_ids == (eng.id,)
    assert [(f.reason, f.comment) for f in item.feedback] == [("missing source", "no link")]
    assert [i.answer.id for i in answers.review("T1", [ops.id])] == [unanswered]
    assert [i.answer.id for i in answers.review("T1", [eng.id, ops.id])] == [unanswered, bad]
    assert answers.review("T2", [eng.id, ops.id]) == [] and answers.review("T1", []) == []

    indexes.delete(eng.id)  # an index deleted leaves its answers, unlinked
    assert answers.get(good, "T1").index_ids == (ops.id,)


def test_the_migration_moves_feedback_given_before_into_its_own_table(database_url: str) -> None:
    engine = create_engine(database_url)
    try:
        command.upgrade(alembic_config(engine), "0007")
        with engine.begin() as connection:
            connection.execute(
                text("INSERT INTO tenant (id, name, created_at) VALUES ('T1', '', '2026-01-01')")
            )
            connection.execute(
                text(
                    'INSERT INTO "user" (id, tenant_id, external_id, name, is_admin, is_guest, created_at) '
                    "VALUES (1, 'T1', 'UADA', 'ada', false, false, '2026-01-01')"
                )
            )
            for answer_id, verdict, user in ((1, "not_helpful", 1), (2, "helpful", None), (3, None, None)):
                connection.execute(
                    text(
                        "INSERT INTO answer_log (id, tenant_id, question, mode, abstained, cited, created_at, "
                        "feedback, feedback_user_id, feedback_at) VALUES (:id, 'T1', 'q', 'rag_only', false, "
                        "'[]', '2026-01-01', :verdict, :user, :at)"
                    ),
                    {
                        "id": answer_id,
                        "verdict": verdict,
                        "user": user,
                        "at": "2026-01-02" if verdict else None,
                    },
                )
        command.upgrade(alembic_config(engine), "head")
    finally:
        engine.dispose()
    db = open_database(database_url)
    try:
        repository = AnswerRepository(db)
        [moved] = repository.verdicts(1)
        assert (moved.user_id, moved.helpful) == (1, False)
        assert repository.verdicts(2) == [] and repository.verdicts(3) == []  # no one to attribute it to
        assert repository.get(1, "T1").text is None
    finally:
        db.dispose()
