"""Connections and their attachments against real SQL (SQLite and PostgreSQL): credentials
sealed at rest and opened only with the key, a masked hint in clear, attachments that merge
their folders, sync cursors, and detaching that keeps the connection for other indexes."""

from __future__ import annotations

from datetime import timedelta

import pytest
from cryptography.fernet import Fernet
from sqlalchemy import text

from storage.db import Database
from storage.records import NotFound
from storage.repositories.connections import ConnectionRepository
from storage.repositories.directory import Directory
from storage.repositories.indexes import IndexRepository
from storage.repositories.sources import SourceRepository
from storage.secrets import MissingSecretKey, SecretBox, SecretUnreadable, mask, valid_key
from storage.values import Scope, utcnow

TOKEN = "ATATT3xFfGF0-a-long-api-token-9876"


def _index(database: Database, name: str) -> int:
    Directory(database).ensure_tenant("T1")
    return (
        IndexRepository(database)
        .create("T1", name, Scope.SHARED, embedding_model="m", embedding_dimension=4)
        .id
    )


def test_credentials_are_sealed_at_rest_and_opened_only_with_the_key(database: Database) -> None:
    Directory(database).ensure_tenant("T1")
    key = Fernet.generate_key().decode()
    repository = ConnectionRepository(database, SecretBox(key))
    saved = repository.save(
        "T1",
        "confluence",
        "acme",
        "https://acme.atlassian.net/wiki",
        {"email": "a@b.c", "token": TOKEN},
        "hint",
    )
    with database.session() as session:
        row = session.execute(text("SELECT credentials_ref, credentials_hint FROM doc_source")).one()
    assert TOKEN not in row[0] and "a@b.c" not in row[0] and row[1] == "hint"
    assert repository.credentials(saved.id) == {"email": "a@b.c", "token": TOKEN}
    assert repository.get(saved.id) == saved and repository.for_tenant("T1") == [saved]
    with pytest.raises(SecretUnreadable, match="connect the source again"):
        ConnectionRepository(database, SecretBox(Fernet.generate_key().decode())).credentials(saved.id)
    with pytest.raises(MissingSecretKey, match="LORE_SECRET_KEY is not set"):
        ConnectionRepository(database, None).save("T1", "confluence", "x", "https://x", {"token": "t"}, "h")


def test_attachments_merge_folders_and_outlive_detaching(database: Database) -> None:
    eng, ops = _index(database, "eng"), _index(database, "ops")
    repository = ConnectionRepository(database, SecretBox(Fernet.generate_key().decode()))
    connection = repository.save(
        "T1", "confluence", "acme", "https://acme.example/wiki", {"token": TOKEN}, "h"
    )
    first = repository.attach(connection.id, eng, ["ENG"])
    again = repository.attach(connection.id, eng, ["OPS", "ENG", "ENG/42"])
    other = repository.attach(connection.id, ops, ["OPS"], schedule="weekly")
    assert first.id == again.id and again.folders == ["ENG", "OPS", "ENG/42"]
    assert (other.kind, other.schedule, other.sync_cursor) == ("confluence", "weekly", None)
    assert [a.id for a in repository.attachments(connection.id)] == [first.id, other.id]

    began = utcnow() - timedelta(minutes=5)
    repository.record_sync(first.id, began, complete=False, folders=["ENG"])
    incremental = SourceRepository(database).get(first.id)
    assert (incremental.sync_cursor, incremental.last_full_sync_at) == (began, None)
    repository.record_sync(first.id, began, complete=True, folders=again.folders)
    complete = SourceRepository(database).get(first.id)
    assert complete.last_full_sync_at == began and complete.options["listed_folders"] == again.folders

    SourceRepository(database).detach(first.id)
    assert repository.get(connection.id) == connection, "the connection stays for its other attachment"
    assert [a.id for a in repository.attachments(connection.id)] == [other.id]
    SourceRepository(database).detach(other.id)
    repository.remove(connection.id)
    with pytest.raises(NotFound):
        repository.get(connection.id)


def test_keys_and_masks() -> None:
    assert valid_key(Fernet.generate_key().decode())
    assert not valid_key("not-a-key") and not valid_key("")
    assert mask(TOKEN) == "…9876"
    assert mask("short") == "…", "a short secret shows nothing at all"


def test_a_sync_whose_job_was_taken_over_does_not_move_the_cursor(database: Database) -> None:
    """A paused worker finishing its sync after another worker took the job over: the
    cursor stays where the job's holder will put it (its write refused, `ClaimLost`)."""
    from storage.records import ClaimLost
    from storage.repositories.jobs import JobRepository

    eng = _index(database, "eng")
    repository = ConnectionRepository(database, SecretBox(Fernet.generate_key().decode()))
    connection = repository.save(
        "T1", "confluence", "acme", "https://acme.example/wiki", {"token": TOKEN}, "h"
    )
    attachment = repository.attach(connection.id, eng, ["ENG"])
    jobs = JobRepository(database)
    jobs.create(eng, attachment.id)
    paused = jobs.claim("paused")
    assert paused is not None
    jobs.interrupt_stale(timedelta(seconds=-1))
    taker = jobs.claim("taker")
    assert taker is not None and taker.id == paused.id

    with pytest.raises(ClaimLost):
        repository.record_sync(attachment.id, utcnow(), complete=True, folders=["ENG"], claim=paused.claim)
    assert SourceRepository(database).get(attachment.id).sync_cursor is None
    began = utcnow() - timedelta(minutes=1)
    repository.record_sync(attachment.id, began, complete=False, folders=["ENG"], claim=taker.claim)
    assert SourceRepository(database).get(attachment.id).sync_cursor == began
