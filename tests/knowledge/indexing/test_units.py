"""Units read once from the whole document at ingest: offsets, the chunks they go to, what
is stored, and hostile input."""

from __future__ import annotations

import time

import pytest

from knowledge.indexing.chunking import chunk_text
from knowledge.indexing.units import PREFIX, decoded, encoded, paragraphs, read_units, rebuilt
from knowledge.text.quotes import Kind, Unit, document_units

SPHINX = """Configuration
=============

.. versionadded:: 2.3
   The ``from_prefixed_env`` loader.

Use :meth:`~flask.Config.from_mapping` to set defaults. See :ref:`config-dev-prod` for more.

.. code-block:: python
   :caption: app.py

   app = Flask(__name__)
   app.config.from_prefixed_env()

.. autofunction:: flask.Config.from_envvar

.. warning::

   Keep the secret key secret.
"""

MKDOCS = """# Middleware

!!! note "Order"
    Middleware runs in the order it is added.

```python
app.add_middleware(GZipMiddleware, minimum_size=1000)
```

- `minimum_size`: do not compress responses smaller than this.
- `compresslevel`: from 1 to 9.
"""

MYST = """# Install

```{note}
Python 3.9 or newer.
```

Run `pip install lore` and then:

```bash
lore run
```
"""


@pytest.mark.parametrize("page", [SPHINX, MKDOCS, MYST], ids=["sphinx", "mkdocs", "myst"])
def test_each_unit_knows_where_its_source_lies_in_the_document(page: str) -> None:
    found = document_units(page)
    assert found
    for unit in found:
        assert unit.start is not None and unit.end is not None and 0 <= unit.start < unit.end <= len(page)
        source = " ".join(page[unit.start : unit.end].split())
        if unit.kind == Kind.CODE:
            assert unit.text.split("\n")[-1].strip() in source
        elif unit.text.split()[0] in source:
            assert source.startswith(unit.text.split()[0]), (unit, source)
    assert [u.start for u in found] == sorted(u.start or 0 for u in found), "in document order"


def test_sphinx_directives_and_roles_read_as_the_page_shows_them() -> None:
    shown = [u.rendered for u in document_units(SPHINX)]
    assert "New in version 2.3: The `from_prefixed_env` loader." in shown
    assert "Use `from_mapping()` to set defaults." in shown
    assert "See Config dev prod for more." in shown
    assert "Warning: Keep the secret key secret." in shown
    assert not any("autofunction" in s for s in shown), "generated reference is no text of the page"
    (code,) = [u for u in document_units(SPHINX) if u.kind == Kind.CODE]
    assert code.text == "# app.py\napp = Flask(__name__)\napp.config.from_prefixed_env()"


def test_what_is_stored_is_what_a_reader_sees_and_older_forms_still_decode() -> None:
    found = document_units(SPHINX)
    stored = encoded(found)
    assert stored.startswith(PREFIX)
    back = decoded(stored)
    assert back == found
    assert all(b.display is not None and b.rendered == u.rendered for b, u in zip(back, found, strict=True))
    assert "Use `from_mapping()` to set defaults." in [b.display for b in back], "rendered at ingest"
    assert decoded('[["Old.","sentence",1,"","",false]]') == [Unit("Old.", Kind.SENTENCE, 1)]


def test_a_code_block_longer_than_a_chunk_is_stored_whole_once() -> None:
    lines = "\n".join(f"    handler_{n} = logging.StreamHandler()  # handler {n}" for n in range(60))
    page = f"Logging\n=======\n\nTurn it on::\n\n{lines}\n\nThe license changed as well.\n"
    chunks = chunk_text(page, title="logging.rst")
    assert len(chunks) > 2
    read = read_units(chunks, page)
    whole = [(i, u) for i, found in enumerate(read) for u in found if u.kind == Kind.CODE and not u.continues]
    assert len(whole) == 1, "one unit, on the chunk it begins in"
    _, block = whole[0]
    assert block.end is not None and block.start is not None and block.end - block.start > len(chunks[1].text)
    later = [found[0] for found in read[whole[0][0] + 1 :] if found and found[0].kind == Kind.CODE]
    assert later and all(u.continues for u in later), "the chunks after it hold pieces of it"
    assert read[-1][-1].text == "The license changed as well."


def test_a_document_rebuilt_from_its_chunks_reads_as_the_document() -> None:
    page = SPHINX * 6
    chunks = chunk_text(page, title="config.rst")
    assert [[u.text for u in found] for found in read_units(chunks)] == [
        [u.text for u in found] for found in read_units(chunks, page)
    ]
    assert rebuilt(chunks).strip() == page.strip()


HOSTILE = {
    "a 5 MB line": "word " * 1_000_000,
    "an unterminated fence": "Intro.\n\n```python\n" + "x = 1\n" * 50_000,
    "deeply nested lists": "".join("  " * d + f"- item {d}\n" for d in range(2_000)),
    "a directive bomb": "".join("   " * d + ".. warning::\n\n" for d in range(500)) + "   text\n",
    "many directives": ".. note:: x\n\n" * 20_000,
    "lone surrogates": "Bad \udc80 text. More \ud800 here.\n\n```\n\udfff\n```\n",
    "unclosed markup": "``not closed :func:`also *not **either <a href=\n" * 10_000,
}


@pytest.mark.parametrize("page", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_input_never_raises_and_reads_in_a_sane_time(page: str) -> None:
    started = time.process_time()
    found = document_units(page)
    assert time.process_time() - started < 20
    assert all(u.start is not None and u.end is not None and u.start <= u.end <= len(page) for u in found)
    encoded(found)  # (surrogates are stored as JSON escapes)


def test_the_fallback_reads_paragraphs_with_their_offsets() -> None:
    """What ingest records when the reader fails on a page: its paragraphs, never a lost page."""
    page = "One paragraph\nwrapped.\n\n   \nTwo.\n\n\n```\nunclosed"
    found = paragraphs(page)
    assert [u.text for u in found] == ["One paragraph wrapped.", "Two.", "``` unclosed"]
    assert [" ".join(page[u.start or 0 : u.end].split()) for u in found] == [u.text for u in found]
