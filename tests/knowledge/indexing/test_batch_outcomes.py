"""A batch of documents: every one gets its own outcome, one bad document never stops or
hangs the rest (issue 16, items 1 and 2)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from knowledge.errors import IngestError, IngestFailed
from knowledge.indexing.ingest import IngestResult, Outcome, Source, content_hash
from knowledge.indexing.metadata import DocumentFacts
from tests.knowledge.conftest import HANDBOOK, RECIPES, Stack, md

LONE_SURROGATE_JSON = b'["\\uDFAA"]'
"""A JSON export cut in the middle of an emoji: a lone surrogate escape (10 bytes)."""


def good(i: int) -> Source:
    return md(f"doc{i}.md", f"# Doc {i}\n\n{RECIPES} Variation number {i}.")


async def test_a_lone_surrogate_in_json_neither_hangs_nor_stops_the_batch(stack: Stack) -> None:
    index = stack.index()
    cut = Source(name="cut.json", data=b'{"note": "sourdough starter \\uDFAA fed at night"}')
    sources = [good(0), cut, good(1)]
    seen: list[tuple[str, object]] = []
    results = await asyncio.wait_for(
        stack.ingestor.add_many(index, sources, lambda s, r: seen.append((s.name, r))), timeout=60
    )
    assert sorted(name for name, _ in seen) == ["cut.json", "doc0.md", "doc1.md"]
    assert all(isinstance(r, IngestResult) and r.outcome == Outcome.ADDED for r in results)
    assert stack.keyword.search([index.id], "starter night", 10), "the JSON document is searchable"


async def test_the_ten_byte_file_alone_is_added_with_a_replacement_character(stack: Stack) -> None:
    index = stack.index()
    results = await asyncio.wait_for(
        stack.ingestor.add_many(index, [Source(name="cut.json", data=LONE_SURROGATE_JSON)]), timeout=60
    )
    assert len(results) == 1 and isinstance(results[0], IngestResult)
    assert results[0].document.characters == len("[0]: \ufffd")


def test_the_content_hash_never_fails() -> None:
    assert content_hash("a \udfaa b") != content_hash("a b")


async def test_an_unexpected_error_on_one_document_is_its_outcome_and_the_rest_go_on(
    stack: Stack, caplog: pytest.LogCaptureFixture
) -> None:
    index = stack.index()
    broken = Source(name="broken.md", data=HANDBOOK.encode(), facts=DocumentFacts(path=(1,)))  # type: ignore[arg-type]
    sources = [good(0), broken, good(1), good(2)]
    results = await asyncio.wait_for(stack.ingestor.add_many(index, sources, batch_chunks=2), timeout=60)
    failures = [r for r in results if isinstance(r, IngestError)]
    assert len(results) == 4 and len(failures) == 1 and isinstance(failures[0], IngestFailed)
    assert failures[0].name == "broken.md" and "Lore's log" in str(failures[0])
    assert isinstance(failures[0].__cause__, TypeError)
    assert "unexpected error while adding broken.md" in caplog.text and "Traceback" in caplog.text
    assert len(stack.documents.list_ready(index.id)) == 3


async def test_a_document_that_breaks_its_batch_while_stored_fails_alone(stack: Stack) -> None:
    index = stack.index()
    unstorable = md("odd.md", HANDBOOK, extra={"when": object()})
    sources = [good(0), unstorable, good(1)]
    results = await asyncio.wait_for(stack.ingestor.add_many(index, sources, batch_chunks=10_000), timeout=60)
    failed = [r for r in results if isinstance(r, IngestError)]
    assert [f.name for f in failed] == ["odd.md"] and isinstance(failed[0], IngestFailed)
    assert sorted(d.name for d in stack.documents.list_ready(index.id)) == ["doc0.md", "doc1.md"]
    assert stack.documents.unfinished() == []


async def test_sources_that_fail_end_the_batch_with_their_error_after_storing_the_rest(stack: Stack) -> None:
    index = stack.index()

    def sources() -> Iterator[Source]:
        yield good(0)
        yield good(1)
        raise OSError("the disk went away")

    seen: list[str] = []
    with pytest.raises(OSError, match="disk went away"):
        await asyncio.wait_for(
            stack.ingestor.add_many(index, sources(), lambda s, r: seen.append(s.name)), timeout=60
        )
    assert sorted(seen) == ["doc0.md", "doc1.md"]
    assert len(stack.documents.list_ready(index.id)) == 2


async def test_attempt_returns_refusals_and_failures_instead_of_raising(stack: Stack) -> None:
    index = stack.index()
    refused = await stack.ingestor.attempt(index, md("blank.md", "  \n"))
    assert isinstance(refused, IngestError) and "no text" in refused.reason
    broken = Source(name="b.md", data=b"# x\n\nsome words here", facts=DocumentFacts(path=(1,)))  # type: ignore[arg-type]
    assert isinstance(await stack.ingestor.attempt(index, broken), IngestFailed)
    assert isinstance(await stack.ingestor.attempt(index, good(3)), IngestResult)
