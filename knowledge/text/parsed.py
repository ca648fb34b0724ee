"""A document's quotable units read by the parsers made for its markup (`knowledge.text.flavours`
says which pages): markdown-it-py with mdit-py-plugins for Markdown and MyST, docutils for reStructuredText.

`parsed_units(text, flavour)` returns what `knowledge.text.quotes.document_units` returns:
sentences, list items and code blocks, in order, each with its section, its directive's label
and where its source lies in `text` (`document[start:end]`). The parsers find the blocks
(paragraphs, items, code, boxes) and their lines; sentences are cut within a paragraph as the
line reader cuts them (`quotes.sentences`). A unit's `text` is its source, its lines joined, as
the line reader keeps it; for reST its `display` is the text as the parser renders it (a role as
the page shows it), for Markdown the line reader's rendering (`Unit.rendered`).

Sphinx's directives and roles are unknown to docutils: tolerant handlers stand in for them
(code directives are code, boxes and version notes head their first paragraph, autodoc and
tables of contents show nothing, `py:function` labels its body); the reporter is silent and
nothing raises: a parser that fails on a page leaves it to the line reader.
"""

from __future__ import annotations

import bisect
import functools
import io
import logging
import re
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from docutils import nodes
from docutils.frontend import get_default_settings
from docutils.parsers.rst import Directive, Parser, directives, roles
from docutils.statemachine import StringList
from docutils.utils import new_document
from markdown_it import MarkdownIt
from markdown_it.tree import SyntaxTreeNode
from mdit_py_plugins.admon import admon_plugin
from mdit_py_plugins.colon_fence import colon_fence_plugin
from mdit_py_plugins.deflist import deflist_plugin
from mdit_py_plugins.front_matter import front_matter_plugin

from knowledge.text.directives import ADMONITIONS, AUTODOC, INCLUDE, VERSIONS
from knowledge.text.flavours import Flavour
from knowledge.text.markup import readable
from knowledge.text.quotes import MAX_UNIT_CHARS, Kind, Unit, document_units, sentences
from knowledge.text.syntax import ATTRIBUTES

log = logging.getLogger(__name__)

MAX_DEPTH = 40
"""Blocks nested deeper are read as one paragraph (each level is a recursion)."""


@dataclass(frozen=True)
class _Block:
    """A unit found by a parser: its lines in the document [first, last), before offsets."""

    kind: Kind
    text: str
    first: int
    last: int
    section: str
    label: str
    display: str | None = None


def parsed_units(text: str, flavour: str) -> list[Unit]:
    """The quotable units of a whole document of `flavour` ("markdown", "myst", "rst"), each
    with where its source lies in `text`; the line reader's when the parser fails."""
    try:
        rst = flavour == Flavour.RST
        found = list(_rst(text, 0) if rst else _markdown(text, 0, flavour == Flavour.MYST))
        placed = _placed(text, found, _RST_BREAK if rst else _BREAK)
        if not placed and text.strip():  # (markdown-it leaves out what is nested too deep)
            return document_units(text)
        return _titled(placed, document_units(text))
    except Exception as exc:  # a parser's bug on one page: the line reader reads it
        log.warning(
            "the %s parser failed on a document of %d characters (%s): read by the line reader",
            flavour, len(text), type(exc).__name__,
        )  # fmt: skip
        return document_units(text)


# --- Offsets ---------------------------------------------------------------------------------


def _titled(placed: list[Unit], line_read: list[Unit]) -> list[Unit]:
    """`placed` with where the heading of each one's section begins (`Unit.titled`: a passage
    shows the section only when it holds that heading), the last heading the line reader found
    before the unit."""
    headings = sorted({u.titled for u in line_read if u.titled is not None})
    out = []
    for u in placed:
        k = bisect.bisect_right(headings, u.start if u.start is not None else -1)
        out.append(replace(u, titled=headings[k - 1]) if u.section and k else u)
    return out


_BREAK = re.compile(r"\r\n|\r|\n")
"""Where markdown-it ends a line."""
_RST_BREAK = re.compile("\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")
"""Where docutils ends a line (`str.splitlines`)."""


