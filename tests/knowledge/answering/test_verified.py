"""Verified answers as the engine finds them: by the meaning of the question, only in the
indexes searched, not for a question that says the opposite, and never once expired or once
a document they rest on changed (set aside for review then); the answer carries the match
whether or not the documents' answer was cached before it was verified."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from knowledge.answering.verified import CHANGED, EXPIRED, VerifiedAnswers
from knowledge.engine import Knowledge, Request
from storage.document_access import AccessFilter, DocumentAccess
from storage.records import IndexRef
from storage.repositories.directory import Directory
from storage.repositories.documents import DocumentRepository
from storage.repositories.verified import VerifiedEntry, VerifiedRepository
from tests.knowledge.conftest import HANDBOOK, Stack, md

QUESTION = "How do I run code before each request in Flask?"


async def keep(
    stack: Stack, verified: VerifiedAnswers, index: IndexRef, question: str, answer: str, **extra: object
) -> int:
    user = Directory(stack.db).ensure_user(index.tenant_id, "UEXPERT", "dana")
    entry = VerifiedEntry(
        tenant_id=index.tenant_id,
        index_id=index.id,
        source_key=f"test:{question}",
        question=question,
        answer=answer,
        question_vector=await verified.vector(question),
        embedding_model=verified.model_id,
        answered_by="dana",
        verified_by=user.id,
        **extra,  # type: ignore[arg-type]
    )
    return VerifiedRepository(stack.db).save(entry).id


async def test_a_reworded_question_finds_its_verified_answer_and_nothing_else_does(stack: Stack) -> None:
    verified = VerifiedAnswers(VerifiedRepository(stack.db), stack.embedder)
    index, elsewhere = stack.index("eng"), stack.index("sales")
    await keep(stack, verified, index, QUESTION, "Register a function with @app.before_request.")
    await keep(stack, verified, elsewhere, "How do I book a demo?", "Use the demo form.")
    found = await verified.match([index], "What's the way to execute a hook ahead of every Flask request?")
    assert found is not None and found.answer.startswith("Register") and found.verified_by == "dana"
    assert await verified.match([index], "How do I run code after each request in Flask?") is None, (
        "the opposite"
    )
    assert await verified.match([index], "How do I bake sourdough bread?") is None
    assert await verified.match([elsewhere], QUESTION) is None, "only the indexes searched"


async def test_an_expired_or_stale_verified_answer_is_set_aside(stack: Stack) -> None:
    repository = VerifiedRepository(stack.db)
    verified = VerifiedAnswers(repository, stack.embedder)
    index = stack.index()
    result = await stack.ingestor.add(index, md("handbook.md", HANDBOOK))
    document = result.document
    soon = datetime.now(UTC) + timedelta(days=1)
    first = await keep(stack, verified, index, QUESTION, "before_request.", review_at=soon)
    assert await verified.match([index], QUESTION) is not None
    assert await verified.match([index], QUESTION, now=soon + timedelta(seconds=1)) is None
    assert repository.get(first, index.tenant_id).flagged == EXPIRED
    assert await verified.match([index], QUESTION) is None, "set aside until verified again"

    cited = [{"document_id": document.id, "content_hash": document.content_hash}]
    rollback = "How long does a rollback take?"
    second = await keep(stack, verified, index, rollback, "About two minutes.", cited=cited)
    assert await verified.match([stack.fresh(index)], rollback) is not None
    other = stack.index("other")
    assert await verified.match([other], rollback) is None
    await stack.ingestor.add(index, md("handbook.md", HANDBOOK.replace("two minutes", "ten minutes")))
    assert await verified.match([stack.fresh(index)], rollback) is None
    assert repository.get(second, index.tenant_id).flagged == CHANGED


async def test_the_answer_carries_a_verified_answer_kept_after_it_was_cached(stack: Stack) -> None:
    verified = VerifiedAnswers(VerifiedRepository(stack.db), stack.embedder)
    index = stack.index()
    await stack.ingestor.add(index, md("handbook.md", HANDBOOK))
    knowledge = Knowledge(stack.retriever, None, window=16_000, verified=verified)
    request = Request([stack.fresh(index)], [{"role": "user", "content": "How long does a rollback take?"}])
    assert (await knowledge.ask(request)).verified is None
    await keep(stack, verified, index, "How long does a rollback take?", "Two minutes, by the runbook.")
    answer = await knowledge.ask(request)
    assert answer.verified is not None and answer.verified.answer == "Two minutes, by the runbook."
    assert answer.citations, "the documents' answer follows"
    assert answer.as_json()["verified"]["answer"] == "Two minutes, by the runbook."


async def test_a_verified_answer_resting_on_a_restricted_document_is_given_only_to_its_readers(
    stack: Stack,
) -> None:
    """Issue 38's rule for verified answers: one that rests on a document its source lets
    only some people read is never given where that document may not be read (a channel, or
    a reader outside the group), and is not set aside for review for it either."""
    repository = VerifiedRepository(stack.db)
    verified = VerifiedAnswers(repository, stack.embedder)
    index = stack.index()
    document = (await stack.ingestor.add(index, md("handbook.md", HANDBOOK))).document
    cited = [{"document_id": document.id, "content_hash": document.content_hash}]
    rollback = "How long does a rollback take?"
    kept = await keep(stack, verified, index, rollback, "About two minutes.", cited=cited)
    assert await verified.match([stack.fresh(index)], rollback) is not None, "public: anyone"

    finance = f"{index.tenant_id}:group:finance"
    DocumentRepository(stack.db).set_access({document.id: DocumentAccess.restricted({finance})})
    assert await verified.match([stack.fresh(index)], rollback) is None, "a channel reads public only"
    outsider = AccessFilter(frozenset({f"{index.tenant_id}:user:bob"}))
    assert await verified.match([stack.fresh(index)], rollback, access=outsider) is None
    member = AccessFilter(frozenset({finance}))
    found = await verified.match([stack.fresh(index)], rollback, access=member)
    assert found is not None and found.answer == "About two minutes."
    assert repository.get(kept, index.tenant_id).flagged is None, "withheld, not stale"
