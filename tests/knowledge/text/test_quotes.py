"""Passages cut into quotable units: sentences, whole list items, whole code blocks."""

from __future__ import annotations

from dataclasses import dataclass

from knowledge.indexing.units import read_units
from knowledge.text.quotes import MAX_NESTING, Kind, Unit, units

RST = """Configuration Handling
======================

Applications need some configuration, e.g. the debug flag.  Flask keeps it in
:attr:`config`.  It is a dict::

    app = Flask(__name__)
    app.config['TESTING'] = True

    app.config.update(SECRET_KEY='x')

Three ways to load it:

- from a Python file, with
  ``from_pyfile``
- from environment variables
* from an object

.. code-block:: text

    $ flask --app hello run --debug

.. py:data:: MAX_COOKIE_SIZE

    Warn if cookie headers are larger than this many bytes. Defaults to ``4093``.
"""

MARKDOWN = """## Lifespan

Starlette can run code at startup.
```python
@contextlib.asynccontextmanager
async def lifespan(app):
    yield
```
1. Install it.
2. Run it.
"""


@dataclass(frozen=True)
class Chunk:
    heading: str
    text: str
    start: int | None


def in_document(before: str, text: str) -> list[Unit]:
    """The units recorded for the passage `text` of a document that is `before` and then
    `text`, as much of its start as `before` ends with repeated (chunks overlap): read from the
    whole document, as ingest reads them."""
    overlap = next(
        (
            len(before) - start
            for start in range(max(0, len(before) - 2000), len(before))
            if before[start:].strip() and text.startswith(before[start:])
        ),
        0,
    )
    separator = "" if overlap or before.endswith("\n") else "\n"  # (else it begins a line)
    document = before + separator + text[overlap:]
    chunks = [Chunk("", before, 0), Chunk("", text, len(before) + len(separator) - overlap)]
    return read_units(chunks, document)[1]


def whole(unit: Unit) -> Unit:
    """`unit` without where it lies in its document."""
    return Unit(unit.text, unit.kind, unit.block, unit.section, unit.label, unit.continues)


def test_rst_is_cut_into_sentences_items_and_whole_code_blocks() -> None:
    found = units(RST)
    texts = [(u.kind, u.text) for u in found]
    assert (Kind.SENTENCE, "Applications need some configuration, e.g. the debug flag.") in texts
    assert (Kind.SENTENCE, "It is a dict:") in texts
    code = [u.text for u in found if u.kind == Kind.CODE]
    assert (
        code[0] == "app = Flask(__name__)\napp.config['TESTING'] = True\n\napp.config.update(SECRET_KEY='x')"
    )
    assert code[1] == "$ flask --app hello run --debug"
    items = [u.text for u in found if u.kind == Kind.ITEM]
    assert items == [
        "- from a Python file, with ``from_pyfile``",
        "- from environment variables",
        "* from an object",
    ]
    assert all("=====" not in u.text and u.text != "Configuration Handling" for u in found)
    assert {u.section for u in found} == {"Configuration Handling"}


def test_a_description_directive_names_its_body() -> None:
    body = [u for u in units(RST) if u.label]
    assert [u.label for u in body] == ["MAX_COOKIE_SIZE", "MAX_COOKIE_SIZE"]
    assert body[1].shown == "MAX_COOKIE_SIZE: Defaults to ``4093``."


def test_markdown_fences_and_numbered_items_are_whole() -> None:
    found = units(MARKDOWN)
    assert [u.kind for u in found] == [Kind.SENTENCE, Kind.CODE, Kind.ITEM, Kind.ITEM]
    assert found[1].text.startswith("```python") and found[1].text.endswith("```")
    assert found[0].section == "Lifespan"


def test_a_passage_starting_mid_sentence_starts_with_a_fragment() -> None:
    found = units("run`` command, and some systems may have configured themselves. Use the option.")
    assert found[0].fragment and not found[1].fragment


def test_a_tilde_underline_is_a_title_and_a_tilde_fence_is_code() -> None:
    text = "Address already in use\n~~~~~~~~~~~~~~~~~~~~~~\n\nAnother program has the port.\n\n~~~\nx = 1\n~~~\n\nDone."
    found = units(text)
    assert [(u.kind, u.text) for u in found] == [
        (Kind.SENTENCE, "Another program has the port."),
        (Kind.CODE, "~~~\nx = 1\n~~~"),
        (Kind.SENTENCE, "Done."),
    ]
    assert found[0].section == "Address already in use"


def test_a_passage_of_one_short_line_is_quoted_whole() -> None:
    assert [u.text for u in units("service.retention_days: 45\nservice.region: eu-west")] == [
        "service.retention_days: 45 service.region: eu-west"
    ]
    assert [u.text for u in units("Title only\n==========\n")] == ["Title only"]
    targets = ".. _`urllib3`: https://github.com/urllib3/urllib3\n\n.. _blocking:\n\nBlocking?\n---------\n"
    assert [u.text for u in units(targets)] == ["Blocking?"], "link targets are no words of a title"
    assert units(targets, titles=False) == [], "what a passage read on into holds of the next section"


