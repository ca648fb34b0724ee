"""What "forget" says when its words name several documents: which ones, by id, and no more
than a message can hold."""

from __future__ import annotations

from dataclasses import replace

from bench.claims import passage
from bot.app.actions.errors import AMBIGUOUS_SHOWN, Ambiguous


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
