"""Document-level access in SQL (SQLite and PostgreSQL, through the `database` fixture) and
in Chroma's filter (embedded and server): the rule of clauses, keyword search that leaves
unreadable documents out inside its own query (so they never take a readable one's place),
listings and counts under the same rule, and the dense search's filter."""

from __future__ import annotations

from chromadb.api import ClientAPI

from knowledge.search.readable import dense_filter
from storage.db import Database
from storage.document_access import PUBLIC_ONLY, AccessFilter, DocumentAccess, simplified
from storage.keyword import KeywordIndex
from storage.records import IndexRef, NewChunk
from storage.repositories.directory import Directory
from storage.repositories.documents import DocumentRepository
from storage.repositories.indexes import IndexRepository
from storage.values import Scope
from storage.vectors import ChromaVectorStore, CollectionRef, VectorRecord
from tests.storage.test_repositories import DIM, MODEL, new_doc

FINANCE = "7:group:finance"
ADA = "7:user:ada"
STAFF = "7:group:staff"


def test_a_reader_needs_one_principal_of_every_clause() -> None:
    payroll = DocumentAccess.restricted({STAFF}, {FINANCE, ADA})
    assert payroll.count == 2 and not payroll.is_public
    assert payroll.readable_by({STAFF, ADA}) and payroll.readable_by({STAFF, FINANCE})
    assert not payroll.readable_by({FINANCE, ADA}) and not payroll.readable_by({STAFF})
    assert DocumentAccess.restricted({STAFF}, set()).unknown  # a clause no one meets: nobody
    assert not DocumentAccess.nobody().readable_by({STAFF, FINANCE, ADA})
    assert DocumentAccess.public().readable_by(set())
    # A clause that holds all of another's principals adds nothing.
    assert simplified((frozenset({STAFF, FINANCE}), frozenset({FINANCE}))) == (frozenset({FINANCE}),)


def documents_in(
    database: Database, accesses: list[tuple[str, DocumentAccess]]
) -> tuple[IndexRef, list[int]]:
    """A fresh index with one ready document per (text, access); their ids in order."""
    Directory(database).ensure_tenant("T1")
    index = IndexRepository(database).create(
        "T1", "acl", Scope.SHARED, embedding_model=MODEL, embedding_dimension=DIM
    )
    repository = DocumentRepository(database)
    ids = []
    for n, (text, access) in enumerate(accesses):
        document, _ = repository.create_pending(
            new_doc(index.id, key=f"d{n}.md", digest=f"h{n}", access=access),
            [NewChunk(position=0, heading="", text=text)],
        )
        repository.mark_ready(document.id)
        ids.append(document.id)
    return index, ids


def test_keyword_search_leaves_unreadable_documents_out_inside_the_query(database: Database) -> None:
    restricted = DocumentAccess.restricted({FINANCE})
    accesses = [(f"payroll payroll payroll run number {n}", restricted) for n in range(30)]
    accesses += [
        ("the payroll calendar is public", DocumentAccess.public()),
        ("payroll for staff and finance", DocumentAccess.restricted({STAFF}, {FINANCE})),
        ("payroll of a page whose sync failed", DocumentAccess.nobody()),
    ]
    index, ids = documents_in(database, accesses)
    repository = DocumentRepository(database)
    chunk_of = {c.document_id: c.id for c in repository.chunks_in([(i, 0, 0) for i in ids])}
    keyword = KeywordIndex(database)

    def found(access: AccessFilter, k: int = 3, *, by_id: bool = False) -> set[int]:
        unreadable = repository.unreadable_in([index.id], access) if by_id else None
        hits = keyword.search([index.id], "payroll", k, access=access, unreadable=unreadable)
        return {next(d for d, c in chunk_of.items() if c == h.chunk_id) for h in hits}

    for by_id in (False, True):  # by the clauses, or by the reader's unreadable set: the same
        # Thirty restricted documents rank above the public one, yet a public-only search of
        # 3 finds it: they were never candidates.
        assert found(PUBLIC_ONLY, by_id=by_id) == {ids[30]}
        assert found(AccessFilter(frozenset({FINANCE})), k=40, by_id=by_id) == set(ids[:31])
        assert found(AccessFilter(frozenset({FINANCE})), k=3, by_id=by_id) <= set(ids[:31])
        assert found(AccessFilter(frozenset({FINANCE, STAFF})), k=40, by_id=by_id) == set(ids[:32])
        assert ids[32] not in found(AccessFilter(frozenset({FINANCE, STAFF, ADA})), k=40, by_id=by_id)