def test_a_passage_cut_inside_a_code_block_keeps_its_tail_as_code() -> None:
    text = (
        'register_url_convertor("datetime", DateTimeConvertor())\n```\n\n'
        "After registering it, you can use it in a path:\n\n"
        "```python\nRoute('/history/{date:datetime}', history)\n```\n\nPath parameters arrive in the request."
    )
    assert [(u.kind, u.text) for u in units(text)] == [
        (Kind.CODE, 'register_url_convertor("datetime", DateTimeConvertor())'),
        (Kind.SENTENCE, "After registering it, you can use it in a path:"),
        (Kind.CODE, "```python\nRoute('/history/{date:datetime}', history)\n```"),
        (Kind.SENTENCE, "Path parameters arrive in the request."),
    ]
    opening = "Register it:\n\n```\nregister(app)\n"  # a single bare fence late in a passage opens a block
    assert [u.kind for u in units(opening)] == [Kind.SENTENCE, Kind.CODE]


def test_a_backtick_underline_is_a_title_not_a_code_fence() -> None:
    text = (
        "Outside a request, it will log to stderr.\n\n"
        "Email Errors to Admins\n``````````````````````\n\n"
        "Configure an SMTPHandler to send an email when errors are logged.\n\n"
        "Injecting Request Information\n`````````````````````````````\n\nSee below."
    )
    found = units(text)
    assert [u.text for u in found] == [
        "Outside a request, it will log to stderr.",
        "Configure an SMTPHandler to send an email when errors are logged.",
        "See below.",
    ]
    assert found[1].section == "Email Errors to Admins" and all(u.kind == Kind.SENTENCE for u in found)


ITEM_WITH_LITERAL = """* The ``config`` parameter has been removed. The verbosity option should be
  handled by configuring logging.

  ::

      import logging
      logging.getLogger().setLevel(logging.DEBUG)

* Hooks were removed except 'response'.

- An item that says::

      pip install itsdangerous

- An item with a fence
  ```toml
  [tool.lore]
  ```
"""


def test_a_list_item_holding_a_code_block_keeps_the_code_whole_and_apart() -> None:
    found = units(ITEM_WITH_LITERAL)
    assert [(u.kind, u.text) for u in found] == [
        (
            Kind.ITEM,
            "* The ``config`` parameter has been removed. The verbosity option should be "
            "handled by configuring logging.",
        ),
        (Kind.CODE, "import logging\nlogging.getLogger().setLevel(logging.DEBUG)"),
        (Kind.ITEM, "* Hooks were removed except 'response'."),
        (Kind.ITEM, "- An item that says:"),
        (Kind.CODE, "pip install itsdangerous"),
        (Kind.ITEM, "- An item with a fence"),
        (Kind.CODE, "```toml\n[tool.lore]\n```"),
    ]
    blocks = [u.block for u in found]
    assert blocks == sorted(blocks) and blocks[0] != blocks[1], "the code is a block of its own, in order"


DEBUGGING = (
    "Debugging\n=========\n\n"
    "Turn on logging at the lowest level::\n\n"
    "      import logging\n"
    "      HTTPConnection.debuglevel = 1"
)


def in_two(before: str, following: str) -> tuple[list[Unit], list[Unit]]:
    """The units recorded for two chunks of one document, `before` and then `following`
    (which may repeat the end of `before`)."""
    overlap = next(
        (
            len(before) - k
            for k in range(len(before))
            if before[k:].strip() and following.startswith(before[k:])
        ),
        0,
    )
    separator = "" if overlap or before.endswith("\n") else "\n"
    document = before + separator + following[overlap:]
    chunks = [Chunk("", before, 0), Chunk("", following, len(before) + len(separator) - overlap)]
    first, second = read_units(chunks, document)
    return first, second


def test_a_literal_block_cut_between_two_passages_is_recorded_whole_where_it_begins() -> None:
    following = (
        "debuglevel = 1\n\n"  # the overlap begins inside a line the passage already holds
        "      logging.basicConfig()\n"
        "      log.setLevel(logging.DEBUG)\n\n"
        "One key difference is the license."
    )
    first, second = in_two(DEBUGGING, following)
    assert whole(first[-1]) == Unit(
        "import logging\nHTTPConnection.debuglevel = 1\n\nlogging.basicConfig()\nlog.setLevel(logging.DEBUG)",
        Kind.CODE,
        1,
        "Debugging",
    ), "the whole block, one unit, on the passage it begins in, though it runs past its end"
    assert [(u.kind, u.continues) for u in second] == [(Kind.CODE, True), (Kind.SENTENCE, False)]
    assert (
        second[0].text
        == "HTTPConnection.debuglevel = 1\n\nlogging.basicConfig()\nlog.setLevel(logging.DEBUG)"
    )
    assert second[-1].text == "One key difference is the license."
    nested = "Define it::\n\n    def create_app():\n        app = Flask(__name__)"
    first, _ = in_two(nested, "        app.config.from_pyfile('config.py')\n    return app\n")
    assert first[-1].text == (
        "def create_app():\n    app = Flask(__name__)\n    app.config.from_pyfile('config.py')\nreturn app"
    ), "its lines indented as written, not each part on its own"


