"""Hybrid retrieval over real SQL keyword search and real Chroma vectors."""

from __future__ import annotations

from knowledge.indexing.metadata import DocumentContext
from knowledge.search.retrieval import QueryType
from tests.knowledge.conftest import HANDBOOK, RECIPES, Stack, md


async def test_meaning_and_keywords_both_find_the_passage(stack: Stack) -> None:
    index = stack.index()
    await stack.ingestor.add(index, md("handbook.md", HANDBOOK))
    await stack.ingestor.add(index, md("kitchen.md", RECIPES))
    by_meaning = await stack.retriever.search(
        [index], "when do we ship new releases of the service?", query_type=QueryType.VECTOR
    )
    assert by_meaning.hits[0].document.name == "handbook.md"
    by_word = await stack.retriever.search([index], "sourdough", query_type=QueryType.KEYWORD)
    assert [h.document.name for h in by_word.hits] == ["kitchen.md"] and by_word.hits[0].similarity is None
    hybrid = await stack.retriever.search([index], "how long does a rollback take")
    top = hybrid.hits[0]
    assert top.document.name == "handbook.md" and "two minutes" in top.text
    assert top.similarity is not None and top.keyword_score is not None
    assert top.heading.startswith("Team handbook")
    assert hybrid.best_similarity is not None and hybrid.best_similarity > 0.3


async def test_several_indexes_merge_into_one_ranking(stack: Stack) -> None:
    ops, home = stack.index("ops"), stack.index("home")
    await stack.ingestor.add(ops, md("handbook.md", HANDBOOK))
    await stack.ingestor.add(home, md("kitchen.md", RECIPES))
    result = await stack.retriever.search(
        [ops, home], "what happens on Tuesday, and the evening before baking?"
    )
    assert {h.index.name for h in result.hits} == {"ops", "home"}
    assert [h.score for h in result.hits] == sorted((h.score for h in result.hits), reverse=True)
    only_ops = await stack.retriever.search([ops], "bake bread with a starter")
    assert {h.index.name for h in only_ops.hits} <= {"ops"}


async def test_metadata_filters(stack: Stack) -> None:
    index = stack.index()
    await stack.ingestor.add(index, md("a.md", HANDBOOK, author="ada"))
    await stack.ingestor.add(index, md("b.md", HANDBOOK.replace("Tuesday", "Friday"), author="bob"))
    only_bob = await stack.retriever.search([index], "deploy day", where={"author": "bob"})
    assert {h.document.author for h in only_bob.hits} == {"bob"}
    either = await stack.retriever.search(
        [index], "deploy day", where={"$or": [{"author": "bob"}, {"name": "a.md"}]}
    )
    assert {h.document.name for h in either.hits} == {"a.md", "b.md"}
    nobody = await stack.retriever.search([index], "deploy day", where={"author": {"$in": ["carol"]}})
    assert nobody.hits == []


async def test_hierarchical_context_filter_with_fallback(stack: Stack) -> None:
    index = stack.index()

    def ctx(**kw: object) -> DocumentContext:
        return DocumentContext.from_mapping(kw)

    await stack.ingestor.add(
        index, md("policy.md", HANDBOOK, context=ctx(context_type=["policy"], relevance_tags=["oncall"]))
    )
    guide = "# Pager guide\n\nWhen the pager rings, acknowledge it, open an incident channel and page the rotation's backup."
    await stack.ingestor.add(
        index, md("guide.md", guide, context=ctx(context_type=["guide"], relevance_tags=["oncall", "deploy"]))
    )
    await stack.ingestor.add(index, md("other.md", RECIPES, context=ctx(content_domain=["kitchen"])))
    primary = await stack.retriever.search(
        [index], "pager rotation", context={"context_type": ["policy", "guide"], "relevance_tags": ["deploy"]}
    )
    names = [h.document.name for h in primary.hits]
    assert (
        set(names) == {"policy.md", "guide.md"} and names[0] == "guide.md"
    )  # more secondary matches rank higher
    fallback = await stack.retriever.search(
        [index], "pager rotation", context={"context_type": ["memo"], "relevance_tags": ["oncall"]}
    )
    assert {h.document.name for h in fallback.hits} == {"policy.md", "guide.md"}


