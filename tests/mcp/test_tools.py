"""The MCP tools and resources as the local user gets them (`lore mcp`'s principal, in-process
through the SDK's client): answers with citations, documents read back whole from their
passages, pages, and every result within its bound."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from bot.app.settings import Settings
from bot.chat.runtime import Runtime, open_runtime
from tests.mcp.conftest import local_client, structured

pytestmark = pytest.mark.asyncio(loop_scope="module")

SECTIONS = ("Install", "Configure", "Operate")


def long_document() -> str:
    """Three sections of numbered, distinct sentences: several passages each, which overlap."""
    parts = []
    for title in SECTIONS:
        sentences = [
            f"In the {title.lower()} step, rule {n} says the {title.lower()} checklist item {n} needs "
            f"a second reviewer named in ticket {title[:3].upper()}-{n}."
            for n in range(40)
        ]
        parts.append(f"# {title}\n\n" + "\n\n".join(" ".join(sentences[i : i + 4]) for i in range(0, 40, 4)))
    return "\n\n".join(parts)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def runtime(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Runtime]:
    home = tmp_path_factory.mktemp("lore-mcp-local")
    settings = Settings(
        _env_file=None, lore_home=Path(home), database_url=None, chroma_host=None, lore_jobs_in_process=False
    )
    async with open_runtime(settings) as opened:
        async with local_client(opened) as client:  # closed here: its task group is this task's
            added = await client.call_tool("add_document", {"name": "runbook.md", "text": long_document()})
        assert structured(added)["chunks"] > 6
        yield opened


async def test_the_local_user_asks_and_gets_a_cited_answer(runtime: Runtime) -> None:
    text = (
        "# Rollback\n\nTo roll back a deploy, run `deployctl revert --to previous` from the bastion host.\n"
    )
    async with local_client(runtime) as client:
        added = structured(await client.call_tool("add_document", {"name": "rollback.md", "text": text}))
        answer = structured(await client.call_tool("ask", {"question": "How do I roll back a deploy?"}))
        indexes = structured(await client.call_tool("list_indexes", {}))
    assert added["index"] == "personal" and added["outcome"] == "added"
    assert "deployctl revert --to previous" in answer["answer"] and not answer["abstained"]
    [cited] = [c for c in answer["citations"] if c["document"] == "rollback.md"]
    assert f"[{cited['n']}]" in answer["answer"] and cited["resource"] == added["resource"]
    assert indexes["indexes"][0]["name"] == "personal" and indexes["indexes"][0]["may_add"]


async def test_a_question_the_documents_do_not_answer_is_an_abstention(runtime: Runtime) -> None:
    async with local_client(runtime) as client:
        answer = structured(await client.call_tool("ask", {"question": "What is the capital of Mongolia?"}))
    assert answer["abstained"] and answer["citations"] == []
    assert all(c["resource"].startswith("lore://personal/") for c in answer["closest"])


async def test_a_documents_text_comes_back_whole_from_its_overlapping_passages(runtime: Runtime) -> None:
    async with local_client(runtime) as client:
        [document] = [
            d
            for d in structured(await client.call_tool("list_documents", {"index": "personal"}))["documents"]
            if d["name"] == "runbook.md"
        ]
        read = await client.read_resource(document["resource"])
    text = read.contents[0].text
    for sentence in re.findall(r"In the .+?\.", long_document()):
        assert text.count(sentence) == 1, sentence  # nothing lost, nothing repeated where passages overlap
    headings = re.findall(r"^# (.*)$", text, re.M)  # a section's heading path, where it begins
    assert [h.split(" — ")[-1] for h in headings] == list(SECTIONS)


async def test_every_result_stays_within_the_bound_and_says_what_it_cut(runtime: Runtime) -> None:
    async with local_client(runtime, max_chars=2_000) as client:
        search = structured(
            await client.call_tool("search_knowledge", {"query": "checklist item second reviewer", "k": 20})
        )
        answer = structured(await client.call_tool("ask", {"question": "Who reviews checklist item 7?"}))
        [document] = [
            d
            for d in structured(await client.call_tool("list_documents", {"index": "personal"}))["documents"]
            if d["name"] == "runbook.md"
        ]
        read = (await client.read_resource(document["resource"])).contents[0].text
    assert sum(len(p["text"]) for p in search["passages"]) <= 2_000
    assert any("LORE_MCP_MAX_CHARS" in notice for notice in search["notices"])
    assert len(answer["answer"]) + sum(len(c["text"]) for c in answer["citations"]) <= 2_000
    body, _, said = read.rpartition("\n\n")
    assert len(body) <= 2_000 + 2 and "cut short" in said and "LORE_MCP_MAX_CHARS" in said


async def test_documents_come_a_page_at_a_time(runtime: Runtime) -> None:
    async with local_client(runtime) as client:
        for n in range(3):
            await client.call_tool(
                "add_document", {"name": f"page-{n}.md", "text": f"Page {n} of the pager notes."}
            )
        seen: list[str] = []
        cursor = None
        for _ in range(10):
            arguments = {"index": "personal", "limit": 2, **({"cursor": cursor} if cursor else {})}
            page = structured(await client.call_tool("list_documents", arguments))
            assert len(page["documents"]) <= 2
            seen += [d["name"] for d in page["documents"]]
            cursor = page["next_cursor"]
            if cursor is None:
                break
        listed = {r.name for r in (await client.list_resources()).resources}
        templates = (await client.list_resource_templates()).resource_templates
    assert len(seen) == len(set(seen)) and {"page-0.md", "page-1.md", "page-2.md", "runbook.md"} <= set(seen)
    assert set(seen) <= listed
    assert [t.uri_template for t in templates] == ["lore://{index}/{document}"]