def _split(text: str, breaks: re.Pattern[str]) -> tuple[list[str], list[int]]:
    """`text`'s lines as a parser counts them, and where each begins."""
    found = list(breaks.finditer(text))
    starts = [0, *(f.end() for f in found)]
    ends = [*(f.start() for f in found), len(text)]
    return [text[a:b] for a, b in zip(starts, ends, strict=True)], starts


def _placed(text: str, found: list[_Block], breaks: re.Pattern[str]) -> list[Unit]:
    """Units with offsets: a block's from its lines; a sentence within its paragraph by its
    first two words, searched for from where the one before it begins."""
    lines, at = _split(text, breaks)
    out: list[Unit] = []
    cursor, block, previous = 0, 0, None
    for b in found:
        first = min(max(b.first, 0), len(at) - 1)
        last = min(max(b.last, first + 1), len(at))
        while last > first + 1 and not lines[last - 1].strip():
            last -= 1
        lo, hi = at[first], at[last - 1] + len(lines[last - 1])
        key = (b.first, b.last)
        if key != previous:
            block, previous, cursor = block + 1, key, lo
        start = _find(text, b, max(lo, cursor), hi)
        start = start if start >= 0 else max(lo, min(cursor, hi))
        cursor = start + 1
        out.append(Unit(b.text, b.kind, block, b.section, b.label, False, start, hi, display=b.display))
    for k in range(len(out) - 1):  # a unit of a block ends where the next one begins
        a, n = out[k], out[k + 1]
        if (
            a.block == n.block
            and a.start is not None
            and n.start is not None
            and a.start < n.start < (a.end or 0)
        ):
            end = n.start
            while end > a.start + 1 and text[end - 1].isspace():
                end -= 1
            out[k] = Unit(a.text, a.kind, a.block, a.section, a.label, False, a.start, end, display=a.display)
    return [u for u in out if u.text.strip()]


_SPACE = re.compile(r"\s*")


def _find(text: str, b: _Block, lo: int, hi: int) -> int:
    if b.kind == Kind.CODE:
        first = next((line.strip() for line in b.text.split("\n") if line.strip()), "")
        found = text.find(first, lo, hi) if first else -1
        return found if found >= 0 else -1
    words = b.text.split(maxsplit=2)
    if not words:
        return -1
    at = text.find(words[0], lo, hi)
    while at >= 0 and len(words) > 1:
        after = _SPACE.match(text, at + len(words[0]))
        if after is not None and text.startswith(words[1], after.end()):
            return at
        at = text.find(words[0], at + 1, hi)
    return at


def _cap(text: str) -> str:
    if len(text) <= MAX_UNIT_CHARS:
        return text
    cut = text.rfind("\n", 0, MAX_UNIT_CHARS)
    cut = cut if cut > MAX_UNIT_CHARS // 2 else text.rfind(" ", 0, MAX_UNIT_CHARS)
    return text[: max(cut, 1)].rstrip() + "\n…"


def _joined(lines: list[str]) -> str:
    return " ".join(line.strip() for line in lines if line.strip())


def _prose(
    text: str, first: int, last: int, section: str, label: str, rendered: str | None = None
) -> Iterator[_Block]:
    """A paragraph's sentences; `rendered` (the parser's rendering) gives each its display
    when it cuts into as many sentences."""
    if text.endswith("::"):  # reST: "Example::" introduces a literal block
        text = "" if text == "::" else text[:-3] if text.endswith(" ::") else text[:-1]
        rendered = None
    found = sentences(text, 0)
    shown = sentences(rendered, 0) if rendered is not None else []
    pair = len(shown) == len(found)
    for k, s in enumerate(found):
        yield _Block(Kind.SENTENCE, s.text, first, last, section, label, shown[k].text if pair else None)


# --- Markdown and MyST -----------------------------------------------------------------------


def _md(myst: bool) -> MarkdownIt:
    """CommonMark with tables, front matter, definition lists and MkDocs' admonitions; MyST's
    colon fences too (in MkDocs, `::: package.Class` is mkdocstrings', not a fence)."""
    md = (
        MarkdownIt("commonmark", {"maxNesting": MAX_DEPTH})
        .enable("table")
        .use(front_matter_plugin)
        .use(deflist_plugin)
        .use(admon_plugin)
    )
    return md.use(colon_fence_plugin) if myst else md


