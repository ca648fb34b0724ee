"""The parsers' reader of units (`knowledge.text.parsed`): real pages of Sphinx reST,
MkDocs Markdown and MyST, and hostile input. Every unit's offsets slice back to its source."""

from __future__ import annotations

import logging
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from knowledge.text.parsed import parsed_units
from knowledge.text.quotes import Kind, Unit

SPHINX = """\
:orphan:

Configuration Handling
======================

Applications need some kind of configuration. Use :meth:`~flask.Config.from_pyfile`
to load it, see :ref:`config-dev-prod` and :pep:`8`.

.. versionchanged:: 2.3
    Not set by default, does not fall back to ``SERVER_NAME``.

.. warning::

   Never leave debug mode on in production.

.. code-block:: python
   :caption: ``app.py``

   app.config.from_pyfile("settings.cfg")

.. py:data:: DEBUG
   :noindex:

   Whether debug mode is enabled.

.. autoclass:: Config
   :members:

.. toctree::

   patterns/index

.. literalinclude:: app.py

.. some-extension-directive:: with an argument

   Its body.

-   Install it with ``pip``.
-   Run :func:`create_app`.

Example::

    $ flask run
"""


def _slices_back(text: str, unit: Unit) -> bool:
    """Whether `text[start:end]` holds the unit's source: its last word (prose: a box's
    heading, "New in version 8.0.", is its directive's line), or its last line (code), as
    written there."""
    assert unit.start is not None and unit.end is not None
    assert 0 <= unit.start < unit.end <= len(text), unit
    source = " ".join(text[unit.start : unit.end].split())
    body = unit.text.removesuffix("\n…")
    if unit.kind == Kind.CODE:
        last = next(line.strip() for line in reversed(body.split("\n")) if line.strip())
        return last in source
    return body.split()[-1].rstrip(".:") in source


def _each_slices_back(text: str, found: list[Unit]) -> None:
    assert found
    for unit in found:
        assert _slices_back(text, unit), (unit, text[unit.start : unit.end])


def test_sphinx_directives_and_roles_are_read_as_the_page_shows_them() -> None:
    found = parsed_units(SPHINX, "rst")
    shown = [u.rendered for u in found]
    assert shown[0] == "Applications need some kind of configuration."
    assert shown[1] == (
        "Use `from_pyfile()` to load it, see Config dev prod and PEP 8."
    )  # roles as Sphinx renders them
    assert "Changed in version 2.3: Not set by default, does not fall back to `SERVER_NAME`." in shown
    assert "Warning: Never leave debug mode on in production." in shown
    code = [u for u in found if u.kind == Kind.CODE]
    assert code[0].text == '# app.py\napp.config.from_pyfile("settings.cfg")'
    assert code[-1].text == "$ flask run"
    described = next(u for u in found if u.text == "Whether debug mode is enabled.")
    assert described.label == "DEBUG"  # its option is not part of its name
    assert "Its body." in shown  # a directive no one registered does not lose its text
    items = [u.text for u in found if u.kind == Kind.ITEM]
    assert items == ["-   Install it with ``pip``.", "-   Run :func:`create_app`."]
    assert "Example:" in shown
    assert not any("orphan" in u.text or "patterns/index" in u.text or "members" in u.text for u in found)
    assert {u.section for u in found} == {"Configuration Handling"}
    _each_slices_back(SPHINX, found)


MKDOCS = """\
---
title: Background Tasks
---
# Background Tasks

Starlette includes a `BackgroundTask` class. It runs after the response is sent.

!!! warning "Careful"
    Tasks run in the same process. Keep them short.

## Usage

```python
from starlette.background import BackgroundTask
task = BackgroundTask(send_email, to="a@example.com")
```

* First item
    * A nested item
* Second item

Term
:   Its definition.

::: starlette.background.BackgroundTask
    options:
        show_root_heading: true


| Name | Default |
|------|---------|
| `debug` | `False` |
"""


