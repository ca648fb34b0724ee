"""Ingest and the units repair read a document with the reader of its flavour of markup
(`knowledge.text.flavours`): docutils for reST, markdown-it for Markdown, the line reader for
the rest; the parsers are loaded only when a page of theirs is read."""

from __future__ import annotations

import subprocess
import sys

import pytest
from sqlalchemy import update

from knowledge.indexing.ingest import Source
from knowledge.indexing.units import decoded, read_units, rebuilt
from knowledge.text.flavours import Flavour, flavour_of, read_document
from knowledge.text.parsed import parsed_units
from knowledge.text.quotes import Kind, Unit, document_units
from storage.models import Chunk
from storage.records import ChunkRecord, DocumentRef
from tests.knowledge.conftest import Stack, md
from tests.knowledge.test_answers import answered_surely

SPHINX = """Configuration
=============

.. note::
   Call :func:`~flask.Config.from_prefixed_env` after :class:`~flask.Flask` is made; it
   reads every variable that starts with ``FLASK_``.

.. versionadded:: 2.1
   Values are parsed as JSON when they can be.

Set :data:`SECRET_KEY` before the first request.

.. a comment that runs on
   into a second line.

.. code-block:: python
   :caption: app.py

   app.config.from_prefixed_env()
"""

MKDOCS = """# Background tasks

!!! warning "Run after the response"
    A background task runs after the response is sent; an exception in it
    does not change the response.

Add a task with `BackgroundTask(func, *args)`.
A task may be sync or async.

??? note
    Tasks run in order.

Serve the app with:

    uvicorn app:app --reload

```python
from starlette.background import BackgroundTask
```
"""


@pytest.mark.parametrize(
    ("name", "mime_type", "flavour"),
    [
        ("guide.rst", "text/plain", Flavour.RST),
        ("GUIDE.REST", "text/plain", Flavour.RST),
        ("docs\\guide.rst", "text/plain", Flavour.RST),
        ("guide.txt", "text/x-rst", Flavour.RST),
        ("guide.md", "text/markdown", Flavour.MARKDOWN),
        ("guide.md", "text/markdown; charset=utf-8", Flavour.MARKDOWN),
        ("https://example.com/guide", "text/html", Flavour.MARKDOWN),
        ("guide.txt", "text/plain", None),
        ("report.pdf", "application/pdf", None),
        ("deck.pptx", "application/vnd.openxmlformats-officedocument.presentationml.presentation", None),
        ("rows.csv", "text/csv", None),
        ("rst.md", "text/markdown", Flavour.MARKDOWN),
        ("guide.rst.txt", "text/plain", None),
        ("", "", None),
    ],
)
def test_a_documents_flavour_comes_from_its_name_and_type(
    name: str, mime_type: str, flavour: str | None
) -> None:
    assert flavour_of(name, mime_type) == flavour


def test_myst_as_stored_and_text_without_markup_are_read_by_the_line_reader() -> None:
    myst = "# Title\n\n.. note::\n   Read the reST this was.\n\nText.\n"  # (as `as_rest` stores MyST)
    assert read_document(myst, Flavour.MARKDOWN) == document_units(myst)
    assert read_document(SPHINX, None) == document_units(SPHINX)
    assert read_document(SPHINX, Flavour.RST) == parsed_units(SPHINX, Flavour.RST) != document_units(SPHINX)
    assert {u.titled for u in parsed_units(SPHINX, Flavour.RST)} == {0}, "all under the heading at 0"


def shape(u: Unit) -> tuple[object, ...]:
    """What a unit is as stored (a chunk shows its section only when it holds the heading)."""
    return (u.text, u.kind, u.label, u.start, u.end, u.rendered)


def stored(stack: Stack, document: DocumentRef) -> list[ChunkRecord]:
    return stack.documents.chunks_in([(document.id, 0, 1_000_000)])


def units_of(records: list[ChunkRecord]) -> list[list[Unit]]:
    return [decoded(r.units or "") for r in records]


async def ingested(stack: Stack, source: Source) -> tuple[int, DocumentRef]:
    index = stack.index()
    result = await stack.ingestor.add(index, source)
    return index.id, result.document