_MD, _MYST = _md(myst=False), _md(myst=True)
_DEFINITION = re.compile(r"^[:~][ \t]+")
"""A definition's marker (`:   Its definition.`)."""
_MYST_ROLE = re.compile(r"\{(?P<name>[\w:.-]+)\}(?=`[^`\n]+`)")
_MYST_NAME = re.compile(r"^\{(?P<name>[\w:.-]+)\}\s*(?P<argument>.*?)\s*$")
_OPTION = re.compile(r"^\s*:[\w-]+:(?:\s.*)?$")


@dataclass
class _Context:
    section: str = ""
    label: str = ""
    heading: str = ""
    """A box's or version note's name, for the first paragraph of its body ("Warning: …")."""
    line: int = 0
    """The box's first line in the document: a paragraph it heads is read from there."""


def _markdown(text: str, shift: int, myst: bool) -> Iterator[_Block]:
    lines = _split(text, _BREAK)[0]
    yield from _md_children(
        SyntaxTreeNode((_MYST if myst else _MD).parse(text)), lines, shift, myst, _Context(), 0
    )


def _md_children(
    node: SyntaxTreeNode, lines: list[str], shift: int, myst: bool, ctx: _Context, depth: int
) -> Iterator[_Block]:
    yield from _md_blocks(node.children, lines, shift, myst, ctx, depth)


def _md_blocks(
    children: list[SyntaxTreeNode], lines: list[str], shift: int, myst: bool, ctx: _Context, depth: int
) -> Iterator[_Block]:
    skip = False
    for child in children:
        if skip and child.type == "code_block":  # mkdocstrings' options
            skip = False
            continue
        skip = child.type == "paragraph" and bool(child.map) and _generated(lines, child)
        if not skip:
            yield from _md_node(child, lines, shift, myst, ctx, depth + 1)


def _generated(lines: list[str], paragraph: SyntaxTreeNode) -> bool:
    """mkdocstrings' `::: package.Class` or a snippet a docs build inserts (`{* app.py *}`):
    no text of the page."""
    first, last = paragraph.map or (0, 0)
    return last > first and bool(AUTODOC.match(lines[first]) or INCLUDE.match(lines[first]))


def _md_node(  # (one case per block type, as the parser names them)
    node: SyntaxTreeNode, lines: list[str], shift: int, myst: bool, ctx: _Context, depth: int
) -> Iterator[_Block]:
    kind = node.type
    first, last = node.map if node.map else (0, 0)
    span = lines[first:last]
    a, z = first + shift, last + shift
    if kind == "heading":
        ctx.section = ATTRIBUTES.sub("", node.children[0].content if node.children else "").strip()
        ctx.label = ""
    elif kind in ("front_matter", "hr", "html_inline"):
        return
    elif kind == "paragraph":
        raw = _joined(span)
        if node.parent is not None and node.parent.type == "dd":
            raw = _DEFINITION.sub("", raw)
        if ctx.heading:  # (read from the box's line, which says its heading)
            raw, ctx.heading, a = f"{ctx.heading}: {raw}", "", min(a, ctx.line)
        yield from _prose(_myst_roles(raw) if myst else raw, a, z, ctx.section, ctx.label)
    elif kind == "html_block":
        shown = readable(_joined(span))
        if shown.strip():
            yield from _prose(_joined(span), a, z, ctx.section, ctx.label)
    elif kind in ("code_block", "table"):
        body = textwrap.dedent("\n".join(span)).strip("\n")
        yield _Block(Kind.CODE, _cap(body), a, z, ctx.section, ctx.label)
    elif kind in ("fence", "colon_fence"):
        yield from _md_fence(node, lines, shift, myst, ctx, depth)
    elif kind == "list_item":
        yield from _md_item(node, lines, shift, myst, ctx, depth)
    elif kind == "dt":
        yield from _prose(_joined(lines[first : first + 1]), a, a + 1, ctx.section, ctx.label)
    elif kind == "admonition":
        tag = str(node.meta.get("tag", "")) if node.meta else ""
        title = next((c for c in node.children if c.type == "admonition_title"), None)
        name = title.children[0].content if title and title.children else ADMONITIONS.get(tag, tag.title())
        inner = _Context(ctx.section, ctx.label, name.strip())
        kids = [c for c in node.children if c.type != "admonition_title"]
        yield from _md_box(kids, lines, shift, myst, inner, depth, a)
    elif depth > MAX_DEPTH:
        yield from _prose(_joined(span), a, z, ctx.section, ctx.label)
    else:
        yield from _md_children(node, lines, shift, myst, ctx, depth)


