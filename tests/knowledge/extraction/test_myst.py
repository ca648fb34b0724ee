"""MyST Markdown (Sphinx's Markdown) read as the reST it stands for, from the file on."""

from __future__ import annotations

import time

from knowledge.extraction import extract
from knowledge.extraction.myst import MAX_DEPTH
from knowledge.text.quotes import Kind, units
from tests.support.timing import own_heap

PAGE = """(testing)=

# Testing Click Applications

% a comment only the page's authors see

```{eval-rst}
.. currentmodule:: click.testing
```

Click provides the {ref}`click.testing <testing>` module, and {class}`CliRunner` invokes commands.

```{warning}
These tools should only be used for testing.
```

```{contents}
:depth: 1
:local: true
```

```{code-block} python
:caption: hello.py

@click.command()
def hello():
    click.echo('Hello!')
```

````{tip}
Prefer the explicit pair form:

```python
@click.option('--with-xyz/--without-xyz', default=True)
```
````

```{versionadded} 8.2
```

:::{note}
Colon fences hold directives too.
:::

```{eval-rst}
.. click:example::

    @click.command()
    @click.option('-v', '--verbose', count=True)
    def log(verbose):
        click.echo(f"Verbosity: {verbose}")

.. click:run::

    invoke(log, args=['-vvv'])
```

```python
# {note} in code stays code, and so does {func}`echo`
```
"""


def read(source: str) -> list[tuple[str, str]]:
    text = extract(source.encode(), "testing.md").text
    return [(u.kind.value, u.rendered) for u in units(text)]


def test_myst_directives_and_roles_read_as_sphinx_shows_them() -> None:
    extracted = extract(PAGE.encode(), "testing.md")
    assert extracted.title == "Testing Click Applications"
    assert "{eval-rst}" not in extracted.text and "(testing)=" not in extracted.text
    assert "% a comment" not in extracted.text
    assert read(PAGE) == [
        (
            "sentence",
            "Click provides the click.testing module, and `CliRunner` invokes commands.",
        ),
        ("sentence", "Warning: These tools should only be used for testing."),
        ("code", "```\n# hello.py\n@click.command()\ndef hello():\n    click.echo('Hello!')\n```"),
        ("sentence", "Tip: Prefer the explicit pair form:"),
        ("code", "```python\n@click.option('--with-xyz/--without-xyz', default=True)\n```"),
        ("sentence", "New in version 8.2."),
        ("sentence", "Note: Colon fences hold directives too."),
        (
            "code",
            "```\n@click.command()\n@click.option('-v', '--verbose', count=True)\ndef log(verbose):\n"
            '    click.echo(f"Verbosity: {verbose}")\n```',
        ),
        ("code", "```python\n# {note} in code stays code, and so does {func}`echo`\n```"),
    ], "a table of contents, a current module and the calls that print an example's output show nothing"


def test_markdown_that_is_not_myst_is_left_as_written() -> None:
    plain = (
        "% Pandoc's title line\n\n(see below)=\n\nGET `/users/{name}` and `x`.\n\n"
        "```js\nconst a = {note}\n```\n"
    )
    assert extract(plain.encode(), "plain.md").text == plain


def test_a_myst_page_cut_off_or_nested_beyond_reason_is_read_without_failing() -> None:
    cut = "```{note}\nThe page ends inside the note.\n"
    assert read(cut) == [("sentence", "Note: The page ends inside the note.")]
    levels = 1000
    nested = "\n".join(":" * (levels + 3 - i) + "{note}" for i in range(levels)) + "\nDeep.\n"
    nested += "\n".join(":" * (3 + i) for i in range(levels))
    with own_heap():
        started = time.perf_counter()
        text = extract(nested.encode(), "deep.md").text
        assert time.perf_counter() - started < 2.0
    assert text.count(".. note::") == MAX_DEPTH + 1, "deeper directives are left as written"
    assert any(u.kind == Kind.SENTENCE and "Deep." in u.text for u in units(text))