async def test_per_document_cap_and_deduplication(stack: Stack) -> None:
    index = stack.index()
    long_doc = "# Notes\n\n" + "\n\n".join(
        f"## Part {i}\n\nThe pager rotation rule number {i} says escalate quickly." for i in range(12)
    )
    await stack.ingestor.add(index, md("long.md", long_doc))
    await stack.ingestor.add(index, md("copy.md", long_doc.replace("# Notes", "# Copy of notes")))
    result = await stack.retriever.search([index], "pager rotation escalate", top_k=10)
    per_doc: dict[str, int] = {}
    for hit in result.hits:
        per_doc[hit.document.name] = per_doc.get(hit.document.name, 0) + 1
    assert max(per_doc.values()) <= stack.retriever.spec.max_per_document
    texts = [" ".join(h.text.split()).lower() for h in result.hits]
    assert len(texts) == len(set(texts))


async def test_nothing_enabled_or_nothing_matching(stack: Stack) -> None:
    index = stack.index()
    assert (await stack.retriever.search([], "anything")).hits == []
    assert (await stack.retriever.search([index], "anything")).hits == []


async def test_restricted_documents_never_crowd_out_what_the_reader_may_read(stack: Stack) -> None:
    """Both searches leave unreadable documents out inside themselves: twenty restricted
    passages closer to the question than the one public passage, and a pool of five
    candidates, still find the public one for a reader who may read none of them."""
    from dataclasses import replace

    from storage.document_access import PUBLIC_ONLY, AccessFilter, DocumentAccess

    index = stack.index()
    finance = DocumentAccess.restricted({"7:group:finance"})
    for n in range(20):
        text = f"# Payroll run {n}\n\nThe payroll run {n} pays salaries on the last Friday of the month."
        await stack.ingestor.add(index, replace(md(f"payroll-{n}.md", text), access=finance))
    await stack.ingestor.add(
        index, md("calendar.md", "# Calendar\n\nSalaries are paid at the end of each month.")
    )
    question = "when does the payroll run pay salaries?"
    public = await stack.retriever.search([index], question, top_k=3, candidates=5, access=PUBLIC_ONLY)
    assert [h.document.name for h in public.hits] == ["calendar.md"]
    for query_type in (QueryType.VECTOR, QueryType.KEYWORD):
        alone = await stack.retriever.search([index], question, candidates=5, query_type=query_type)
        assert {h.document.name for h in alone.hits} <= {"calendar.md"}
    finance_reader = AccessFilter(frozenset({"7:group:finance"}))
    theirs = await stack.retriever.search([index], question, top_k=3, candidates=5, access=finance_reader)
    assert all(h.document.name.startswith("payroll-") for h in theirs.hits) and len(theirs.hits) == 3
    assert all(h.document.restricted for h in theirs.hits)


async def test_an_answer_given_with_one_readers_access_is_never_served_from_cache_to_another(
    stack: Stack,
) -> None:
    from dataclasses import replace

    from knowledge.engine import Request
    from storage.document_access import AccessFilter, DocumentAccess

    index = stack.index()
    secret = "# Payroll\n\nThe payroll run pays salaries on the last Friday of each month."
    await stack.ingestor.add(
        index, replace(md("payroll.md", secret), access=DocumentAccess.restricted({"7:group:finance"}))
    )
    knowledge = stack.knowledge()
    question = [{"role": "user", "content": "when does the payroll run pay salaries?"}]
    finance = await knowledge.ask(
        Request([index], question, access=AccessFilter(frozenset({"7:group:finance"})))
    )
    assert [c.name for c in finance.citations] == ["payroll.md"] and finance.restricted_documents
    anyone = await knowledge.ask(Request([index], question))
    assert anyone.citations == [] and "Friday" not in anyone.text and anyone.restricted_documents == []
