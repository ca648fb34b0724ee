"""Keyword search in SQL (SQLite FTS5 and PostgreSQL tsvector, through the `database`
fixture): function words in a question do not decide what it matches."""

from __future__ import annotations

import pytest
from sqlalchemy import event

from storage.db import Database, open_database
from storage.keyword import KeywordIndex, query_terms, within_budget
from storage.records import IndexRef, NewChunk
from storage.repositories.directory import Directory
from storage.repositories.documents import DocumentRepository
from storage.repositories.indexes import IndexRepository
from storage.values import Scope
from tests.storage.test_repositories import DIM, MODEL, new_doc


def indexed(database: Database, texts: list[str]) -> tuple[IndexRef, list[int]]:
    """A fresh index holding one ready document of one chunk for each of `texts`, and the
    chunks' ids in order."""
    Directory(database).ensure_tenant("T1")
    index = IndexRepository(database).create(
        "T1", "kw", Scope.SHARED, embedding_model=MODEL, embedding_dimension=DIM
    )
    documents = DocumentRepository(database)
    ids = []
    for n, text in enumerate(texts):
        doc, chunk_ids = documents.create_pending(
            new_doc(index.id, key=f"d{n}.md", digest=f"h{n}"), [NewChunk(position=0, heading="", text=text)]
        )
        documents.mark_ready(doc.id)
        ids.extend(chunk_ids)
    return index, ids


def test_function_words_are_left_out_of_a_query_unless_it_has_nothing_else() -> None:
    assert query_terms("What is the plan for the deploy, and who owns it?") == ["plan", "deploy", "owns"]
    assert query_terms("Who is it?") == ["who", "is", "it"]
    assert query_terms("v2 of the API") == ["v2", "api"]


def test_a_single_letter_is_a_word_when_it_stands_alone() -> None:
    assert query_terms("what does flask's g object hold?") == ["flask", "g", "object", "hold"]
    assert query_terms("e.g. a C extension, i.e. the R one") == ["c", "extension", "r", "one"]
    assert query_terms("the user's data") == ["user", "data"] and query_terms("don't retry") == [
        "don",
        "retry",
    ]


def test_a_question_finds_a_one_letter_name(database: Database) -> None:
    texts = [
        "Use g to store data during a request, such as the database connection.",
        "Sessions store data.",
        "Blueprints group views.",
        "Templates render pages.",
    ]
    index, ids = indexed(database, texts)
    hits = KeywordIndex(database).search([index.id], "where does g store data?", 10)
    assert [h.chunk_id for h in hits] == [ids[0], ids[1]], "the shorter passage without `g` comes second"


def test_a_question_matches_on_its_content_words_only(database: Database) -> None:
    texts = [
        "The rollback plan is to redeploy the previous image.",
        "It is what it is, and that is all there is to it.",
        "Who is on call this week? The platform team is.",
    ]
    index, ids = indexed(database, texts)

    hits = KeywordIndex(database).search([index.id], "What is the rollback plan?", 10)
    assert [h.chunk_id for h in hits] == [ids[0]], "“what is the” matches nothing by itself"
    hits = KeywordIndex(database).search([index.id], "who is on call this week?", 10)
    assert [h.chunk_id for h in hits] == [ids[2]]


def test_the_commonest_terms_are_left_out_beyond_the_postings_budget() -> None:
    assert within_budget(["deploy", "plan", "rollback"], [40, 5, 30], budget=100) == [
        "deploy",
        "plan",
        "rollback",
    ]
    assert within_budget(["deploy", "plan", "rollback"], [40, 5, 30], budget=50) == ["plan", "rollback"]
    assert within_budget(["deploy", "plan"], [400, 500], budget=50) == ["deploy"], "the rarest is kept"
    assert within_budget(["zzz", "plan"], [0, 5], budget=50) == ["plan"], "a term nothing holds adds nothing"
    assert within_budget(["zzz"], [0], budget=50) == ["zzz"]