def _md_item(
    node: SyntaxTreeNode, lines: list[str], shift: int, myst: bool, ctx: _Context, depth: int
) -> Iterator[_Block]:
    """A list item: its first paragraph as written (with its marker), the rest as blocks."""
    children = list(node.children)
    if children and children[0].type == "paragraph" and children[0].map:
        first, last = children[0].map
        own = _joined(lines[first:last])
        yield _Block(Kind.ITEM, _cap(own), first + shift, last + shift, ctx.section, ctx.label)
        children = children[1:]
    for child in children:
        yield from _md_node(child, lines, shift, myst, ctx, depth + 1)


def _md_fence(
    node: SyntaxTreeNode, lines: list[str], shift: int, myst: bool, ctx: _Context, depth: int
) -> Iterator[_Block]:
    """A code block as written (with its fences); a MyST directive (```` ```{note} ````) as
    what Sphinx shows of it."""
    first, last = node.map if node.map else (0, 0)
    directive = _MYST_NAME.match(node.info or "")
    if directive is None:
        code = textwrap.dedent("\n".join(lines[first:last])).strip("\n")
        yield _Block(Kind.CODE, _cap(code), first + shift, last + shift, ctx.section, ctx.label)
        return
    name, argument = directive["name"].lower().rsplit(":", 1)[-1], directive["argument"]
    body = node.content.split("\n")
    options = 0
    while options < len(body) and _OPTION.match(body[options]):
        options += 1
    content = "\n".join(["", *body[options:]]) if options else node.content
    offset = first + 1 + shift - (1 if options else 0) + options
    if name in _CODE:
        code = textwrap.dedent("\n".join(body[options:])).strip("\n")
        if code.strip():
            yield _Block(Kind.CODE, _cap(code), first + shift, last + shift, ctx.section, ctx.label)
    elif name in _SILENT:
        return
    elif name == "eval-rst":
        yield from _rst(content, offset)
    else:
        heading = _heading(name, argument)
        label = argument if name in _DESCRIPTIONS else ctx.label
        inner = _Context(ctx.section, label, heading)
        children = (
            list(SyntaxTreeNode((_MYST if myst else _MD).parse(content)).children)
            if depth <= MAX_DEPTH
            else []
        )
        yield from _md_box(children, content.split("\n"), offset, myst, inner, depth, first + shift)


def _md_box(
    body: list[SyntaxTreeNode], lines: list[str], shift: int, myst: bool, inner: _Context, depth: int, at: int
) -> Iterator[_Block]:
    """A box's body, its heading before its first paragraph ("Warning: …"), or alone before
    the body when that begins with something else (code, a list) or is empty."""
    inner.line = at
    if inner.heading and not (body and body[0].type == "paragraph"):
        yield _Block(Kind.SENTENCE, _alone(inner.heading), at, at + 1, inner.section, inner.label)
        inner.heading = ""
    yield from _md_blocks(body, lines, shift, myst, inner, depth)


def _myst_roles(text: str) -> str:
    """MyST's roles (`{func}`x``) written as reST's, which `readable` renders."""
    return _MYST_ROLE.sub(r":\g<name>:", text)


# --- What Sphinx's directives show -------------------------------------------------------------

