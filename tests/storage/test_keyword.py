"""Keyword search in SQL (SQLite FTS5 and PostgreSQL tsvector, through the `database`
fixture): function words in a question do not decide what it matches."""

from __future__ import annotations

from storage.db import Database
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
    if database.dialect == "sqlite":  # PostgreSQL ranks every match
        pruned = KeywordIndex(database, max_postings=3).search([index.id], question, 10)
        assert [h.chunk_id for h in pruned] == [ids[-1]], "“service” (7 chunks) is left out"


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