def test_a_common_term_beyond_the_budget_does_not_widen_the_matches(database: Database) -> None:
    texts = [f"Service number {n} logs its requests." for n in range(6)] + [
        "The billing service retries a failed invoice every night."
    ]
    index, ids = indexed(database, texts)
    question = "which service retries an invoice?"

    everything = KeywordIndex(database).search([index.id], question, 10)
    assert len(everything) == 7 and everything[0].chunk_id == ids[-1]
    pruned = KeywordIndex(database, max_postings=3).search([index.id], question, 10)
    assert [h.chunk_id for h in pruned] == [ids[-1]], "“service” (7 chunks) is left out"


def test_a_question_of_common_words_reads_a_bounded_number_of_chunks(database: Database) -> None:
    """Every word of the question beyond the budget: on PostgreSQL the chunks holding the
    most of them are read (no more than its cap), so the one holding all comes first.
    (SQLite's FTS5 ranks the rarest word's matches, as `within_budget` says.)"""
    if database.dialect == "sqlite":
        pytest.skip("FTS5 keeps the rarest word, whatever its postings")
    from storage import keyword_postgres

    texts = [f"The deploy of service {n}." for n in range(30)] + [f"Service {n} finished." for n in range(10)]
    index, ids = indexed(database, [*texts, "The service deploy finished."])
    keyword = KeywordIndex(database, max_postings=5)
    statements: list[str] = []
    event.listen(database.engine, "before_cursor_execute", lambda *a: statements.append(a[2]))
    hits = keyword.search([index.id], "did the service deploy finish?", 10)
    assert hits[0].chunk_id == ids[-1] and len(hits) == 10
    assert any("AS levels LIMIT" in s for s in statements), "the conjunctive reading ran"
    assert keyword_postgres.CONJUNCTIVE_ROWS < 10_000


def test_restricted_chunks_never_take_the_bounded_reading_of_common_words(database: Database) -> None:
    """Every word common and a restricted document whose chunks hold all of them, more of
    them than the conjunctive reading's cap: a reader who may not read it still gets the
    readable chunks (the access condition is checked before the cut, not after it), and a
    reader who may read it gets its chunks first."""
    if database.dialect == "sqlite":
        pytest.skip("FTS5 ranks the rarest word's matches whole (no conjunctive reading)")
    from storage import keyword_postgres
    from storage.document_access import AccessFilter, DocumentAccess

    restricted = keyword_postgres.CONJUNCTIVE_ROWS + 50
    index, readable = indexed(database, [f"Service {n} deploy." for n in range(5)])
    documents = DocumentRepository(database)
    secret, hidden = documents.create_pending(
        new_doc(
            index.id,
            key="secret.md",
            digest="secret",
            access=DocumentAccess.restricted({"7:group:finance"}),
        ),
        [
            NewChunk(position=n, heading="", text=f"The deploy of service {n} finished.")
            for n in range(restricted)
        ],
    )
    documents.mark_ready(secret.id)
    keyword = KeywordIndex(database, max_postings=5)
    question = "did the service deploy finish?"

    statements: list[str] = []
    event.listen(database.engine, "before_cursor_execute", lambda *a: statements.append(a[2]))
    public = keyword.search([index.id], question, 10)
    assert any("AS levels LIMIT" in s for s in statements), "the conjunctive reading ran"
    assert sorted(h.chunk_id for h in public) == readable
    finance = keyword.search([index.id], question, 10, access=AccessFilter(frozenset({"7:group:finance"})))
    assert len(finance) == 10 and {h.chunk_id for h in finance} <= set(hidden)
    known = keyword.search(  # the same rule given as the ids the reader may not read
        [index.id], question, 10, access=AccessFilter(frozenset({"U1"})), unreadable=[secret.id]
    )
    assert sorted(h.chunk_id for h in known) == readable


