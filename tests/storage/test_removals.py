"""Removing a workspace's data, against real SQL (SQLite and PostgreSQL): scheduled once,
called off by a new install, claimed by one worker, and purged whole, every other tenant's
rows untouched."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import func, select
from sqlmodel import SQLModel

from storage.db import Database, open_database
from storage.keyword import KeywordIndex
from storage.records import NewChunk
from storage.repositories.answers import AnswerEntry, AnswerRepository
from storage.repositories.api_keys import ApiKeyRepository
from storage.repositories.directory import Directory
from storage.repositories.documents import DocumentRepository
from storage.repositories.indexes import IndexRepository
from storage.repositories.removals import Removals, owned_rows
from storage.repositories.retention import Retention
from storage.values import FeedbackReason
from tests.storage.test_repositories import DIM, MODEL, new_doc

NOW = timedelta(0)
UNOWNED = {"processed_event", "tenant_removal", "deployment"}
"""Tables that hold nothing of a workspace: delivery ids, the removals' own record, the
database's deployment id."""


def fill(database: Database, tenant: str, word: str) -> int:
    """A workspace's people, channel, indexes, a document with passages, an answer with
    feedback, an API key; the channel index's id."""
    directory, indexes = Directory(database), IndexRepository(database)
    user = directory.ensure_user(tenant, "U1", "ada")
    channel = directory.ensure_channel(tenant, "C1", "general", is_private=False)
    conversation = directory.channel_conversation(channel)
    index = indexes.ensure_channel(channel, model=MODEL, dimension=DIM)
    indexes.ensure_personal(user, model=MODEL, dimension=DIM)
    documents = DocumentRepository(database)
    document, _ = documents.create_pending(
        new_doc(index.id, added_by=user.id), [NewChunk(position=0, heading="H", text=f"the {word} runbook")]
    )
    documents.mark_ready(document.id)
    answers = AnswerRepository(database)
    answer = answers.record(
        AnswerEntry(tenant, f"where is the {word}?", "RAG_ONLY", None, False, [{"index_id": index.id}],
                    conversation_id=conversation.id, user_id=user.id, text=word, searched=[index.id])
    )  # fmt: skip
    answers.set_feedback(answer, tenant, user.id, False, reason=FeedbackReason.WRONG, comment=word)
    ApiKeyRepository(database).create(tenant, "ci", user_id=user.id)
    return index.id


def rows(database: Database, table: str) -> int:
    with database.engine.connect() as connection:
        return int(
            connection.execute(select(func.count()).select_from(SQLModel.metadata.tables[table])).scalar()
        )


def test_every_table_but_the_unowned_is_reached_from_the_tenant() -> None:
    # A table added later is purged with the rest as long as a key leads to the tenant.
    reached = {table.name for table, _ in owned_rows(SQLModel.metadata, "T1")}
    assert reached == set(SQLModel.metadata.tables) - UNOWNED


def test_a_purge_removes_one_workspace_whole_and_nothing_else(database: Database) -> None:
    kept_index = fill(database, "T1", "kiwi")
    fill(database, "T2", "mango")
    before = {name: rows(database, name) for name in SQLModel.metadata.tables}

    removed = Removals(database).purge_rows("T2")

    assert removed["tenant"] == 1 and removed["document"] == 1 and removed["chunk"] == 1
    assert removed["knowledge_index"] == 2 and removed["answer_feedback"] == 1 and removed["api_key"] == 1
    after = {name: rows(database, name) for name in SQLModel.metadata.tables}
    assert {name: before[name] - after[name] for name in before if before[name] != after[name]} == removed
    keyword = KeywordIndex(database)
    assert [hit.chunk_id for hit in keyword.search([kept_index], "kiwi runbook", 5)]
    assert Removals(database).purge_rows("T2") == {}  # again: nothing left


def test_a_removal_is_scheduled_once_claimed_once_and_called_off_by_a_new_install(database: Database) -> None:
    removals = Removals(database)
    first = removals.schedule("T2", reason="app_uninstalled", grace=NOW)
    assert removals.schedule("T2", reason="tokens_revoked", grace=timedelta(days=3)).id == first.id
    assert [r.id for r in removals.claim_due("worker-a", stale=timedelta(minutes=30))] == [first.id]
    assert removals.claim_due("worker-b", stale=timedelta(minutes=30)) == []  # taken
    assert [r.id for r in removals.claim_due("worker-b", stale=NOW)] == [first.id]  # abandoned: taken over
    done = removals.record_purge(first.id, {"chunk": 3})
    assert done.purged_at is not None and removals.history("T2")[0].removed == {"chunk": 3}
    assert removals.claim_due("worker-a", stale=NOW) == []

    later = removals.schedule("T3", reason="app_uninstalled", grace=timedelta(hours=72))
    assert removals.claim_due("worker-a", stale=NOW) == []  # not due
    assert removals.cancel(["T3"]) == 1
    assert removals.pending("T3") is None and removals.history("T3")[0].id == later.id


def test_the_workspaces_of_an_organisation_are_found(database: Database) -> None:
    directory, removals = Directory(database), Removals(database)
    for tenant in ("T1", "T2", "T3"):
        directory.ensure_tenant(tenant)
    removals.note_enterprise("T1", "E1")
    removals.note_enterprise("T2", "E1")
    assert removals.tenants_of("E1") == ["T1", "T2"] and removals.enterprise_of("T3") is None


def test_purges_leave_every_sqlite_connection_overwriting_what_it_deletes(tmp_path: Path) -> None:
    # The workspace purge and retention once turned `secure_delete` off when they were done,
    # on a connection the pool then lent to the next removal: a deleted message's text stayed
    # in the file's free space.
    database = open_database(f"sqlite:///{tmp_path / 'lore.db'}")
    fill(database, "T2", "mango")
    Removals(database).purge_rows("T2")
    Retention(database).purge_before("T2", datetime.now(UTC))
    with database.engine.connect() as connection:  # the pool lends the purges' connection again
        flag = connection.exec_driver_sql("PRAGMA secure_delete").scalar()
    database.dispose()
    assert flag == 1