def test_a_passage_ending_with_the_line_that_opens_a_literal_block_holds_the_block() -> None:
    before = "Requests encodes it for you if you pass it directly::"
    following = "    >>> url = 'https://api.example.com/'\n    >>> r = requests.post(url, json=payload)\n\nNote the header."
    first, second = in_two(before, following)
    assert [whole(u) for u in first] == [
        Unit("Requests encodes it for you if you pass it directly:", Kind.SENTENCE, 1)
    ]
    assert [whole(u) for u in second] == [
        Unit(">>> url = 'https://api.example.com/'\n>>> r = requests.post(url, json=payload)", Kind.CODE, 1),
        Unit("Note the header.", Kind.SENTENCE, 2),
    ], "the block begins in the next passage: it is that one's, and a read-on finds it there"


def test_only_a_block_left_open_runs_on_and_only_by_indented_text() -> None:
    paragraph = "Another paragraph.\n    y = 2"
    first, second = in_two(DEBUGGING, paragraph)
    assert whole(first[-1]) == Unit(
        "import logging\nHTTPConnection.debuglevel = 1", Kind.CODE, 1, "Debugging"
    )
    assert Kind.CODE not in [u.kind for u in second]
    first, second = in_two("Some prose.\n\n    x = 1\n\n", "Then.\n    y = 2")
    assert (first[-1].kind, first[-1].text) == (Kind.SENTENCE, "x = 1"), "no block open"
    assert Kind.CODE not in [u.kind for u in second]


def test_a_passage_that_begins_inside_a_literal_block_reads_its_first_lines_as_code() -> None:
    before = (
        "Use a fixture for the runner. The fixture goes in conftest::\n\n"
        "    import pytest\n\n"
        "    @pytest.fixture\n"
        "    def runner(app):"
    )
    text = (  # chunks overlap: this one repeats the end of the one before, from a word
        "@pytest.fixture\n"
        "    def runner(app):\n"
        "        return app.test_cli_runner()\n\n"
        "Use the runner to invoke commands."
    )
    alone = units(text)
    assert alone[0].kind == Kind.SENTENCE, "without the passage before, the lines read as prose"
    found = in_document(before, text)
    assert [(u.kind, u.text) for u in found] == [
        (Kind.CODE, "@pytest.fixture\ndef runner(app):\n    return app.test_cli_runner()"),
        (Kind.SENTENCE, "Use the runner to invoke commands."),
    ]
    assert [(u.kind, u.text) for u in in_document("The passage before says nothing of code.\n\n", text)] == [
        (u.kind, u.text) for u in alone
    ]
    opener = "conftest::\n\n    import pytest\n\n    @pytest.fixture\n    def runner(app):"
    begun = in_document(before, opener)[0]
    assert (begun.kind, begun.continues, begun.fragment) == (Kind.SENTENCE, True, True), (
        "it repeats the opener: the end of a sentence begun before it"
    )


def test_a_passage_may_repeat_lines_of_a_block_the_passage_before_closes() -> None:
    before = (
        ".. code-block:: text\n"
        "   :caption: Bash\n\n"
        "   $ export SETTINGS=/path/to/settings.cfg\n"
        "   $ flask run\n"
        "    * Running on http://127.0.0.1:5000/\n\n"
        "The configuration files themselves are Python files"
    )
    text = "$ flask run\n    * Running on http://127.0.0.1:5000/\n\nThe configuration files themselves are Python files."
    assert [(u.kind, u.text) for u in in_document(before, text)] == [
        (Kind.CODE, "$ flask run\n * Running on http://127.0.0.1:5000/"),
        (Kind.SENTENCE, "The configuration files themselves are Python files."),
    ]


def test_a_passage_that_begins_inside_a_fenced_block_reads_up_to_its_closing_fence() -> None:
    before = "Add the middleware:\n\n```python\napp = Starlette()\napp.add_middleware(\n    CORSMiddleware,"
    text = "CORSMiddleware,\n    allow_origins=['*'],\n)\n```\n\nThen run it.\n\n```\nuvicorn app:app\n```"
    found = in_document(before, text)
    assert [(u.kind, u.text) for u in found] == [
        (Kind.CODE, "    CORSMiddleware,\n    allow_origins=['*'],\n)"),
        (Kind.SENTENCE, "Then run it."),
        (Kind.CODE, "```\nuvicorn app:app\n```"),
    ]
    titled = "Title\n``````````\n\nProse::\n\n    code_line()"  # reST lets a title's underline be backticks
    assert [(u.kind, u.text) for u in in_document(titled, "code_line()\n\nMore prose.")] == [
        (Kind.CODE, "code_line()"),
        (Kind.SENTENCE, "More prose."),
    ]


