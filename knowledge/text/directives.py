"""The markup that frames a page's text: reST directives (`.. warning::`, `.. versionchanged::`,
`.. toctree::`), Markdown admonitions (`!!! note`), pymdownx blocks (`/// tip`), their options,
comments, link targets and the snippets a docs build inserts. Each says what a reader of the
built page is shown of it ("Warning: …", "Changed in version 2.3: …"), or that it shows
nothing; `knowledge.text.quotes` cuts what it shows into units.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from knowledge.text.markup import readable
from knowledge.text.syntax import DIRECTIVE, DOCTEST, FENCE, ITEM, OPTION_LINE, TABLE, indentation

DESCRIPTION = re.compile(
    r"^\s*\.\.\s+(?:py:|std:|rst:)?(?:data|function|class|method|attribute|module|exception|"
    r"decorator|envvar|option|confval|describe|object|property)::\s*(?P<name>.+?)\s*$",
    re.I,
)
_DIRECTIVE_PARTS = re.compile(r"^\s*\.\.\s+(?:[\w-]+:)?(?P<name>[\w-]+)::\s*(?P<argument>.*?)\s*$")
ADMONITIONS = {
    "note": "Note", "warning": "Warning", "tip": "Tip", "important": "Important", "hint": "Hint",
    "caution": "Caution", "danger": "Danger", "attention": "Attention", "error": "Error",
    "seealso": "See also", "todo": "To do",
}  # fmt: skip
"""Directives Sphinx shows as a box headed by their name: quoted as "Warning: …"."""
VERSIONS = {"versionadded": "New in version", "versionchanged": "Changed in version",
            "deprecated": "Deprecated since version", "versionremoved": "Removed in version"}  # fmt: skip
"""Directives whose argument is a version: "Changed in version 2.3: …"."""
_SILENT = frozenset((
    "toctree", "image", "figure", "include", "currentmodule", "module", "automodule", "autoclass",
    "autofunction", "automethod", "autodata", "autoexception", "autoattribute", "tabs", "only",
    "rst-class", "highlight", "index", "contents", "raw", "meta", "default-role", "role", "run",
))  # fmt: skip
"""Directives whose argument is a file, a module or a setting: nothing a reader is shown (nor
the calls `click:run` makes to show an example's output, which only a docs build prints)."""
_TITLED = frozenset(("admonition", "tab", "group-tab"))
"""Directives shown as a box or a tab headed by their argument (a generic admonition, and the
tabs of sphinx-tabs and sphinx-design): quoted as "Title: …"."""
_NOT_PROSE = frozenset(("toctree", "image", "include", "index", "contents", "raw", "meta", "run"))
"""Silent directives whose body is not prose either (a table of contents' entries …)."""
MKDOCS_ADMONITION = re.compile(
    r'^\s*(?:(?:!!!|\?\?\?\+?)\s+(?P<name>[\w-]+)|===\+?(?=\s+"))(?:\s+"(?P<title>[^"]*)")?\s*$'
)
"""A Markdown admonition (MkDocs, Python-Markdown): `!!! note "Title"`, its body indented;
or a content tab, `=== "Title"`, read as one headed by its title."""
BLOCK = re.compile(r"^\s*/{3,}\s*(?P<name>[a-z][a-z-]*)(?:\s*\|\s*(?P<title>.*?))?\s*$")
"""A block of pymdownx.blocks (FastAPI's, Typer's and SQLModel's docs): `/// tip`, `/// note |
Technical Details`, its body not indented, up to a line of `///`."""
_BLOCK_END = re.compile(r"^\s*/{3,}\s*$")
INCLUDE = re.compile(r"^\s*\{(?:\*|!>?)\s.*?\s(?:\*|!)\}\s*$")
"""A snippet the docs build inserts from another file (FastAPI's `{* ../../docs_src/app.py hl[3]
*}`, markdown-include's `{!> ../docs_src/app.py !}`): no text of the page."""
AUTODOC = re.compile(r"^\s*:::\s+[\w.:-]+\s*$")
"""mkdocstrings' `::: package.Class` and its indented options: reference generated from the
code when the site is built, no text of the page (as reST's `autoclass`)."""
_OPTION_NAME = re.compile(r"^\s*:(?P<name>[\w-]+):(?:\s|$)")
_OPTIONS = frozenset((
    "members", "undoc-members", "inherited-members", "show-inheritance", "member-order",
    "special-members", "private-members", "exclude-members", "noindex", "no-index", "orphan",
    "nocomments", "tocdepth", "maxdepth", "caption", "name", "class", "language", "linenos",
    "emphasize-lines", "lineno-start", "dedent", "alt", "width", "height", "align", "target",
    "titlesonly", "hidden", "glob", "platform", "synopsis",
))  # fmt: skip
"""Options of directives and a page's metadata fields: no text of the page."""
_CAPTION = re.compile(r"^\s*:caption:\s*(?P<caption>\S.*?)\s*$")
_COMMENT = re.compile(r"^\s*\.\.(?:\s|$)(?!\s*[\w:-]+::)")
_REFERENCE = re.compile(r"^\s{0,3}\[[^\]\n]+\]:\s+\S+\s*$")
"""A Markdown link reference definition, `[jinja2]: https://…`: no text of the page."""


@dataclass(frozen=True)
class Framed:
    """What a reader is shown of a directive or a box: `text` ('' for nothing), and `end`, the
    line after what was read."""

    text: str
    end: int
    hides: bool = False
    """It stands for what only a docs build shows (a table of contents, an image, a run's
    output): a sentence ending with ':' just before it introduces nothing to quote."""


def directive(lines: list[str], i: int) -> Framed:
    """A directive that is not code: its text (the argument and the lines continuing it) as
    Sphinx shows it, an admonition's or a version note's name, or a generic admonition's
    title, before its first paragraph ("Warning: …", "Changed in version 2.3: …"); nothing
    for one that names a file or a module. Its body's other paragraphs are read as any
    text."""
    found = _DIRECTIVE_PARTS.match(lines[i])
    name, argument = (found["name"].lower(), found["argument"]) if found else ("", "")
    base, j = indentation(lines[i]), i + 1
    parts = [argument] if argument else []
    while (
        j < len(lines)
        and lines[j].strip()
        and indentation(lines[j]) > base
        and not OPTION_LINE.match(lines[j])
    ):
        parts.append(lines[j].strip())
        j += 1
    j = past_options(lines, j)
    text = " ".join(parts)
    if name in _NOT_PROSE:
        j = past_block(lines, j, base)
    if name in _SILENT:
        return Framed("", j, hides=name in _NOT_PROSE)
    if name in VERSIONS:
        version, _, body = text.partition(" ")
        if not body:
            body, j = _first_paragraph(lines, j, base)
        text = f"{VERSIONS[name]} {version}".strip() + (f": {body}" if body else ".")
    elif name in _TITLED:  # a box or a tab headed by its argument: "Note: …", "Bash: …"
        body, j = _first_paragraph(lines, j, base)
        text = _headed(text, body)
    elif name in ADMONITIONS and not text:
        text, j = _first_paragraph(lines, j, base)
    if name in ADMONITIONS and text:
        text = f"{ADMONITIONS[name]}: {text}"
    return Framed(text, j)


def admonition(lines: list[str], i: int, found: re.Match[str]) -> Framed:
    """A Markdown admonition (`!!! warning`) read as its reST directive is: "Warning: …"
    before its first paragraph, or its title ("Note: Keep the key secret."); its body's other
    paragraphs are read as any text."""
    name = (found["name"] or "").lower()
    title = (found["title"] if found["title"] is not None else ADMONITIONS.get(name, name.title())).strip()
    body = next((k for k in range(i + 1, len(lines)) if lines[k].strip()), len(lines))
    if body < len(lines) and AUTODOC.match(lines[body]) and indentation(lines[body]) > indentation(lines[i]):
        return Framed("", past_block(lines, body, indentation(lines[i])))  # generated reference only
    text, j = _first_paragraph(lines, i + 1, indentation(lines[i]))
    return Framed(_headed(title, text), j if text else i + 1)


def pymdown_block(lines: list[str], i: int, found: re.Match[str]) -> Framed:
    """A pymdownx block (`/// warning`, `/// tab | Python`) read as an admonition is: its title,
    or its name as a box shows it, before its first paragraph ("Warning: …"); the rest of its
    body is read as any text, and its closing `///` as none."""
    name = found["name"].lower()
    title = (found["title"] or ADMONITIONS.get(name, name.title())).strip()
    j = i + 1
    while j < len(lines) and not lines[j].strip():
        j += 1
    end = j
    while (
        end < len(lines)
        and lines[end].strip()
        and not (_BLOCK_END.match(lines[end]) or BLOCK.match(lines[end]))
    ):
        end += 1
    paragraph = lines[j:end]
    text = ""
    if paragraph and not any(p.match(paragraph[0]) for p in (FENCE, ITEM, DIRECTIVE, TABLE, DOCTEST)):
        text = " ".join(line.strip() for line in paragraph)
    return Framed(_headed(title, text), end if text else i + 1)


def _headed(title: str, text: str) -> str:
    """A box's first paragraph headed by its title ("Warning: …"), or either alone."""
    return f"{title}: {text}" if title and text else text or title


def past_block(lines: list[str], j: int, base: int) -> int:
    """The line after the blank lines and the lines indented deeper than `base` from `j` on."""
    while j < len(lines) and (not lines[j].strip() or indentation(lines[j]) > base):
        j += 1
    return j


def _first_paragraph(lines: list[str], j: int, base: int) -> tuple[str, int]:
    """The paragraph of a directive's body starting after the blank lines at `j` ('' when its
    body begins with something else, a list or code), and the line after it."""
    k = j
    while k < len(lines) and not lines[k].strip():
        k += 1
    if (
        k == len(lines)
        or indentation(lines[k]) <= base
        or any(p.match(lines[k]) for p in (ITEM, DIRECTIVE, FENCE, DOCTEST))
    ):
        return "", j
    end = k
    while end < len(lines) and lines[end].strip() and indentation(lines[end]) > base:
        end += 1
    text = " ".join(line.strip() for line in lines[k:end])
    if text.endswith("::"):  # it introduces a literal block: left to the paragraph reader
        return "", j
    return text, end


def unread(line: str) -> bool:
    """A reST comment or link target, a Markdown link reference definition, an option line of
    a directive a passage begins after (`:members:`) or a page's metadata (`:orphan:`), the
    `///` closing a pymdownx block, or a snippet the docs build inserts from another file."""
    option = _OPTION_NAME.match(line)
    return bool(
        _COMMENT.match(line)
        or _REFERENCE.match(line)
        or _BLOCK_END.match(line)
        or INCLUDE.match(line)
        or (option and option["name"] in _OPTIONS)
    )


def caption(options: list[str]) -> str:
    """A code block's `:caption:` (its file's name, usually), or ''."""
    for line in options:
        if found := _CAPTION.match(line):
            return readable(found["caption"]).replace("`", "")
    return ""


def past_options(lines: list[str], i: int) -> int:
    """The line after a directive's options (`:caption: app.py`, `:linenos:`), which are
    not its content."""
    while i < len(lines) and OPTION_LINE.match(lines[i]):
        i += 1
    return i
