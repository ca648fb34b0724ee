"""How an answer's sources are named: documents of one name told apart by their folders,
each passage by the heading it stands under."""

from __future__ import annotations

from dataclasses import replace

from bench.claims import passage
from knowledge.answering.answer import Citation, ResponseMode, distinct_names
from knowledge.answering.extractive import abstention
from knowledge.indexing.chunking import section
from knowledge.search.retrieval import Hit, Retrieval


def cited(n: int, name: str, source: str, document: int | None = None, heading: str = "") -> Citation:
    hit = passage("We deploy every Tuesday.", n)
    ref = replace(hit.document, id=document or n, name=name, source_key=source)
    return Citation.from_hit(n, replace(hit, document=ref, heading=heading))


def test_a_documents_namesakes_are_told_apart_by_the_fewest_folders_that_do() -> None:
    citations = [
        cited(1, "index.md", "/srv/docs/httpx/docs/index.md"),
        cited(2, "index.md", "/srv/docs/uvicorn/docs/index.md"),
        cited(3, "index.md", "/srv/docs/httpx/docs/index.md", document=1),  # cited twice: one document
        cited(4, "install.md", "/srv/docs/httpx/docs/install.md"),
    ]
    assert distinct_names(citations) == [
        "httpx/docs/index.md",
        "uvicorn/docs/index.md",
        "httpx/docs/index.md",
        "install.md",  # no namesake: its name alone
    ]


def test_a_page_named_by_its_title_shows_its_folders_beside_it() -> None:
    citations = [
        cited(1, "Install", "https://wiki.example.com/ops/install"),
        cited(2, "Install", "https://wiki.example.com/dev/install"),
    ]
    assert distinct_names(citations) == ["Install (ops)", "Install (dev)"]


def test_windows_paths_and_sources_that_tell_nothing_apart() -> None:
    windows = [cited(1, "notes.md", r"C:\team\a\notes.md"), cited(2, "notes.md", r"C:\team\b\notes.md")]
    assert distinct_names(windows) == ["a/notes.md", "b/notes.md"]
    unknown = [cited(1, "notes.md", ""), cited(2, "notes.md", "")]  # no source to read
    assert distinct_names(unknown) == ["notes.md", "notes.md"]
    same_folder = [cited(1, "Notes", "https://a.io/x?id=1"), cited(2, "Notes", "https://a.io/x?id=2")]
    assert distinct_names(same_folder) == ["Notes", "Notes"]  # nothing made up to tell them apart


def test_a_citation_names_the_heading_its_passage_stands_under() -> None:
    assert section("responses.md — Response > Set Cookie") == "Set Cookie"
    assert section("Transports > ASGI Transport") == "ASGI Transport"
    assert section("javascript.rst") == "", "a title alone is no section"
    assert section("") == ""
    assert (
        cited(1, "responses.md", "r", heading="responses.md — Response > Set Cookie").section == "Set Cookie"
    )
    assert cited(1, "Runbook", "r", heading="Ops > Runbook").section == "", "the page's own name again"


def test_an_abstention_names_the_closest_documents_apart() -> None:
    hits: list[Hit] = []
    for n, project in enumerate(("httpx", "uvicorn"), start=1):
        hit = passage("Set up logging.", n)
        document = replace(hit.document, name="index.md", source_key=f"/d/{project}/index.md")
        hits.append(replace(hit, document=document))
    answer = abstention(Retrieval(hits, "q", [hits[0].index], 0.2), ResponseMode.RAG_ONLY)
    assert answer.abstained
    assert "you might look at: httpx/index.md (notes), uvicorn/index.md (notes)." in answer.text
