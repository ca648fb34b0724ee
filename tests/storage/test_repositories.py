"""Repositories against real SQL: SQLite and PostgreSQL (the `database` fixture runs both)."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from storage.db import Database
from storage.records import NameTaken, NewChunk, NewDocument, NotFound
from storage.repositories.directory import Directory
from storage.repositories.documents import DocumentRepository
from storage.repositories.indexes import IndexRepository
from storage.values import DocumentStatus, ResponseMode, Scope, SourceKind, Strategy

MODEL, DIM = "local:test", 8


def new_doc(index_id: int, key: str = "notes.md", digest: str = "h1", **extra: object) -> NewDocument:
    return NewDocument(
        index_id=index_id,
        source_kind=SourceKind.FILE,
        source_key=key,
        name=key,
        mime_type="text/markdown",
        content_hash=digest,
        size=100,
        characters=90,
        **extra,  # type: ignore[arg-type]
    )


def chunks(n: int) -> list[NewChunk]:
    return [NewChunk(position=i, heading="H", text=f"chunk {i}") for i in range(n)]


def test_users_and_channels_are_found_or_created_and_refreshed(database: Database) -> None:
    directory = Directory(database)
    first = directory.ensure_user("T1", "U1", "ada")
    again = directory.ensure_user("T1", "U1", "ada lovelace", is_admin=True)
    assert again.id == first.id and again.name == "ada lovelace" and again.is_admin
    assert directory.ensure_user("T2", "U1").id != first.id  # tenants never share rows
    channel = directory.ensure_channel("T1", "C1", "general", is_private=False)
    assert directory.ensure_channel("T1", "C1").name == "general"  # unnamed sighting keeps the name
    conversation = directory.channel_conversation(channel)
    assert directory.channel_conversation(channel).id == conversation.id
    dm = directory.dm_conversation(first)
    assert dm.id != conversation.id and dm.user_id == first.id
    updated = directory.set_conversation_options(dm.id, response_mode=ResponseMode.RAG_ONLY)
    assert (
        updated.response_mode is ResponseMode.RAG_ONLY and directory.conversation(dm.id).rag_strategy is None
    )
    directory.set_conversation_options(dm.id, rag_strategy=Strategy.SMART)
    assert directory.conversation(dm.id).rag_strategy is Strategy.SMART


def test_a_stored_choice_this_version_does_not_know_reads_as_none(database: Database) -> None:
    directory = Directory(database)
    dm = directory.dm_conversation(directory.ensure_user("T1", "U1", "ada"))
    directory.set_conversation_options(dm.id, response_mode=ResponseMode.HYBRID, rag_strategy=Strategy.SMART)
    with database.session() as session:  # as another version of Lore may have left them
        session.execute(
            text(
                "UPDATE conversation SET response_mode = 'OLD_MODE', rag_strategy = 'psychic' WHERE id = :id"
            ),
            {"id": dm.id},
        )
    found = directory.conversation(dm.id)
    assert found.response_mode is None and found.rag_strategy is None


def test_personal_and_channel_indexes_are_created_once(database: Database) -> None:
    directory, indexes = Directory(database), IndexRepository(database)
    user = directory.ensure_user("T1", "U1", "ada")
    channel = directory.ensure_channel("T1", "C9", "eng-secret", is_private=True)
    personal = indexes.ensure_personal(user, model=MODEL, dimension=DIM)
    assert indexes.ensure_personal(user, model=MODEL, dimension=DIM).id == personal.id
    assert personal.scope == Scope.PERSONAL and personal.owner_user_id == user.id
    chan = indexes.ensure_channel(channel, model=MODEL, dimension=DIM)
    assert chan.name == "eng-secret" and chan.channel_is_private
    assert indexes.get(chan.id).facts.channel_is_private
    assert {i.id for i in indexes.list_for_tenant("T1")} == {personal.id, chan.id}
    assert indexes.list_for_tenant("T2") == []


def test_index_names_are_unique_per_owner(database: Database) -> None:
    directory, indexes = Directory(database), IndexRepository(database)
    directory.ensure_tenant("T1")
    indexes.create("T1", "handbook", Scope.SHARED, embedding_model=MODEL, embedding_dimension=DIM)
    with pytest.raises(NameTaken):
        indexes.create("T1", "handbook", Scope.SHARED, embedding_model=MODEL, embedding_dimension=DIM)
    user = directory.ensure_user("T1", "U1")
    mine = indexes.create(
        "T1",
        "handbook",
        Scope.PERSONAL,
        embedding_model=MODEL,
        embedding_dimension=DIM,
        owner_user_id=user.id,
    )
    assert mine.name == "handbook"


def test_enabled_indexes_keep_their_order_and_default(database: Database) -> None:
    directory, indexes = Directory(database), IndexRepository(database)
    user = directory.ensure_user("T1", "U1")
    dm = directory.dm_conversation(user)
    a, b, c = (
        indexes.create("T1", name, Scope.SHARED, embedding_model=MODEL, embedding_dimension=DIM)
        for name in ("a", "b", "c")
    )
    assert indexes.enable(dm.id, a.id) and indexes.enable(dm.id, b.id)
    assert not indexes.enable(dm.id, a.id)
    assert [i.name for i in indexes.enabled(dm.id)] == ["a", "b"]
    indexes.enable(dm.id, c.id, as_default=True)
    assert [i.name for i in indexes.enabled(dm.id)] == ["c", "a", "b"]
    indexes.enable(dm.id, b.id, as_default=True)
    assert [i.name for i in indexes.enabled(dm.id)] == ["b", "c", "a"]
    assert indexes.disable(dm.id, c.id) and not indexes.disable(dm.id, c.id)
    assert [i.name for i in indexes.enabled(dm.id)] == ["b", "a"]


def test_pending_documents_are_invisible_until_ready(database: Database) -> None:
    directory, indexes, docs = (
        Directory(database),
        IndexRepository(database),
        DocumentRepository(database),
    )
    directory.ensure_tenant("T1")
    index = indexes.create("T1", "x", Scope.SHARED, embedding_model=MODEL, embedding_dimension=DIM)
    doc, ids = docs.create_pending(new_doc(index.id, author="ada", meta={"k": "v"}), chunks(3))
    assert doc.status == DocumentStatus.PENDING and len(ids) == 3
    assert docs.find_ready_by_hash(index.id, "h1") is None
    assert docs.chunks(ids) == {}
    assert indexes.stats(index.id).documents == 0
    assert [d.id for d in docs.unfinished()] == [doc.id]
    assert docs.unfinished(source_config_id=999) == []  # another attachment's leftovers only
    version = indexes.get(index.id).content_version
    ready = docs.mark_ready(doc.id)
    assert ready.status == DocumentStatus.READY and ready.meta == {"k": "v"} and ready.author == "ada"
    assert indexes.get(index.id).content_version == version + 1
    assert docs.find_ready_by_hash(index.id, "h1") is not None
    found = docs.chunks(ids)
    assert [found[i].position for i in ids] == [0, 1, 2] and found[ids[0]].text == "chunk 0"
    stats = indexes.stats(index.id)
    assert (stats.documents, stats.chunks, stats.latest_document_name) == (1, 3, "notes.md")
    assert stats.latest_document_at is not None and stats.latest_document_at.tzinfo is not None


def test_chunks_are_read_by_span_of_positions_in_ready_documents(database: Database) -> None:
    Directory(database).ensure_tenant("T1")
    index = IndexRepository(database).create(
        "T1", "x", Scope.SHARED, embedding_model=MODEL, embedding_dimension=DIM
    )
    docs = DocumentRepository(database)
    first, _ = docs.create_pending(new_doc(index.id, key="a.md", digest="a"), chunks(5))
    second, _ = docs.create_pending(new_doc(index.id, key="b.md", digest="b"), chunks(3))
    pending, _ = docs.create_pending(new_doc(index.id, key="c.md", digest="c"), chunks(3))
    docs.mark_ready(first.id)
    docs.mark_ready(second.id)
    found = docs.chunks_in([(second.id, 1, 2), (first.id, 1, 3), (pending.id, 0, 2), (first.id, 9, 9)])
    assert [(c.document_id, c.position, c.text) for c in found] == [
        (first.id, 1, "chunk 1"),
        (first.id, 2, "chunk 2"),
        (first.id, 3, "chunk 3"),
        (second.id, 1, "chunk 1"),
        (second.id, 2, "chunk 2"),
    ], "in order of document and position; none of a document not ready, none past the end"
    assert docs.chunks_in([]) == []


def test_chunks_without_units_are_found_by_whole_ready_documents_and_get_them(database: Database) -> None:
    """Chunks stored before revision 0022 have no units: they are read by whole documents
    (units are read with the chunks before them), ready ones only, and stored in one write."""
    Directory(database).ensure_tenant("T1")
    index = IndexRepository(database).create(
        "T1", "x", Scope.SHARED, embedding_model=MODEL, embedding_dimension=DIM
    )
    docs = DocumentRepository(database)
    old, old_ids = docs.create_pending(new_doc(index.id, key="a.md", digest="a"), chunks(3))
    recorded, _ = docs.create_pending(
        new_doc(index.id, key="b.md", digest="b"), [NewChunk(0, "H", "chunk 0", 0, "[]")]
    )
    pending, _ = docs.create_pending(new_doc(index.id, key="c.md", digest="c"), chunks(2))
    for document in (old, recorded):
        docs.mark_ready(document.id)
    docs.record_units([(old_ids[0], "[]")])  # one of its chunks has them already
    found = docs.without_units(10)
    assert [(c.document_id, c.position, c.units) for c in found] == [
        (old.id, 0, "[]"),
        (old.id, 1, None),
        (old.id, 2, None),
    ], "the whole document, in order; neither the recorded one nor the pending one"
    docs.record_units([(c.id, f'[["{c.text}","sentence",1,"","",false]]') for c in found])
    assert docs.without_units(10) == []
    (again,) = docs.chunks_in([(old.id, 2, 2)])
    assert again.units == '[["chunk 2","sentence",1,"","",false]]'
    assert pending.id not in {c.document_id for c in docs.without_units(10)}


def test_a_new_version_replaces_the_old_in_one_step(database: Database) -> None:
    directory, indexes, docs = (
        Directory(database),
        IndexRepository(database),
        DocumentRepository(database),
    )
    directory.ensure_tenant("T1")
    index = indexes.create("T1", "x", Scope.SHARED, embedding_model=MODEL, embedding_dimension=DIM)
    old, old_ids = docs.create_pending(new_doc(index.id, digest="v1"), chunks(2))
    docs.mark_ready(old.id)
    new, _ = docs.create_pending(new_doc(index.id, digest="v2"), chunks(1))
    assert [d.id for d in docs.find_by_source(index.id, "notes.md")] == [old.id]
    docs.mark_ready(new.id, replaces=[old.id])
    assert [d.id for d in docs.find_by_source(index.id, "notes.md")] == [new.id]
    assert docs.chunks(old_ids) == {}  # out of search at once
    assert [d.id for d in docs.unfinished()] == [old.id]  # its vectors are still to delete
    docs.delete([old.id])
    assert docs.unfinished() == []
    with pytest.raises(NotFound):
        docs.get(old.id)


def test_listing_pages_and_deleting(database: Database) -> None:
    directory, indexes, docs = (
        Directory(database),
        IndexRepository(database),
        DocumentRepository(database),
    )
    directory.ensure_tenant("T1")
    index = indexes.create("T1", "x", Scope.SHARED, embedding_model=MODEL, embedding_dimension=DIM)
    made = []
    for n in range(5):
        doc, _ = docs.create_pending(new_doc(index.id, key=f"d{n}", digest=f"h{n}"), chunks(1))
        made.append(docs.mark_ready(doc.id).id)
    first = docs.list_ready(index.id, limit=2)
    rest = docs.list_ready(index.id, after_id=first[-1].id, limit=10)
    assert [d.id for d in first + rest] == made
    docs.delete(made[:2])
    assert [d.id for d in docs.list_ready(index.id)] == made[2:]
    assert set(docs.documents(made)) == set(made[2:])


def test_deleting_an_index_removes_everything_it_holds(database: Database) -> None:
    directory, indexes, docs = (
        Directory(database),
        IndexRepository(database),
        DocumentRepository(database),
    )
    user = directory.ensure_user("T1", "U1")
    dm = directory.dm_conversation(user)
    index = indexes.create("T1", "x", Scope.SHARED, embedding_model=MODEL, embedding_dimension=DIM)
    keep = indexes.create("T1", "y", Scope.SHARED, embedding_model=MODEL, embedding_dimension=DIM)
    indexes.enable(dm.id, index.id)
    indexes.enable(dm.id, keep.id)
    doc, ids = docs.create_pending(new_doc(index.id), chunks(2))
    docs.mark_ready(doc.id)
    indexes.delete(index.id)
    with pytest.raises(NotFound):
        indexes.get(index.id)
    assert docs.chunks(ids) == {}
    assert [i.id for i in indexes.enabled(dm.id)] == [keep.id]


@pytest.mark.postgres
def test_replicas_racing_on_a_new_channel_make_one_index_enabled_once(postgres_admin_url: str) -> None:
    """Eight processes' worth of connections meet a new channel at once, some knowing its
    name and some not: one channel index, enabled once, and nobody sees an error."""
    import threading

    from storage.db import open_database
    from tests.support.postgres import create_database, drop_database

    url = create_database(postgres_admin_url)
    databases = [open_database(url) for _ in range(8)]
    try:
        directory = Directory(databases[0])
        channel = directory.ensure_channel("T1", "CNEW")
        conversation = directory.channel_conversation(channel)
        barrier = threading.Barrier(len(databases))
        made: list[int] = []
        errors: list[BaseException] = []

        def meet(n: int, db: Database) -> None:
            named = channel if n % 2 else type(channel)(**{**channel.__dict__, "name": "launch"})
            indexes = IndexRepository(db)
            barrier.wait()
            try:
                index = indexes.ensure_channel(named, model=MODEL, dimension=DIM)
                indexes.enable(conversation.id, index.id, as_default=True)
                made.append(index.id)
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=meet, args=(n, db)) for n, db in enumerate(databases)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == [] and len(set(made)) == 1
        indexes = IndexRepository(databases[0])
        assert [i.id for i in indexes.enabled(conversation.id)] == made[:1]
        assert [i.id for i in indexes.list_for_tenant("T1") if i.scope == Scope.CHANNEL] == made[:1]
    finally:
        for db in databases:
            db.dispose()
        drop_database(postgres_admin_url, url)