_CODE = frozenset((
    "code-block", "code", "sourcecode", "code-cell", "testcode", "testoutput", "doctest", "ipython",
    "jupyter-execute", "prompt", "code-tab", "example", "testsetup", "testcleanup",
))  # fmt: skip
_SILENT = frozenset((
    "toctree", "include", "literalinclude", "currentmodule", "module", "automodule", "autoclass",
    "autofunction", "automethod", "autodata", "autoexception", "autoattribute", "autosummary",
    "index", "only", "highlight", "tabularcolumns", "default-role", "run", "image", "figure",
    "contents", "raw", "meta", "sectionauthor", "codeauthor", "glossary", "productionlist",
    "rst-class", "program", "click:run", "graphviz", "plot", "mermaid", "autoprogram",
))  # fmt: skip
_NOT_PROSE = frozenset((
    "toctree", "image", "figure", "include", "literalinclude", "index", "contents", "raw", "meta", "run",
    "click:run", "graphviz", "plot", "mermaid", "autosummary", "productionlist",
))  # fmt: skip
"""Directives whose body is no text of the page either (a table of contents' entries …)."""
_DESCRIPTIONS = frozenset((
    "data", "function", "class", "method", "attribute", "module", "exception", "decorator",
    "envvar", "option", "confval", "describe", "object", "property", "classmethod", "staticmethod",
))  # fmt: skip
_TITLED = frozenset(("admonition", "tab", "group-tab", "tab-item", "card", "dropdown", "topic", "sidebar"))


def _heading(name: str, argument: str) -> str:
    """What a box or a note shows before its first paragraph: "Warning", "Changed in version
    2.3", a titled box's title; '' for any other directive."""
    if name in ADMONITIONS:
        return f"{ADMONITIONS[name]}: {argument}".rstrip(": ") if argument else ADMONITIONS[name]
    if name in VERSIONS:
        return f"{VERSIONS[name]} {argument}".strip()
    if name in _TITLED:
        return argument
    return ""


# --- reStructuredText ------------------------------------------------------------------------


class _AnyOption(dict[str, Callable[[str], Any]]):
    """A directive's options, whatever they are: kept as written (`:caption: app.py`)."""

    def __missing__(self, key: str) -> Callable[[str], Any]:
        return directives.unchanged

    def __contains__(self, key: object) -> bool:
        return True

    def __bool__(self) -> bool:  # (docutils reads options only when a directive has some)
        return True


class _Sphinx(Directive):
    """A Sphinx directive, read as what its page shows: a node the walker reads
    (`lore_kind`: code, silent, box), its body parsed as reST."""

    has_content = True
    optional_arguments = 1
    final_argument_whitespace = True
    option_spec = _AnyOption()

    def run(self) -> list[nodes.Node]:
        name = self.name.lower().rsplit(":", 1)[-1]
        argument = self.arguments[0] if self.arguments else ""
        first = self.lineno - 1
        if name in _NOT_PROSE or self.name.lower() in _NOT_PROSE:
            return []
        if name in _SILENT or self.name.lower() in _SILENT:  # its body, if any, is the page's text
            box = nodes.container()
            self.state.nested_parse(self.content, self.content_offset, box)
            return [box]
        if name in _CODE:
            code = "\n".join(self.content)
            caption = readable(str(self.options.get("caption") or "")).replace("`", "")
            node = nodes.literal_block(code, f"# {caption}\n{code}" if caption else code)
            node.line = self.lineno  # (from its directive's line, which names its caption)
            node["lore_last"] = self.content_offset + len(self.content)
            return [node] if code.strip() else []
        box = nodes.container()
        box.line = self.lineno
        same_line = " " in argument.split("\n", 1)[0]
        version, _, rest = argument.partition(" ") if same_line else argument.partition("\n")
        box["lore_heading"] = _heading(name, version if name in VERSIONS else argument)
        box["lore_label"] = argument if name in _DESCRIPTIONS else ""
        box["lore_first"] = first
        if name in VERSIONS and rest.strip():  # the note on the directive's lines
            at = first if same_line else first + 1  # (the argument runs to the first blank line)
            note = rest.split("\n")
            self.state.nested_parse(
                StringList(note, items=[("<lore>", at + k) for k in range(len(note))]), at, box
            )
        self.state.nested_parse(self.content, self.content_offset, box)
        return [box]


_SPHINX_DIRECTIVES = (
    *ADMONITIONS, *VERSIONS, *_CODE, *_SILENT, *_DESCRIPTIONS, *_TITLED, "rubric", "centered", "hlist", "tabs",
    "tab-set", "grid", "grid-item", "grid-item-card",
)  # fmt: skip
_DOMAINS = ("py", "std", "rst", "js", "c", "cpp", "click")
_CODE_ROLES = frozenset((
    "func", "meth", "class", "data", "attr", "mod", "exc", "obj", "const", "envvar", "option",
    "program", "file", "command", "samp", "kbd", "code", "confval",
))  # fmt: skip
_SPHINX_ROLES = (
    *_CODE_ROLES,
    "ref",
    "doc",
    "term",
    "pep",
    "rfc",
    "abbr",
    "dfn",
    "any",
    "download",
    "issue",
    "pr",
)
_EXPLICIT = re.compile(r"(?P<title>.*?)\s*<(?P<target>[^<>]+)>", re.S)