def test_mkdocs_markdown_is_read_by_its_blocks() -> None:
    found = parsed_units(MKDOCS, "markdown")
    texts = [u.text for u in found]
    assert texts[:2] == [
        "Starlette includes a `BackgroundTask` class.",
        "It runs after the response is sent.",
    ]
    assert "Careful: Tasks run in the same process." in texts
    assert "Keep them short." in texts
    code = next(u for u in found if u.kind == Kind.CODE)
    assert code.text.startswith("```python\nfrom starlette.background") and code.section == "Usage"
    assert [u.text for u in found if u.kind == Kind.ITEM] == [
        "* First item",
        "* A nested item",
        "* Second item",
    ]
    assert "Its definition." in texts and "Term" in texts
    assert not any("title:" in t or "show_root_heading" in t for t in texts)  # front matter, mkdocstrings
    assert found[-1].kind == Kind.CODE and "`debug`" in found[-1].text  # a table is kept as written
    _each_slices_back(MKDOCS, found)


MYST = """\
# Options

```{note}
Options are read from the environment.
```

:::{warning}
Do not commit secrets.
:::

Use {func}`click.option` to declare one.

```{code-block} python
:caption: hello.py

@click.option("--count")
```

```{toctree}
setup
```

```{versionadded} 8.0
```
"""


def test_myst_directives_and_roles() -> None:
    found = parsed_units(MYST, "myst")
    shown = [u.rendered for u in found]
    assert shown[:3] == [
        "Note: Options are read from the environment.",
        "Warning: Do not commit secrets.",
        "Use `click.option()` to declare one.",  # the role as Sphinx renders it
    ]
    code = next(u for u in found if u.kind == Kind.CODE)
    assert code.text == '@click.option("--count")'
    assert "New in version 8.0." in shown
    assert not any("setup" in s for s in shown)
    _each_slices_back(MYST, found)


HOSTILE = {
    "unterminated fence": "Intro.\n\n```python\nprint(1)\n\nmore\n",
    "unterminated reST": "Title\n=====\n\n.. code-block:: python\n\n   x = 1\n\n``open literal and `ref <x\n",
    "a 5 MB line": "word " * 1_000_000,
    "deep nesting": "> " * 3000 + "deep\n\n" + "".join(" " * k + "para\n\n" for k in range(600)),
    "deep directives": ".. note::\n" + "".join("   " * (k + 1) + ".. note::\n" for k in range(200)),
    "invalid surrogates": "Hello \ud800 world.\n\n```\n\udfff\n```\n\n- item \udc80\n",
    "control characters": "a\x00b. Next\x0c line.\r\nThird\u2028line.\rEnd.\n",
}


@pytest.mark.parametrize("name", HOSTILE)
@pytest.mark.parametrize("flavour", ["markdown", "myst", "rst"])
def test_hostile_input_never_raises_and_offsets_stay_in_the_text(
    name: str, flavour: str, caplog: pytest.LogCaptureFixture
) -> None:
    text = HOSTILE[name]
    with caplog.at_level(logging.CRITICAL):  # a parser that gives up leaves the page to the line reader
        found = parsed_units(text, flavour)
    assert found, "a page with text has units"
    for unit in found:
        assert unit.start is not None and unit.end is not None
        assert 0 <= unit.start <= unit.end <= len(text)
        assert text[unit.start : unit.end].strip()


def test_an_uploaded_page_cannot_make_docutils_read_a_file_or_an_address(tmp_path: Path) -> None:
    """An attacker's .rst asks docutils to insert a server file or fetch a URL (include,
    literalinclude, csv-table's :file: and :url:, raw): nothing of the file is read into a
    unit and nothing is fetched (a loopback server counts requests)."""
    secret = tmp_path / "secret.txt"
    secret.write_text("TOPSECRET-d41d8cd9\n", encoding="utf-8")
    asked: list[str] = []

    class Counting(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            asked.append(self.path)
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"a,TOPSECRET-d41d8cd9\n")

        def log_message(self, *args: object) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Counting)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/table.csv"
        page = (
            f"Title\n=====\n\nThe visible paragraph.\n\n.. include:: {secret}\n\n"
            f".. literalinclude:: {secret}\n\n.. csv-table:: Local\n   :file: {secret}\n\n"
            f".. csv-table:: Remote\n   :url: {url}\n\n.. raw:: html\n   :file: {secret}\n\n"
            f".. raw:: html\n\n   <script>TOPSECRET-d41d8cd9</script>\n\nThe last paragraph.\n"
        )
        found = parsed_units(page, "rst")
    finally:
        server.shutdown()
        server.server_close()
    texts = [u.text for u in found]
    assert "The visible paragraph." in texts and "The last paragraph." in texts
    assert not [t for t in texts if "TOPSECRET" in t], "no file, URL or raw HTML read into a unit"
    assert asked == [], "nothing fetched"
    _each_slices_back(page, found)