def test_a_passage_between_two_fenced_blocks_knows_which_fence_closes_and_which_opens() -> None:
    # it begins inside one block and ends inside the next: two fences, as if it held one whole block
    text = "routes = [\n    Route('/', homepage),\n]\n```\n\nNow the test configuration:\n\n```python title=\"conftest.py\"\nimport pytest"
    document = "```python\n" + text  # the document opens the block the passage begins in
    assert [(u.kind, u.text) for u in units(text)] == [
        (Kind.CODE, "routes = [\n    Route('/', homepage),\n]"),
        (Kind.SENTENCE, "Now the test configuration:"),
        (Kind.CODE, '```python title="conftest.py"\nimport pytest'),
    ]
    following = "import pytest\n\n@pytest.fixture\ndef client():\n    ...\n```\n\nThen write the tests."
    assert [(u.kind, u.text) for u in in_document(document, following)] == [
        (Kind.CODE, "import pytest\n\n@pytest.fixture\ndef client():\n    ..."),
        (Kind.SENTENCE, "Then write the tests."),
    ]


def test_a_runaway_nesting_of_list_items_is_read_without_running_out_of_stack() -> None:
    text = "\n\n".join(f"{' ' * 2 * level}- level {level}" for level in range(3000))
    found = units(text)
    assert [u.text for u in found[: MAX_NESTING + 1]] == [f"- level {n}" for n in range(MAX_NESTING + 1)]
    assert len(found) == MAX_NESTING + 2, "the levels below the limit are one (capped) unit"
    assert found[-1].text.startswith(f"- level {MAX_NESTING + 1} - level {MAX_NESTING + 2}")


def test_a_passage_ending_just_after_a_fence_opens_quotes_no_empty_block() -> None:
    found = units("The endpoint can also be used with the application class:\n\n```python\n")
    assert [(u.kind, u.text) for u in found] == [
        (Kind.SENTENCE, "The endpoint can also be used with the application class:")
    ]


def test_a_fenced_block_a_passage_ends_inside_is_closed_when_quoted() -> None:
    (_, code) = units("Configure it:\n\n````python\nimport logging\n```\nlogging.basicConfig()\n")
    assert code.rendered == "````python\nimport logging\n```\nlogging.basicConfig()\n````", (
        "closed by the fence that opened it: the rest of the answer is not code"
    )
    (_, whole) = units("Configure it:\n\n~~~\nimport logging\n~~~\n")
    assert whole.rendered == "~~~\nimport logging\n~~~", "a closed block is left as written"


def test_prose_is_quoted_with_its_rest_markup_rendered_and_code_as_written() -> None:
    text = (
        "Call :func:`~flask.url_for` with ``_external=True``; :meth:`Flask.run() <flask.Flask.run>` "
        "and the :class:`flask.Flask` object are described in `the API docs <https://flask.example/api>`_, "
        "the `Flask-Talisman`_ extension in :doc:`/security`, style in :pep:`8`, ports in "
        ":ref:`address-already-in-use`, :ref:`the debugger <debug_mode>`.\n\n"
        ".. code-block:: python\n\n    url = url_for('index', _external=True)  # ``kept``, :func:`kept`\n"
    )
    sentence, code = units(text)
    assert sentence.quoted == (
        "Call `url_for()` with `_external=True`; `Flask.run()` and the `flask.Flask` object are "
        "described in [the API docs](https://flask.example/api), the Flask-Talisman extension in "
        "/security, style in PEP 8, ports in Address already in use, the debugger."
    )
    assert (
        code.kind == Kind.CODE and code.quoted == f"```\n{code.text}\n```" and ":func:`kept`" in code.quoted
    )
    markdown = units("Use `jsonify` or a `dict`, see [the guide](https://example.com).")[0]
    assert markdown.quoted == markdown.text, "Markdown is left as it is"


def test_directives_read_as_sphinx_shows_them() -> None:
    text = (
        "Upload it.\n\n"
        ".. warning:: It is strongly recommended that you open files in :ref:`binary\n"
        "             mode <tut-files>`. Requests may set the ``Content-Length`` header.\n\n"
        ".. versionchanged:: 2.3\n    The default is now ``None``.\n\n"
        ".. deprecated:: 2.2\n\n    Use ``other`` instead.\n\n"
        ".. versionadded:: 1.0\n\n"
        ".. note::\n\n    Sessions persist cookies.\n\n"
        ".. autofunction:: url_for\n\n"
        ".. image:: flask.png\n   :alt: the logo\n\n"
        ".. toctree::\n   :maxdepth: 2\n\n   tutorial/index\n   api\n\n"
        ".. tip::\n\n    For example::\n\n        app.run(debug=True)\n"
    )
    assert [u.quoted for u in units(text)] == [
        "Upload it.",
        "Warning: It is strongly recommended that you open files in binary mode.",
        "Requests may set the `Content-Length` header.",
        "Changed in version 2.3: The default is now `None`.",
        "Deprecated since version 2.2: Use `other` instead.",
        "New in version 1.0.",
        "Note: Sessions persist cookies.",
        "For example:",
        "```\napp.run(debug=True)\n```",
    ], "a directive's text continues on its indented lines; files, modules and options are not text"