def _role(
    name: str,
    rawtext: str,
    text: str,
    lineno: int,
    inliner: object,
    options: dict[str, Any] | None = None,
    content: list[str] | None = None,
) -> tuple[list[nodes.Node], list[nodes.system_message]]:
    """A Sphinx role as its page shows it: `url_for()` for :func:`~flask.url_for`, its title or
    its target's last part; PEP 8 for :pep:`8`."""
    role = name.lower().rsplit(":", 1)[-1]
    explicit = _EXPLICIT.fullmatch(text)
    if explicit and explicit["title"]:
        shown = explicit["title"]
    else:
        target = (explicit["target"] if explicit else text).strip().lstrip("!")
        shown = target[1:].rsplit(".", 1)[-1] if target.startswith("~") else target
    if role in ("pep", "rfc"):
        return [nodes.Text(f"{role.upper()} {shown}")], []
    if role == "ref" and not (explicit and explicit["title"]):
        words = re.sub(r"[-_]+", " ", shown).strip()
        return [nodes.Text(words[:1].upper() + words[1:])], []
    if role not in _CODE_ROLES:
        return [nodes.Text(shown)], []
    if role in ("func", "meth") and not shown.endswith(")"):
        shown += "()"
    return [nodes.literal(rawtext, shown)], []


@functools.cache
def _register() -> None:
    """Sphinx's directives and roles, as docutils is told them (its registry is global: told
    once, at the first reST page read, never at import)."""
    for name in _SPHINX_DIRECTIVES:
        for full in (name, *(f"{d}:{name}" for d in _DOMAINS)):
            if full not in ("note", "warning", "tip", "important", "hint", "caution", "danger", "attention",
                            "error", "admonition", "code", "topic", "sidebar", "rubric", "include", "raw",
                            "image", "figure", "contents", "meta", "default-role"):  # fmt: skip
                directives.register_directive(full, _Sphinx)
    for name in ("include", "raw", "literalinclude"):  # never read a file, nor pass HTML through
        directives.register_directive(name, _Sphinx)
    for name in _SPHINX_ROLES:
        for full in (name, *(f"{d}:{name}" for d in _DOMAINS)):
            roles.register_local_role(full, _role)  # type: ignore[arg-type]


def _settings() -> Any:
    settings = get_default_settings(Parser)
    settings.report_level = 5
    settings.halt_level = 5
    settings.warning_stream = io.StringIO()
    settings.file_insertion_enabled = False
    settings.raw_enabled = False
    settings.character_level_inline_markup = False
    return settings


def _rst(text: str, shift: int, ctx: _Context | None = None, depth: int = 0) -> Iterator[_Block]:
    _register()
    settings = _settings()
    settings.line_length_limit = max(10_000, len(text) + 1)
    settings.warning_stream = io.StringIO()
    document = new_document("<lore>", settings)
    Parser().parse(text, document)
    lines = _split(text, _RST_BREAK)[0]
    first = next((c for c in document.children if not isinstance(c, (nodes.comment, nodes.target))), None)
    if isinstance(first, nodes.field_list):  # a page's metadata (`:orphan:`), as Sphinx reads it
        document.remove(first)
    yield from _rst_children(document, lines, shift, ctx or _Context(), depth)


_UNKNOWN = re.compile(r"^\.\.\s+[\w:.-]+::")


def _unknown(
    node: nodes.system_message, lines: list[str], shift: int, ctx: _Context, depth: int
) -> Iterator[_Block]:
    """The body of a directive no handler knows (docutils reports it with its text): read as
    any text, its options left out."""
    written = next((c for c in node.children if isinstance(c, nodes.literal_block)), None)
    if written is None or not isinstance(node.line, int) or depth > MAX_DEPTH:
        return
    source = written.astext().split("\n")
    if not source or not _UNKNOWN.match(source[0]):
        return
    at = min(node.line, len(lines)) - 1  # (docutils reports the line after the directive)
    while at > 0 and lines[at].strip() != source[0].strip():
        at -= 1
    body = source[1:]
    k = 0
    while k < len(body) and _OPTION.match(body[k]):
        body[k], k = "", k + 1
    yield from _rst(textwrap.dedent("\n".join(body)), shift + at + 1, ctx, depth + 1)


