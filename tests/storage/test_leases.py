"""The lease keeper's thread lives no longer than what owns it: closing the repository, or
disposing the database it writes to (a fixture's teardown, a process's shutdown), stops and
joins it, so no renewal is tried against a database that is gone."""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

import pytest

from storage.db import Database, open_database
from storage.leases import Writer
from storage.records import NewChunk
from storage.repositories.directory import Directory
from storage.repositories.documents import DocumentRepository
from storage.repositories.indexes import IndexRepository
from storage.values import Scope
from tests.storage.test_repositories import DIM, MODEL, new_doc

LEASE = 0.2


def keepers() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name == "lore-lease-keeper"}


def writing(db: Database) -> tuple[DocumentRepository, set[threading.Thread]]:
    """A repository holding a half-written document, and the keeper thread it started."""
    Directory(db).ensure_tenant("T1")
    index = IndexRepository(db).create(
        "T1", "kw", Scope.SHARED, embedding_model=MODEL, embedding_dimension=DIM
    )
    before = keepers()
    documents = DocumentRepository(db, writer=Writer("this", lease_seconds=LEASE))
    documents.create_pending(new_doc(index.id), [NewChunk(position=0, heading="", text="half written")])
    started = keepers() - before
    assert len(started) == 1 and documents.held()
    time.sleep(LEASE)  # a renewal or two
    return documents, started


@pytest.mark.parametrize("closing", ["the repository", "the database"])
def test_closing_the_owner_stops_and_joins_its_keeper(
    closing: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="storage.leases")
    db = open_database(f"sqlite:///{tmp_path / 'lore.db'}")
    documents, started = writing(db)
    if closing == "the repository":
        documents.close()
        assert not any(t.is_alive() for t in started)
    db.dispose()
    assert not any(t.is_alive() for t in started)
    for leftover in tmp_path.iterdir():  # the database is gone, as after a test's teardown
        leftover.unlink()
    time.sleep(LEASE)  # a keeper left running would try (and fail) to renew by now
    assert not any(t.is_alive() for t in started)
    assert "could not renew" not in caplog.text


def test_a_closed_keeper_starts_no_thread_again(tmp_path: Path) -> None:
    """What a closed repository still holds is left to expire, as a killed process's rows."""
    db = open_database(f"sqlite:///{tmp_path / 'lore.db'}")
    documents, _ = writing(db)
    documents.close()
    before = keepers()
    index = IndexRepository(db).list_for_tenant("T1")[0]
    documents.create_pending(new_doc(index.id, key="late.md", digest="h2"), [NewChunk(0, "", "late")])
    assert keepers() - before == set()
    db.dispose()