def test_code_read_from_an_indented_block_is_quoted_in_a_fence_markdown_does_not_read_into() -> None:
    text = "Run this::\n\n    # app.py\n    >>> def view(**kwargs):\n    ...     return ```\n"
    code = units(text)[-1]
    assert code.text == "# app.py\n>>> def view(**kwargs):\n...     return ```"
    assert code.quoted == f"````\n{code.text}\n````", "a fence longer than the backticks it holds"
    fenced = units("Run:\n\n```bash\nflask run\n```\n")[-1]
    assert fenced.quoted == "```bash\nflask run\n```", "a fenced block keeps its own fences"


def test_a_doctest_block_is_code_up_to_its_blank_line() -> None:
    text = (
        "It will be encoded automatically:\n\n"
        "    >>> url = 'https://api.github.com/some/endpoint'\n"
        "    >>> payload = {'some': 'data'}\n\n"
        "    >>> r = requests.post(url, json=payload)\n\n"
        "Note, the ``json`` parameter is ignored if ``data`` is passed.\n"
    )
    assert [(u.kind, u.text) for u in units(text)] == [
        (Kind.SENTENCE, "It will be encoded automatically:"),
        (Kind.CODE, ">>> url = 'https://api.github.com/some/endpoint'\n>>> payload = {'some': 'data'}"),
        (Kind.CODE, ">>> r = requests.post(url, json=payload)"),
        (Kind.SENTENCE, "Note, the ``json`` parameter is ignored if ``data`` is passed."),
    ]


def test_markdown_admonitions_read_as_their_rest_directives() -> None:
    text = (
        "!!! info\n    The `filename` field is optional.\n\n"
        '!!! warning "Keep it secret"\n    Never commit the key.\n\n'
        '??? note ""\n    Collapsed by default.\n\n'
        "Plain text.\n"
    )
    assert [u.text for u in units(text)] == [
        "Info: The `filename` field is optional.",
        "Keep it secret: Never commit the key.",
        "Collapsed by default.",
        "Plain text.",
    ]


def test_a_passage_begun_mid_line_in_a_block_shows_that_line_whole_and_no_stray_brackets() -> None:
    before = 'Read it:\n\n```python\nform = await request.form()\nfilename = form["upload_file"].filename'
    text = '= form["upload_file"].filename\ncontents = await form["upload_file"].read()\n```\n\nDone.'
    assert in_document(before, text)[0].text == (
        'filename = form["upload_file"].filename\ncontents = await form["upload_file"].read()'
    )
    tail = units("]\n```\n\nYou can also mount sub-applications.")[0]
    assert tail.kind == Kind.CODE and tail.fragment, "brackets closing a block are not quoted on their own"
    assert not units("Run::\n\n    x = 1\n")[-1].fragment


def test_sub_items_an_item_runs_into_keep_their_lines_and_depth() -> None:
    text = (
        "Before releasing, open a pull request that includes:\n\n"
        "- **An update to the changelog**:\n"
        "    - We follow the format from keepachangelog.\n"
        "    - Compare `master` with the latest tag, and list\n"
        "      the entries of interest to users:\n"
        "        - Things that **must** go in the changelog.\n"
        "- **A version bump**: see `__version__.py`.\n"
    )
    _, changelog, bump = units(text)
    assert changelog.kind == Kind.ITEM and changelog.text == (
        "- **An update to the changelog**:\n"
        "    - We follow the format from keepachangelog.\n"
        "    - Compare `master` with the latest tag, and list the entries of interest to users:\n"
        "        - Things that **must** go in the changelog."
    ), "not run together on one line"
    assert bump.text == "- **A version bump**: see `__version__.py`."


def test_a_code_blocks_options_are_not_its_code_but_its_caption_is_shown() -> None:
    text = (
        ".. code-block:: python\n    :caption: ``tests/test_factory.py``\n    :emphasize-lines: 2\n\n"
        "    from flaskr import create_app\n\n    def test_config():\n        assert not create_app().testing\n"
    )
    assert [u.text for u in units(text)] == [
        "# tests/test_factory.py\nfrom flaskr import create_app\n\ndef test_config():\n    assert not create_app().testing"
    ], "the caption names the file, as a comment over the code"


def test_a_description_directives_options_are_not_its_body_and_a_generic_admonition_has_its_title() -> None:
    text = (
        "Available by default:\n\n"
        ".. data:: config\n   :noindex:\n\n   The current configuration object (:data:`flask.Flask.config`)\n\n"
        ".. data:: g\n   :noindex:\n\n   The request-bound object for global variables (:data:`flask.g`).\n\n"
        ".. admonition:: Note\n\n    ``timeout`` is not a time limit on the entire download.\n\n"
        ".. admonition:: The Jinja Context Behavior\n\n    These variables are added to the context.\n"
    )
    assert [u.quoted for u in units(text)] == [
        "Available by default:",
        "config: The current configuration object (`flask.Flask.config`)",
        "g: The request-bound object for global variables (`flask.g`).",
        "Note: `timeout` is not a time limit on the entire download.",
        "The Jinja Context Behavior: These variables are added to the context.",
    ], "`:noindex:` is no text; a dotted name ending in the label does not say it as a word"