def test_a_rare_word_outweighs_common_ones(database: Database) -> None:
    """Ranked by rarity (bm25 on SQLite, BM25 computed in SQL on PostgreSQL): one rare word
    matched beats two common ones, where `ts_rank_cd` weighed every word alike."""
    texts = [f"Service {n} writes logs of every request it serves." for n in range(8)] + [
        "An invoice is retried at night."
    ]
    index, ids = indexed(database, texts)
    hits = KeywordIndex(database).search([index.id], "service logs for the failed invoice", 10)
    assert hits[0].chunk_id == ids[-1] and len(hits) == 9
    assert hits[0].score > 2 * hits[1].score


def test_keyword_search_reads_only_the_indexes_asked_for(database: Database) -> None:
    mine, mine_ids = indexed(database, ["The canary deploy is rolled back on errors."])
    others = IndexRepository(database).create(
        "T1", "other", Scope.SHARED, embedding_model=MODEL, embedding_dimension=DIM
    )
    documents = DocumentRepository(database)
    doc, _ = documents.create_pending(
        new_doc(others.id, key="o.md", digest="o"), [NewChunk(0, "", "The canary deploy of another team.")]
    )
    documents.mark_ready(doc.id)
    keyword = KeywordIndex(database)
    assert [h.chunk_id for h in keyword.search([mine.id], "canary deploy", 10)] == mine_ids
    assert len(keyword.search([mine.id, others.id], "canary deploy", 10)) == 2
    documents.create_pending(new_doc(mine.id, key="p.md", digest="p"), [NewChunk(0, "", "canary")])
    assert [h.chunk_id for h in keyword.search([mine.id], "canary", 10)] == mine_ids  # never a pending one
    documents.close()


@pytest.mark.postgres
def test_postgres_frequencies_come_from_statistics_not_from_counting_the_table(
    postgres_admin_url: str,
) -> None:
    """Once the table is analysed, neither a search nor the second stage's frequencies
    count the chunk table: common words' frequencies come from `pg_stats`, the others' from
    the GIN index, counted no further than the rarest common word's."""
    from tests.support.postgres import create_database, drop_database

    url = create_database(postgres_admin_url)
    database = open_database(url)
    try:
        texts = [f"The deploy {n} of service {n % 3} finished." for n in range(300)] + ["A rare zebra."]
        index, ids = indexed(database, texts)
        with database.engine.begin() as connection:
            connection.exec_driver_sql("ANALYZE chunk")
        statements: list[str] = []
        event.listen(database.engine, "before_cursor_execute", lambda *a: statements.append(a[2]))
        keyword = KeywordIndex(database)
        counts, total = keyword.frequencies(["deploy", "zebra", "finished", "unicorn", "the"])
        assert counts[0] == pytest.approx(300, rel=0.1) and counts[1:4] == [1, 300, 0] and counts[4] == 0
        assert total == pytest.approx(301, rel=0.1)
        assert keyword.search([index.id], "zebra deploy", 10)[0].chunk_id == ids[-1]
        unbounded = [s for s in statements if "count(*) FROM chunk" in s and "LIMIT" not in s]
        assert statements and unbounded == []
    finally:
        database.dispose()
        drop_database(postgres_admin_url, url)


def test_frequencies_of_a_pasted_log_of_words_are_counted_in_batches(database: Database) -> None:
    Directory(database).ensure_tenant("T1")
    index = IndexRepository(database).create(
        "T1", "kw", Scope.SHARED, embedding_model=MODEL, embedding_dimension=DIM
    )
    documents = DocumentRepository(database)
    doc, _ = documents.create_pending(
        new_doc(index.id, key="d.md", digest="h"),
        [NewChunk(position=0, heading="", text="The billing service retries a failed invoice.")],
    )
    documents.mark_ready(doc.id)
    words = [f"word{n}" for n in range(1200)] + ["invoice", "billing"]  # SQLite's UNION stops at 500
    counts, total = KeywordIndex(database).frequencies(words)
    assert total == 1 and len(counts) == 1202
    assert counts[-2:] == [1, 1] and not any(counts[:-2])
