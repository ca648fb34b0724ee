"""Documents of one name, told apart where people see them: an index's listing, and what
"forget" says when its words name several (which ones, by id, no more than a message holds)."""

from __future__ import annotations

from dataclasses import replace

from bench.claims import passage
from bot.app.actions.errors import AMBIGUOUS_SHOWN, Ambiguous
from bot.chat.render import render_documents, render_documents_md


def test_an_ambiguous_reference_lists_the_first_documents_apart_and_counts_the_rest() -> None:
    hit = passage("text")
    documents = [
        replace(hit.document, id=100 + n, name="index.md", source_key=f"/srv/p{n}/docs/index.md")
        for n in range(AMBIGUOUS_SHOWN + 3)
    ]
    said = str(Ambiguous(" index.md ", hit.index, documents))
    assert said.startswith("“index.md” matches 13 documents in the notes index, so I forgot none of them: ")
    assert "p0/docs/index.md (id 100), p1/docs/index.md (id 101)" in said
    assert f"p{AMBIGUOUS_SHOWN - 1}/docs/index.md (id {100 + AMBIGUOUS_SHOWN - 1}) and 3 more." in said
    assert f"(id {100 + AMBIGUOUS_SHOWN})" not in said
    assert said.endswith("Say which one by its id, like “forget 100”")


def test_a_listing_shows_namesakes_by_their_folders_escaped() -> None:
    hit = passage("text")
    documents = [
        replace(hit.document, id=1, name="index.md", source_key="/srv/httpx/docs/index.md"),
        replace(hit.document, id=2, name="index.md", source_key="/srv/<!channel>/docs/index.md"),
        replace(hit.document, id=3, name="Runbook", source_key="https://wiki.example.com/ops/runbook",
                url="https://wiki.example.com/ops/runbook"),
    ]  # fmt: skip
    slack = render_documents_md(hit.index, documents)
    assert "• httpx/docs/index.md — text/markdown" in slack
    assert "• &lt;!channel&gt;/docs/index.md — text/markdown" in slack and "<!channel>" not in slack
    assert "• <https://wiki.example.com/ops/runbook|Runbook> — text/markdown" in slack
    terminal = render_documents(hit.index, documents)
    assert "      1  httpx/docs/index.md (text/markdown" in terminal
    assert "      3  Runbook <https://wiki.example.com/ops/runbook> (text/markdown" in terminal