def test_a_passage_begun_mid_line_in_an_indented_body_reads_that_line_with_the_rest_of_its_sentence() -> None:
    before = (
        "Timeouts\n--------\n\n.. admonition:: Note\n\n"
        "    ``timeout`` is not a time limit on the entire response download; rather, an\n"
        "    exception is raised if no bytes have been received on the underlying\n"
        "    socket for ``timeout`` seconds. If no timeout is specified explicitly, requests do\n"
    )
    passage = (
        "socket for ``timeout`` seconds. If no timeout is specified explicitly, requests do\n"
        "    not time out.\n\nErrors\n------\n\nA network problem raises a ``ConnectionError``.\n"
    )
    read = [(u.text, u.fragment) for u in in_document(before, passage)]
    assert read == [
        ("socket for ``timeout`` seconds.", True),
        ("If no timeout is specified explicitly, requests do not time out.", False),
        ("A network problem raises a ``ConnectionError``.", False),
    ]
    assert "If no timeout is specified explicitly, requests do" in [u.text for u in units(passage)], (
        "without the passage before, where the line began is not known"
    )
    cut_at_its_start = "Ends here.\n" + passage[passage.index("If no") :]
    assert [u.text for u in in_document("Ends here.\n", cut_at_its_start)][1] == (
        "If no timeout is specified explicitly, requests do"
    ), "a passage that begins at a line's start is read as it stands"
    item = "*   ``SECRET_KEY`` is used by Flask to keep data safe. It is set to ``'dev'`` during\n"
    listed = in_document(item, "set to ``'dev'`` during\n    development. Override it when deploying.\n")
    assert [u.text for u in listed] == ["set to ``'dev'`` during development.", "Override it when deploying."]
    doctest = in_document("It is used like this:\n", "like this:\n    >>> requests.get(url)\n")
    assert [u.kind for u in doctest] == [Kind.SENTENCE, Kind.CODE], "a block after it is not its paragraph"


def test_the_tail_of_a_rest_reference_cut_in_two_is_a_fragment() -> None:
    found = units("<Config.from_mapping>` sets\nsome default configuration the app will use.\n")
    assert found[0].fragment
    assert not units("<br> tags are not escaped.")[0].fragment


def test_a_passage_ending_with_a_title_leaves_it_to_the_next_but_keeps_a_labelled_value() -> None:
    """A reST title whose underline fell into the next passage is that passage's; a short
    last line that labels a value or code is the passage's own text."""
    ending = "    Enable debug mode.\n\n    Default: ``False``\n\n.. py:data:: TESTING\n"
    assert [u.text for u in units(".. py:data:: DEBUG\n\n" + ending)][-1] == "Default: ``False``"
    example = "Query parameters are exposed as a multi-dict.\n\nFor example: `request.query_params['q']`\n"
    assert [u.text for u in units(example)][-1] == "For example: `request.query_params['q']`"
    titled = "Keep-alive is automatic within a session.\n\nStreaming Uploads\n"
    assert [u.text for u in units(titled)] == ["Keep-alive is automatic within a session."]


def test_link_definitions_are_no_text_and_an_html_link_reads_as_a_markdown_one() -> None:
    text = (
        "Install [Jinja2][jinja2] to use templates.\n\n"
        "[jinja2]: https://jinja.palletsprojects.com/\n"
        "[pathlike]: https://docs.python.org/3/library/os.html#os.PathLike\n\n"
        '**Source Code**: <a href="https://github.com/encode/starlette" target="_blank">'
        "https://github.com/encode/starlette</a>\n\n"
        '**Docs**: <a href="https://www.starlette.io/" target="_blank">the site</a>, '
        '<a href="#install">install</a>\n\n'
        '<p align="center"><i>Starlette is <a href="https://github.com/encode/starlette/blob/master/LICENSE.md">'
        "BSD licensed</a> code.<br/>Designed & crafted with care.</i></br></p>\n\n"
        "End a line with a `<br/>` tag; compare `a < b`.\n"
    )
    assert [u.quoted for u in units(text)] == [
        "Install [Jinja2][jinja2] to use templates.",
        "**Source Code**: https://github.com/encode/starlette",
        "**Docs**: [the site](https://www.starlette.io/), install",
        "Starlette is [BSD licensed](https://github.com/encode/starlette/blob/master/LICENSE.md) code. "
        "Designed & crafted with care.",
        "End a line with a `<br/>` tag; compare `a < b`.",
    ], "the HTML that formats prose is not shown; code spans are as written"
    assert [u.text for u in units("[jinja2]: https://jinja.palletsprojects.com/\n")] == [], "nothing to quote"