def _rst_children(
    node: nodes.Element, lines: list[str], shift: int, ctx: _Context, depth: int
) -> Iterator[_Block]:
    for child in node.children:
        if isinstance(child, nodes.Element):
            yield from _rst_node(child, lines, shift, ctx, depth + 1)


_SKIPPED = (
    nodes.system_message, nodes.comment, nodes.target, nodes.substitution_definition, nodes.pending,
    nodes.raw, nodes.image, nodes.title, nodes.problematic, nodes.field_name,
)  # fmt: skip


def _rst_node(  # (one case per node type, as docutils names them)
    node: nodes.Element, lines: list[str], shift: int, ctx: _Context, depth: int
) -> Iterator[_Block]:
    if isinstance(node, nodes.system_message):
        yield from _unknown(node, lines, shift, ctx, depth)
        return
    if isinstance(node, _SKIPPED):
        return
    if isinstance(node, nodes.section):
        title = node.next_node(nodes.title)
        inner = _Context(" ".join(_rendered(title).split()) if title else ctx.section, "", "")
        yield from _rst_children(node, lines, shift, inner, depth)
        return
    if isinstance(node, (nodes.literal_block, nodes.doctest_block)):
        first = (node.line or 1) - 1
        last = int(node.get("lore_last", 0)) or first + len(node.rawsource.split("\n"))
        code = node.astext()
        yield _Block(
            Kind.CODE,
            _cap(textwrap.dedent(code).strip("\n")),
            first + shift,
            last + shift,
            ctx.section,
            ctx.label,
        )
        return
    if isinstance(node, nodes.table):
        first = (node.line or 1) - 1 if node.line else _line_of(node, lines)
        last = first
        while last < len(lines) and lines[last].strip():
            last += 1
        yield _Block(
            Kind.CODE, _cap("\n".join(lines[first:last])), first + shift, last + shift, ctx.section, ctx.label
        )
        return
    if isinstance(node, (nodes.paragraph, nodes.term, nodes.rubric, nodes.line_block)):
        yield from _rst_paragraph(node, lines, shift, ctx)
        return
    if isinstance(node, (nodes.list_item, nodes.field)):
        yield from _rst_item(node, lines, shift, ctx, depth)
        return
    if isinstance(node, nodes.Admonition):
        name = node.tagname if node.tagname != "admonition" else ""
        title = node.next_node(nodes.title)
        heading = _rendered(title) if title and not name else ADMONITIONS.get(name, name.title())
        yield from _rst_box(node, lines, shift, _Context(ctx.section, ctx.label, heading), depth)
        return
    if isinstance(node, nodes.container) and "lore_heading" in node:
        label = str(node["lore_label"]) or ctx.label
        yield from _rst_box(
            node, lines, shift, _Context(ctx.section, label, str(node["lore_heading"])), depth
        )
        return
    if depth > MAX_DEPTH:
        first = _line_of(node, lines)
        yield from _prose(
            " ".join(node.astext().split()), first + shift, first + 1 + shift, ctx.section, ctx.label
        )
        return
    yield from _rst_children(node, lines, shift, ctx, depth)


def _alone(heading: str) -> str:
    """A heading shown without a paragraph after it: a version note ends as a sentence."""
    return (
        f"{heading}."
        if heading.startswith(tuple(VERSIONS.values())) and not heading.endswith(".")
        else heading
    )


def _rst_box(
    node: nodes.Element, lines: list[str], shift: int, inner: _Context, depth: int
) -> Iterator[_Block]:
    """A box, a version note or a tab: its heading before its first paragraph ("Warning: …"),
    or alone before its body when that begins with something else (code, a list)."""
    body = [c for c in node.children if isinstance(c, nodes.Element) and not isinstance(c, nodes.title)]
    opens = body and isinstance(body[0], nodes.paragraph)
    if opens and isinstance(node, nodes.container) and body[0].rawsource.rstrip().endswith("::"):
        opens = False  # a tab's "Unix Bash::" introduces its code: the tab's name stands alone
    first = _line_of(node, lines)
    inner.line = first + shift
    if inner.heading and not opens:
        yield _Block(
            Kind.SENTENCE, _alone(inner.heading), first + shift, first + 1 + shift, inner.section, inner.label
        )
        inner.heading = ""
    yield from _rst_children(node, lines, shift, inner, depth)


