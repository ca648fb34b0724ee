"""Migrations are the only way the schema changes: they must produce exactly the models."""

from __future__ import annotations

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine
from sqlmodel import SQLModel

from storage.db import Database
from storage.migrations_runner import (
    HEAD,
    MIGRATIONS,
    alembic_config,
    current_revision,
    head_revision,
    upgrade_to_head,
)
from storage.records import DocumentRef, NewChunk, NewDocument
from storage.repositories.directory import Directory
from storage.repositories.documents import DocumentRepository
from storage.repositories.indexes import IndexRepository
from storage.schema import described_by_models
from storage.values import SourceKind


def test_migrations_match_the_models(database: Database) -> None:
    with database.engine.connect() as connection:
        context = MigrationContext.configure(
            connection, opts={"compare_type": True, "include_object": described_by_models}
        )
        differences = compare_metadata(context, SQLModel.metadata)
    assert differences == []


def test_upgrade_is_idempotent(database: Database) -> None:
    assert current_revision(database.engine) == head_revision()
    upgrade_to_head(database.engine)
    assert current_revision(database.engine) == head_revision()


def test_the_start_up_check_knows_the_newest_migration() -> None:
    # Start-up compares the database with HEAD without loading Alembic's scripts: a new
    # migration must move HEAD too, or existing databases would never get it.
    assert head_revision() == HEAD


def test_a_database_one_migration_behind_is_brought_up_to_date(database_url: str) -> None:
    previous = ScriptDirectory(str(MIGRATIONS)).get_revision(HEAD).down_revision
    assert isinstance(previous, str)
    engine = create_engine(database_url)
    try:
        assert current_revision(engine) is None
        command.upgrade(alembic_config(engine), previous)
        assert current_revision(engine) == previous
        upgrade_to_head(engine)
        assert current_revision(engine) == HEAD
    finally:
        engine.dispose()


def test_the_upgrade_to_one_index_per_channel_and_one_job_per_source_keeps_what_races_made(
    database_url: str,
) -> None:
    """A database at 0009 where two replicas gave a channel two indexes and two workers
    queued two refreshes of one source: the upgrade keeps the oldest of each as it was, the
    other index keeps its documents, scope and channel, the other job is cancelled."""
    from sqlalchemy import text

    engine = create_engine(database_url)
    try:
        command.upgrade(alembic_config(engine), "0009")
        with engine.begin() as c:
            c.execute(text("INSERT INTO tenant (id, name, created_at) VALUES ('T1', '', CURRENT_TIMESTAMP)"))
            c.execute(
                text(
                    "INSERT INTO channel (tenant_id, external_id, name, is_private, is_shared_externally, created_at) "
                    "VALUES ('T1', 'C1', 'eng', true, false, CURRENT_TIMESTAMP)"
                )
            )
            for name in ("eng", "C1"):  # the same channel, known by two names
                c.execute(
                    text(
                        "INSERT INTO knowledge_index (tenant_id, name, scope, owner_key, channel_id, "
                        "embedding_model, embedding_dimension, content_version, documents_only, created_at) "
                        "VALUES ('T1', :name, 'channel', 'channel:1', 1, 'm', 8, 0, false, CURRENT_TIMESTAMP)"
                    ),
                    {"name": name},
                )
            c.execute(
                text(
                    "INSERT INTO doc_source (tenant_id, kind, name, config, created_at) "
                    "VALUES ('T1', 'site', 's', '{}', CURRENT_TIMESTAMP)"
                )
            )
            c.execute(
                text(
                    "INSERT INTO doc_source_config (index_id, source_id, folders, options, schedule, created_at) "
                    "VALUES (1, 1, '[]', '{}', 'daily', CURRENT_TIMESTAMP)"
                )
            )
            for _ in range(2):
                c.execute(
                    text(
                        "INSERT INTO indexing_job (index_id, source_config_id, trigger, cancel_requested, state, "
                        "counters, created_at) VALUES (1, 1, 'schedule', false, 'queued', '{}', CURRENT_TIMESTAMP)"
                    )
                )
        upgrade_to_head(engine)
        with engine.connect() as c:
            indexes = c.execute(
                text("SELECT id, owner_key, scope, channel_id FROM knowledge_index ORDER BY id")
            ).all()
            jobs = c.execute(text("SELECT id, state FROM indexing_job ORDER BY id")).all()
        assert [tuple(i) for i in indexes] == [
            (1, "channel:1", "channel", 1),
            (2, "channel:1:extra-2", "channel", 1),
        ]
        assert [tuple(j) for j in jobs] == [(1, "queued"), (2, "cancelled")]
    finally:
        engine.dispose()


def test_chunks_written_before_their_offsets_get_those_the_overlap_gives(database: Database) -> None:
    """0012 records where each chunk starts; for chunks already stored it reads the overlap
    from their text once (as it was read at every question before), so they read the same."""
    section = ["Pass a timeout.\n    get(url,", "get(url,\n        timeout=5)", "Then retry."]
    chunks = [NewChunk(n, "Guide > Timeouts", text, start=None) for n, text in enumerate(section)]
    chunks.append(NewChunk(3, "Guide > Retries", "Retry twice.", start=None))
    documents = DocumentRepository(database)
    document = _stored(database, documents, "guide.md", chunks)
    config = alembic_config(database.engine)
    command.downgrade(config, "0013")
    command.upgrade(config, "head")  # 0012, then the revisions after it
    found = documents.chunks_in([(document.id, 0, 3)])
    assert [c.start for c in found] == [0, 20, 47, 58], "another section's chunk repeats nothing"
    first, second = found[0], found[1]
    assert second.text.startswith(first.text[second.start - first.start :]), "the second repeats 'get(url,'"


def test_units_recorded_before_their_offsets_are_cleared_once_for_the_repair(database: Database) -> None:
    """0025 clears units recorded in the form before offsets (a JSON list), keeps those of the
    current form, so the repair at start finds the others through `units IS NULL` alone."""
    chunks = [NewChunk(n, "Guide", f"Passage {n}.", start=n * 12) for n in range(3)]
    documents = DocumentRepository(database)
    document = _stored(database, documents, "units.md", chunks)
    config = alembic_config(database.engine)
    command.downgrade(config, "0024")
    first, second, third = documents.chunks_in([(document.id, 0, 2)])
    current = '{"form":2,"units":[]}'
    documents.record_units([(first.id, '[["Passage 0.","sentence",1,"","",false]]'), (second.id, current)])
    command.upgrade(config, "head")
    assert [c.units for c in documents.chunks_in([(document.id, 0, 2)])] == [None, current, None]
    assert [c.id for c in documents.without_units(10)] == [first.id, second.id, third.id], (
        "the document's chunks, for the repair to read whole"
    )


def _stored(
    database: Database, documents: DocumentRepository, name: str, chunks: list[NewChunk]
) -> DocumentRef:
    """A ready Markdown document of a personal index, with `chunks`."""
    directory, indexes = Directory(database), IndexRepository(database)
    index = indexes.ensure_personal(directory.ensure_user("T1", "U1", "ada"), model="local:test", dimension=8)
    size = sum(len(c.text) for c in chunks)
    new = NewDocument(
        index_id=index.id,
        source_kind=SourceKind.FILE,
        source_key=name,
        name=name,
        mime_type="text/markdown",
        content_hash=name,
        size=size,
        characters=size,
    )
    document, _ = documents.create_pending(new, chunks)
    documents.mark_ready(document.id)
    return document