def test_a_passage_that_begins_mid_sentence_knows_it_from_the_passage_before() -> None:
    """Flask's appcontext page: a chunk begins "CLI command, or ``with`` block.", the end of
    a sentence the chunk before holds; its capital letter does not make it a sentence."""
    before = (
        "The context\n-----------\n\n"
        "The application context is pushed during a request,\n"
        "CLI command, or ``with`` block. Various callbacks run during the context.\n"
    )
    wrapped = "CLI command, or ``with`` block. Various callbacks run during the context.\n"
    found = in_document(before[: before.index("CLI")], wrapped)
    assert [(u.text, u.fragment) for u in found] == [
        ("CLI command, or ``with`` block.", True),
        ("Various callbacks run during the context.", False),
    ], "at the start of a line that goes on with a sentence of the line before"
    assert units(wrapped)[0].fragment is False, "without the passage before, it cannot be told"
    one_line = "The application context is pushed during a request, CLI"  # overlapping from mid-line
    assert in_document(one_line, "CLI command, or ``with`` block.")[0].fragment
    assert not in_document("It is pushed during a request. CLI", "CLI commands push it.")[0].fragment
    assert not in_document(before[: before.index("Various")], "Various callbacks run during the context.\n")[
        0
    ].fragment
    paragraph = "The context\n-----------\n\nSome intro.\n\n"
    assert not in_document(paragraph, "CLI commands push it too.\n")[0].fragment, "a new paragraph"
    assert not in_document("The context\n-----------", "CLI commands push it too.\n")[0].fragment, (
        "after a title"
    )
    assert not in_document("Where it is pushed,", "- CLI commands push it too.\n")[0].fragment, "an item"


def test_mkdocstrings_reference_is_no_text_of_the_page() -> None:
    text = (
        '??? abstract "API Reference"\n'
        "    ::: starlette.testclient.TestClient\n"
        "        options:\n"
        "            parameter_headings: false\n"
        "            filters:\n"
        '                - "__init__"\n\n'
        "The test client allows you to make requests against your ASGI application.\n\n"
        "::: starlette.responses.Response\n    options:\n        show_root_heading: true\n\n"
        '!!! note "Sessions"\n    The client keeps cookies.\n'
    )
    assert [u.quoted for u in units(text)] == [
        "The test client allows you to make requests against your ASGI application.",
        "Sessions: The client keeps cookies.",
    ]


def test_a_passage_cut_in_a_directive_line_or_before_an_items_text_reads_as_the_page_does() -> None:
    before = "Then install the file with ``pip``.\n\n.. code-block:: none"
    text = "code-block:: none\n\n    $ pip install flaskr-1.0.0-py3-none-any.whl\n\nPip installs it.\n"
    assert [(u.kind, u.text) for u in in_document(before, text)] == [
        (Kind.CODE, "$ pip install flaskr-1.0.0-py3-none-any.whl"),
        (Kind.SENTENCE, "Pip installs it."),
    ], "the directive's line, begun in its middle, is read whole from the passage before"
    listed = "Why build URLs?\n\n1. It is more descriptive.\n2. It escapes special characters.\n4.\n"
    assert [u.text for u in units(listed)][-1] == "2. It escapes special characters.", (
        "the next item's number, cut from its text, is not part of the item before"
    )
    assert all(u.fragment for u in in_document("Intro.\n\n.. note:: 1.", "1.")), (
        "a passage of a cut number alone holds nothing to quote"
    )
    numbered = units("Steps:\n\n#.  Create the app.\n#.  Configure it.\n")
    assert [u.rendered for u in numbered[1:]] == ["-  Create the app.", "-  Configure it."]


def test_directive_options_a_passage_begins_with_and_a_pages_metadata_are_no_text() -> None:
    before = "Useful Functions and Classes\n----------------------------\n\n.. autoclass:: Flask"
    assert in_document(before, "Flask\n   :members:\n   :member-order: bysource\n\nThe app object.\n")[
        -1
    ].text == ("The app object.")
    assert [u.text for u in units(":orphan:\n\nThis page moved.\n")] == ["This page moved."]
    assert [u.text for u in units(":param url: The URL to fetch.\n")] == [":param url: The URL to fetch."], (
        "a field of text is kept"
    )
    only = "Exceptions\n----------\n\n.. autoexception:: requests.RequestException\n.. autofunction:: post\n"
    assert [u.text for u in units(only)] == ["Exceptions"], "a passage of generated reference: its title"


def test_a_content_tab_reads_as_a_box_headed_by_its_title_and_its_fenced_code_is_code() -> None:
    text = (
        "Add the middleware once:\n\n"
        '=== "✅ Do"\n\n    ```python\n    app = Starlette(middleware=[m])\n    ```\n\n'
        '=== "❌ Don\'t"\n\n    Never wrap the app twice.\n\n'
        "!!! example\n\n    ```python\n    x = 1\n    ```\n"
    )
    assert [u.quoted for u in units(text)] == [
        "Add the middleware once:",
        "✅ Do",
        "```python\napp = Starlette(middleware=[m])\n```",
        "❌ Don't: Never wrap the app twice.",
        "Example",
        "```python\nx = 1\n```",
    ], "an indented fence is code, dedented, not a paragraph of the box"