def test_listings_counts_and_the_dense_filter_follow_the_same_rule(database: Database) -> None:
    index, ids = documents_in(
        database,
        [
            ("open", DocumentAccess.public()),
            ("finance", DocumentAccess.restricted({FINANCE})),
            ("two clauses", DocumentAccess.restricted({STAFF}, {FINANCE, ADA})),
            ("failed", DocumentAccess.nobody()),
        ],
    )
    repository, indexes = DocumentRepository(database), IndexRepository(database)
    ada = AccessFilter(frozenset({STAFF, ADA}))
    assert [d.id for d in repository.list_ready(index.id)] == [ids[0]]
    assert [d.id for d in repository.list_ready(index.id, access=ada)] == [ids[0], ids[2]]
    assert len(repository.list_ready(index.id, access=None)) == 4
    assert indexes.stats(index.id).documents == 1 and indexes.stats(index.id, ada).documents == 2
    assert indexes.stats(index.id, None).documents == 4
    assert indexes.stats(index.id).latest_document_name == "d0.md"  # never a restricted title
    assert repository.unreadable_in([index.id], PUBLIC_ONLY) == ids[1:]
    assert sorted(repository.unreadable_in([index.id], ada)) == [ids[1], ids[3]]
    assert repository.readable(ids, ada) == {ids[0], ids[2]}
    assert set(repository.chunks([c.id for c in repository.chunks_in([(i, 0, 0) for i in ids])], ada)) == {
        c.id for c in repository.chunks_in([(ids[0], 0, 0), (ids[2], 0, 0)])
    }
    assert [d.id for d in repository.recent([index.id], access=ada)] == [ids[2], ids[0]]


def test_changing_access_is_recorded_once_and_counts_as_new_content(database: Database) -> None:
    index, ids = documents_in(database, [("open", DocumentAccess.public())])
    repository, indexes = DocumentRepository(database), IndexRepository(database)
    version = indexes.get(index.id).content_version
    finance = DocumentAccess.restricted({FINANCE})
    assert repository.set_access({ids[0]: finance}) == [ids[0]]
    assert repository.access(ids[0]) == finance and repository.get(ids[0]).restricted
    assert indexes.get(index.id).content_version > version  # cached answers are not reused
    assert repository.set_access({ids[0]: finance}) == []  # unchanged: nothing written
    assert repository.set_access({ids[0]: DocumentAccess.nobody()}) == [ids[0]]
    assert repository.access(ids[0]).unknown
    repository.delete(ids)  # its access rows go with it (no foreign key left dangling)
    assert repository.documents(ids) == {}


def test_a_public_document_never_stands_in_for_a_restricted_one(database: Database) -> None:
    index, ids = documents_in(database, [("same words", DocumentAccess.restricted({FINANCE}))])
    repository = DocumentRepository(database)
    digest = repository.get(ids[0]).content_hash
    assert repository.find_ready_by_hash(index.id, digest) is None  # an upload of the same text: new
    assert repository.find_ready_by_hash(index.id, digest, source_key="d0.md") is not None


def test_the_dense_filter_leaves_unreadable_documents_out_in_chroma(chroma_client: ClientAPI) -> None:
    store = ChromaVectorStore(chroma_client)
    ref = CollectionRef("T1", 1, "m", 3)
    store.add(
        ref,
        [
            VectorRecord(n, [1.0, 0.1 * n, 0.0], f"chunk {n}", {"document_id": n // 2, "position": n % 2})
            for n in range(10)
        ],
    )
    assert dense_filter(None, []) is None  # nothing restricted: no filter at all
    where = dense_filter(None, [0, 1, 2])
    assert {h.metadata["document_id"] for h in store.query(ref, [1.0, 0.0, 0.0], 10, where)} == {3, 4}
    assert {h.id for h in store.query(ref, [1.0, 0.0, 0.0], 10, dense_filter([4], []))} == {8, 9}