def _line_of(node: nodes.Node, lines: list[str]) -> int:
    """A node's first line (0-based): its own, or its first descendant's that has one."""
    for found in node.findall(include_self=True):
        line = getattr(found, "line", None)
        if isinstance(line, int) and line > 0:
            return line - 1
    return 0


def _source_lines(node: nodes.Element, lines: list[str]) -> tuple[int, int]:
    """The lines of the source a paragraph was read from: from its line, as many as its raw
    source has (docutils gives a paragraph's first line)."""
    first = _line_of(node, lines)
    return first, first + max(1, len(node.rawsource.split("\n")))


def _rst_paragraph(node: nodes.Element, lines: list[str], shift: int, ctx: _Context) -> Iterator[_Block]:
    raw = " ".join(node.rawsource.split()) if node.rawsource else " ".join(node.astext().split())
    if not raw:
        return
    first, last = _source_lines(node, lines)
    shown = " ".join(_rendered(node).split())
    first += shift
    if ctx.heading:  # (read from the box's line, which says its heading)
        raw, shown, ctx.heading = f"{ctx.heading}: {raw}", f"{ctx.heading}: {shown}", ""
        first = min(first, ctx.line)
    yield from _prose(raw, first, last + shift, ctx.section, ctx.label, shown)


def _rst_item(
    node: nodes.Element, lines: list[str], shift: int, ctx: _Context, depth: int
) -> Iterator[_Block]:
    """A list item or a field: its first paragraph as written (with its marker or its field's
    name: the line reader keeps them), the rest as blocks."""
    body = node.children[-1] if isinstance(node, nodes.field) else node
    children = [c for c in body.children if isinstance(c, nodes.Element)]
    if children and isinstance(children[0], nodes.paragraph):
        paragraph = children.pop(0)
        first, last = _source_lines(paragraph, lines)
        if isinstance(node, nodes.field):
            first = min(first, _line_of(node, lines))
        own = _joined(lines[first:last])
        literal = own.endswith("::")
        if literal:
            own = own[:-3] if own.endswith(" ::") else own[:-1]
        shown = _rendered(paragraph)
        if isinstance(node, nodes.field):
            shown = f"{node.children[0].astext()}: {shown}"
        yield _Block(Kind.ITEM, _cap(own), first + shift, last + shift, ctx.section, ctx.label, None)
        del shown  # (the line reader's rendering keeps the marker; the parser's has none)
    elif isinstance(node, nodes.field):
        first = _line_of(node, lines)
        yield _Block(
            Kind.ITEM,
            _joined(lines[first : first + 1]),
            first + shift,
            first + 1 + shift,
            ctx.section,
            ctx.label,
        )
    for child in children:
        yield from _rst_node(child, lines, shift, ctx, depth + 1)


def _rendered(node: nodes.Node) -> str:
    """Inline reST as Sphinx shows it, in Markdown: code as `code`, a link to the web as
    [text](url), a role as its handler showed it."""
    if isinstance(node, nodes.Text):
        return str(node)
    if isinstance(node, (nodes.literal, nodes.title_reference)):  # `x`: Lore shows it as code
        return f"`{node.astext()}`"
    if isinstance(node, (nodes.system_message, nodes.target, nodes.problematic)):
        return node.rawsource if isinstance(node, nodes.problematic) else ""
    inner = "".join(_rendered(c) for c in node.children) if isinstance(node, nodes.Element) else ""
    if isinstance(node, nodes.reference):
        target = str(node.get("refuri", ""))
        return (
            f"[{inner}]({target})"
            if target.startswith(("https://", "http://")) and inner != target
            else inner
        )
    if isinstance(node, nodes.emphasis):
        return f"*{inner}*"
    if isinstance(node, nodes.strong):
        return f"**{inner}**"
    return inner