def test_sphinx_tabs_read_as_boxes_headed_by_their_titles() -> None:
    text = (
        ".. tabs::\n\n    .. group-tab:: Bash\n\n        Add this to ``~/.bashrc``:\n\n"
        '        .. code-block:: bash\n\n            eval "$(_FOO_COMPLETE=bash_source foo)"\n\n'
        "    .. code-tab:: python\n\n        import foo\n"
    )
    assert [(u.kind, u.rendered) for u in units(text)] == [
        (Kind.SENTENCE, "Bash: Add this to `~/.bashrc`:"),
        (Kind.CODE, '```\neval "$(_FOO_COMPLETE=bash_source foo)"\n```'),
        (Kind.CODE, "```\nimport foo\n```"),
    ]


def test_a_sentence_introducing_what_only_a_docs_build_shows_is_left_out() -> None:
    text = (
        "Counting is commonly used for verbosity.\n\n.. click:example::\n\n    @click.command()\n"
        "    def log():\n        pass\n\nWhat it looks like:\n\n.. click:run::\n\n"
        "    invoke(log, args=['-vvv'])\n\nThe next paragraph.\n\nContents:\n\n.. toctree::\n\n   quickstart\n"
    )
    assert [u.text for u in units(text) if u.kind == Kind.SENTENCE] == [
        "Counting is commonly used for verbosity.",
        "The next paragraph.",
    ]


def test_pymdownx_blocks_read_as_boxes_and_included_snippets_are_no_text() -> None:
    """FastAPI's docs: `/// tip` blocks, nested tabs of more slashes, and code the docs build
    inserts from another file."""
    text = (
        "/// tip\n\nThe command `fastapi dev` reads your `main.py` file.\n\n///\n\n"
        "/// note | Technical Details\n\nFastAPI is a class that inherits from Starlette.\n\n"
        "You can use Starlette's features too.\n\n///\n\n"
        "{* ../../docs_src/first_steps/tutorial001.py hl[3] *}\n\n{!> ../docs_src/app.py !}\n\n"
        "//// tab | Python 3.8+\n\n```Python\napp = FastAPI()\n```\n\n////\n\n"
        "Paths like https://example.com/a///b stay text.\n\n/// Returns the sum (a Rust doc comment).\n"
    )
    assert [(u.kind, u.rendered) for u in units(text)] == [
        (Kind.SENTENCE, "Tip: The command `fastapi dev` reads your `main.py` file."),
        (Kind.SENTENCE, "Technical Details: FastAPI is a class that inherits from Starlette."),
        (Kind.SENTENCE, "You can use Starlette's features too."),
        (Kind.SENTENCE, "Python 3.8+"),
        (Kind.CODE, "```Python\napp = FastAPI()\n```"),
        (Kind.SENTENCE, "Paths like https://example.com/a///b stay text."),
        (Kind.SENTENCE, "/// Returns the sum (a Rust doc comment)."),
    ]


def test_a_headings_attribute_list_and_a_paragraph_of_an_image_alone_are_no_text() -> None:
    text = (
        "## Status codes { #status-codes }\n\nUse the variables from `fastapi.status`:\n\n"
        '<img src="/img/tutorial/response-status-code/image02.png">\n\nThey hold the same numbers.\n'
    )
    assert [(u.section, u.rendered) for u in units(text)] == [
        ("Status codes", "Use the variables from `fastapi.status`:"),
        ("Status codes", "They hold the same numbers."),
    ]


def test_html_that_formats_words_is_not_shown_and_a_cut_include_line_is_no_text() -> None:
    text = (
        'Data "<dfn title="converting the string">parsing</dfn>" and <abbr title="K-ey W-ord Arg-uments">'
        "<code>kwargs</code></abbr> work, `<code>` in a span stays.\n"
    )
    assert units(text)[0].rendered == 'Data "parsing" and `kwargs` work, `<code>` in a span stays.'
    before = "Override the handler:\n\n{* ../../docs_src/handling_errors/tutorial004_py310.py hl[2,14:19] *}"
    cut = "hl[2,14:19] *}\n\nNow you will get a text version."  # a passage begun inside the include's line
    assert [u.text for u in in_document(before, cut)] == ["Now you will get a text version."]


def test_entities_and_substitutions_read_as_the_page_shows_them() -> None:
    found = units(
        "|fetch|_ takes a URL and returns a |Promise|_.\n\n"
        "Designed &amp; crafted with care &mdash; see https://example.com/?id=1&copy=2.\n\n"
        "Escape it as `&amp;` in HTML.\n"
    )
    assert [u.quoted for u in found] == [
        "fetch takes a URL and returns a Promise.",
        "Designed & crafted with care — see https://example.com/?id=1&copy=2.",
        "Escape it as `&amp;` in HTML.",
    ], "a URL's query and a code span are left as written"