@pytest.mark.parametrize(
    ("source", "text", "flavour"),
    [
        (Source(name="config.rst", data=SPHINX.encode()), SPHINX, Flavour.RST),
        (md("background.md", MKDOCS), MKDOCS, Flavour.MARKDOWN),
    ],
    ids=["rst", "markdown"],
)
async def test_ingest_stores_the_units_its_flavours_parser_reads(
    stack: Stack, source: Source, text: str, flavour: str
) -> None:
    _, document = await ingested(stack, source)
    records = stored(stack, document)
    assert records and all(r.units for r in records)
    found = units_of(records)
    assert found == read_units(records, text, flavour)
    begin = records[0].start or 0
    assert [shape(u) for chunk in found for u in chunk if not u.continues] == [
        shape(u) for u in parsed_units(text, flavour) if (u.start or 0) >= begin
    ], "the parser's units of the document, each once, where the chunks hold them"
    assert found != read_units(records, text), "the line reader reads this page otherwise"


async def test_the_repair_rereads_stored_chunks_with_the_same_reader(stack: Stack) -> None:
    pages = {"config.rst": (SPHINX, Flavour.RST), "background.md": (MKDOCS, Flavour.MARKDOWN)}
    index = stack.index()
    documents = {}
    for name, (text, _) in pages.items():
        source = Source(
            name=name, data=text.encode(), mime_type=None if name.endswith(".rst") else "text/markdown"
        )
        documents[name] = (await stack.ingestor.add(index, source)).document
    with stack.db.engine.begin() as connection:  # (chunks stored before ingest recorded units)
        connection.execute(update(Chunk).values(units=None))
    assert stack.ingestor.read_old_units() == sum(len(stored(stack, d)) for d in documents.values())
    for name, document in documents.items():
        records = stored(stack, document)
        flavour = pages[name][1]
        assert units_of(records) == read_units(records, flavour=flavour)
        assert units_of(records) != read_units(records), f"{name}: the line reader reads it otherwise"
        assert [u.text for u in read_document(rebuilt(records), flavour)] == [
            u.text for u in parsed_units(rebuilt(records), flavour)
        ]


async def test_a_parsed_page_is_quoted_in_an_answer_as_its_parser_reads_it(stack: Stack) -> None:
    index = stack.index()
    await stack.ingestor.add(index, Source(name="config.rst", data=SPHINX.encode()))
    answer = await answered_surely(
        stack, "which environment variables does from_prefixed_env read?", index.id
    )
    assert answer.citations and answer.citations[0].name == "config.rst"
    quoted = answer.citations[0].text
    assert "reads every variable that starts with `FLASK_`" in quoted, quoted
    assert ":func:" not in quoted and ":class:" not in quoted


async def test_markdown_is_quoted_in_an_answer_as_its_parser_reads_it(stack: Stack) -> None:
    index = stack.index()
    await stack.ingestor.add(index, md("background.md", MKDOCS))
    answer = await answered_surely(stack, "how do I serve the app with uvicorn reload?", index.id)
    assert answer.citations and answer.citations[0].name == "background.md"
    assert "uvicorn app:app --reload" in answer.text
    assert "uvicorn app:app --reload" in {
        u.text for u in parsed_units(MKDOCS, Flavour.MARKDOWN) if u.kind == Kind.CODE
    }


def test_the_parsers_are_loaded_only_when_a_page_of_theirs_is_read() -> None:
    script = (
        "import sys\n"
        "import bot.cli, knowledge.indexing.ingest\n"
        "from knowledge.text.flavours import read_document\n"
        "from docutils.parsers.rst import roles\n"
        "read_document('Title\\n=====\\n\\nText.\\n', None)\n"
        "assert 'knowledge.text.parsed' not in sys.modules and 'markdown_it' not in sys.modules\n"
        "assert 'func' not in roles._roles, 'no Sphinx role yet'\n"
        "read_document('Title\\n=====\\n\\nSee :func:`f`.\\n', 'rst')\n"
        "assert 'func' in roles._roles\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
