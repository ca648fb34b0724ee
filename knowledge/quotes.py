"""Passages cut into the units an answer may quote: sentences, list items, code blocks.

Documents arrive as Markdown or reStructuredText-flavoured plain text. A quote must never
stop in the middle of a fact, so a passage is cut only where a reader would pause: between
sentences of a paragraph, between list items, around a code block (fenced, indented after
a `::` paragraph, or under a `.. code-block::` directive), which is kept whole. Heading lines
and their underlines are not quotable; they name the section the units that follow belong to.
A quoted sentence or item shows reST's inline markup as Sphinx renders it (`knowledge.markup`).
"""

from __future__ import annotations

import enum
import re
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import NamedTuple

from knowledge.markup import readable

MAX_UNIT_CHARS = 1200
"""A longer code block or item is cut at a line end, saying so with "…"."""

_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_BACKTICK_RUN = re.compile(r"`{3,}")
_CODE_DIRECTIVE = re.compile(r"^\s*\.\.\s+(?:code-block|code|sourcecode|literalinclude)::", re.I)
_DIRECTIVE = re.compile(r"^\s*\.\.\s+[\w:-]+::")
_DESCRIPTION = re.compile(
    r"^\s*\.\.\s+(?:py:|std:|rst:)?(?:data|function|class|method|attribute|module|exception|"
    r"decorator|envvar|option|confval|describe|object|property)::\s*(?P<name>.+?)\s*$",
    re.I,
)
_DIRECTIVE_PARTS = re.compile(r"^\s*\.\.\s+(?:[\w-]+:)?(?P<name>[\w-]+)::\s*(?P<argument>.*?)\s*$")
_ADMONITIONS = {
    "note": "Note", "warning": "Warning", "tip": "Tip", "important": "Important", "hint": "Hint",
    "caution": "Caution", "danger": "Danger", "attention": "Attention", "error": "Error",
    "seealso": "See also", "todo": "To do",
}  # fmt: skip
"""Directives Sphinx shows as a box headed by their name: quoted as "Warning: …"."""
_VERSIONS = {"versionadded": "New in version", "versionchanged": "Changed in version",
             "deprecated": "Deprecated since version"}  # fmt: skip
"""Directives whose argument is a version: "Changed in version 2.3: …"."""
_SILENT = frozenset((
    "toctree", "image", "figure", "include", "currentmodule", "module", "automodule", "autoclass",
    "autofunction", "automethod", "autodata", "autoexception", "autoattribute", "tabs", "only",
    "rst-class", "highlight", "index", "contents", "raw", "meta", "default-role", "role",
))  # fmt: skip
"""Directives whose argument is a file, a module or a setting: nothing a reader is shown."""
_NOT_PROSE = frozenset(("toctree", "image", "include", "index", "contents", "raw", "meta"))
"""Silent directives whose body is not prose either (a table of contents' entries …)."""
_MKDOCS_ADMONITION = re.compile(
    r'^\s*(?:(?:!!!|\?\?\?\+?)\s+(?P<name>[\w-]+)|===\+?(?=\s+"))(?:\s+"(?P<title>[^"]*)")?\s*$'
)
"""A Markdown admonition (MkDocs, Python-Markdown): `!!! note "Title"`, its body indented;
or a content tab, `=== "Title"`, read as one headed by its title."""
_AUTODOC = re.compile(r"^\s*:::\s+[\w.:-]+\s*$")
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
_OPTION_LINE = re.compile(r"^\s*:[\w -]+:(?:\s|$)")
_COMMENT = re.compile(r"^\s*\.\.(?:\s|$)(?!\s*[\w:-]+::)")
_REFERENCE = re.compile(r"^\s{0,3}\[[^\]\n]+\]:\s+\S+\s*$")
"""A Markdown link reference definition, `[jinja2]: https://…`: no text of the page."""
_UNDERLINE = re.compile(r"^\s*([=\-~^\"'#*+:._])\1{2,}\s*$")
_BACKTICKS = re.compile(r"^`{3,}$")
_ATX = re.compile(r"^\s{0,3}#{1,6}\s+\S")
_ITEM = re.compile(r"^(\s*)(?:[-*+•]|\d{1,3}[.)]|#\.|\(\w\))\s+\S")
_FIELD = re.compile(r"^(\s*):[^:\n]+:(?:\s|$)")
_ROLE_TAIL = re.compile(r"<[^<>`\s]+>`")
"""The end of a reST reference cut in two: "<Config.from_mapping>` sets …"."""
_BARE_MARKER = re.compile(r"^\s*(?:\d{1,3}[.)]|#\.|[*•])\s*$")
"""A numbered item's number, or a bullet, with nothing after it."""
_AUTO_NUMBER = re.compile(r"^(\s*)#\.(?=\s)")
"""reST's auto-numbered item ("#. Install it"), shown as a bullet."""
_DOCTEST = re.compile(r"^\s*>>>(?:\s|$)")
"""A reST doctest block's first line: the block is code up to the next blank line."""
_TABLE = re.compile(r"^\s*(?:\+[-=+]+\+|\|.*\||={2,}(?:\s+={2,})+)\s*$")
_SENTENCE_END = re.compile(
    r"(?<=[.!?])(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\betc\.)(?<!\bvs\.)(?<!\bcf\.)(?<!\bNo\.)"
    r"[\"')\]]*\s+(?=[A-Z0-9\"'(\[`*:<])"
)


OVERLAP_CHARS = 2000
"""How far back into the passage before a passage may repeat it (chunks overlap by 32 word
pieces, which are at most `chunking.MAX_CHARS_PER_PIECE` characters each)."""
MAX_NESTING = 16
"""List items nested deeper than this are not read apart (each level is a recursion)."""


class Kind(enum.StrEnum):
    SENTENCE = "sentence"
    ITEM = "item"
    CODE = "code"


@dataclass(frozen=True)
class Unit:
    text: str
    kind: Kind
    block: int
    """Units of one paragraph, list or code block share a block number, in order."""
    section: str = ""
    """The heading the unit is under, if the passage shows it."""
    label: str = ""
    """The name a reST description directive gives its body (`.. py:data:: DEBUG`)."""
    continues: bool = False
    """It begins in the middle of a sentence the passage before holds (known from that
    passage's text: "CLI command, or `with` block." ends a sentence begun there)."""

    @property
    def shown(self) -> str:
        """The text labelled by its directive's name when it does not say it (as scored)."""
        return f"{self.label}: {self.text}" if self.labelled else self.text

    @property
    def labelled(self) -> bool:
        """Whether the unit is shown with its directive's name (it does not say it itself,
        as a word of its own: "configuration" does not say `config`, nor `flask.g` `g`)."""
        return bool(self.label) and re.search(rf"(?<![\w.]){re.escape(self.label)}(?!\w)", self.text) is None

    @property
    def rendered(self) -> str:
        """The text as a reader sees it: prose with its reST markup rendered, code as written
        in a fenced block (one read from an indented block gets its fences: in Markdown its
        `# comment` line would be a heading, `>>>` a nested quote, `**kwargs` bold)."""
        if self.kind == Kind.ITEM:
            return readable(_AUTO_NUMBER.sub(r"\1-", self.text))
        if self.kind != Kind.CODE:
            return readable(self.text)
        if _FENCE.match(self.text):
            return self.text
        fence = "`" * max([3, *(len(run) + 1 for run in _BACKTICK_RUN.findall(self.text))])
        return f"{fence}\n{self.text}\n{fence}"

    @property
    def quoted(self) -> str:
        """`rendered`, labelled as `shown` is."""
        return f"{self.label}: {self.rendered}" if self.labelled else self.rendered

    @property
    def fragment(self) -> bool:
        """Whether the unit starts mid-sentence, or is code of brackets alone (a passage may
        begin with the end of the one before it): it is scored, but not quoted on its own."""
        if self.kind == Kind.CODE:  # the closing brackets of a block the passage before holds
            return not any(c.isalnum() for c in self.text)
        text = self.text.lstrip()
        return self.kind == Kind.SENTENCE and (
            self.continues or text[:1].islower() or text[:1] in ",;:)]}" or _ROLE_TAIL.match(text) is not None
        )


def without_marker(text: str) -> str:
    """A list item's text without its bullet or number ("- Register …" → "Register …")."""
    found = _ITEM.match(text)
    return text[found.end() - 1 :] if found else text


def units(text: str, before: str = "", *, titles: bool = True) -> list[Unit]:
    """The quotable units of `text`, in order. `before` is the text before it in its
    section, if known (the passages before it, `joined`): a passage may begin inside a code
    block opened there, and those lines are code, not prose. A text of titles alone is
    quoted by its titles' words, unless `titles` is False (the rest of a passage read on
    into: the next section's title is nothing to quote)."""
    lines = _lines(text)
    while lines and not lines[-1].strip():
        lines.pop()
    if lines and _BARE_MARKER.match(lines[-1]):
        lines.pop()  # the passage was cut just after the next item's number
    out: list[Unit] = []
    i, code, _, cut, _, whole = _continued_block(before, text)
    if not i and cut and lines and (_DIRECTIVE.match(whole) or _FENCE.match(whole)):
        lines[0] = whole  # begun in the middle of a directive's or a fence's line
    elif not i and cut:
        _goes_on(lines)
    if not i and (closing := _closing_fence(lines)) is not None:  # it starts inside a fenced block
        i, code = closing + 1, lines[:closing]
    block = 1 if any(line.strip() for line in code) else 0
    if block:
        out.append(_code(textwrap.dedent("\n".join(code)).strip("\n"), block))
    _read(lines, i, out, block)
    found = [u for u in out if u.text.strip() and not _bare_fences(u)]
    if len(found) > 1 and _looks_like_a_title(found[-1]) and found[-2].block != found[-1].block:
        found.pop()  # a heading whose underline fell into the next passage
    if found and lines and not i and _at_start(found[0], lines) and _begins_mid_sentence(before, text):
        found[0] = replace(found[0], continues=True)
    if not found and titles:  # nothing but titles: their words are what there is to quote
        words = " ".join(
            line.strip()
            for line in lines
            if not (_UNDERLINE.match(line) or _unread(line) or _DIRECTIVE.match(line))
        )
        found = [Unit(" ".join(words.split()), Kind.SENTENCE, 1)] if words.strip() else []
    return found


def _begins_mid_sentence(before: str, text: str) -> bool:
    """Whether `text` begins in the middle of a sentence of `before`, the passage before it
    (chunks are cut by size and overlap): in a line whose start, in `before`, does not end a
    sentence, or at the start of a line that goes on with a line of prose before it that
    does not end one (reST wraps its paragraphs)."""
    if not before.strip() or not text[:1].strip():
        return False
    start = _overlap(before, text)
    preceding = _lines(before if start is None else before[:start])
    if start is not None and preceding[-1].strip():  # it begins in the middle of a line
        return not _ends_sentence(preceding[-1])
    if not preceding[-1].strip():
        preceding.pop()  # it begins a line
    previous = preceding[-1] if preceding else ""
    if not previous.strip():
        return False  # a new paragraph
    first = _lines(text)[0]
    return not (
        _indent(previous) != _indent(first)
        or _ends_sentence(previous)
        or any(p.match(previous) for p in (_UNDERLINE, _FENCE, _TABLE, _ATX))
        or any(p.match(first) for p in (_ITEM, _DIRECTIVE, _FENCE, _FIELD, _DOCTEST, _TABLE))
    )


def _at_start(unit: Unit, lines: list[str]) -> bool:
    """Whether `unit` is a sentence the passage's first line begins."""
    first = " ".join(lines[0].split())
    return (
        unit.kind == Kind.SENTENCE
        and bool(first)
        and (first.startswith(unit.text) or unit.text.startswith(first))
    )


def _ends_sentence(line: str) -> bool:
    return line.rstrip().rstrip("\"')]*`").endswith((".", "!", "?", ":"))


def _bare_fences(unit: Unit) -> bool:
    """A code unit of fence lines only: a passage that ends just after a block opens."""
    return unit.kind == Kind.CODE and all(
        not line.strip() or _FENCE.match(line) for line in unit.text.split("\n")
    )


def _read(lines: list[str], i: int, out: list[Unit], block: int, depth: int = 0) -> int:
    """The units of `lines` from line `i` on, appended to `out`; the last block number used
    (`block` is the one before the first). `depth`: how many list items `lines` is nested in."""
    section, label, label_indent = "", "", -1
    while i < len(lines):
        line = lines[i]
        if _is_heading(lines, i):
            section, label = _heading_text(lines[i]), ""
            i += 1 if _ATX.match(line) else 2
            continue
        if not line.strip() or (_UNDERLINE.match(line) and not _FENCE.match(line)) or _unread(line):
            i += 1
            continue
        if label and _indent(line) <= label_indent:
            label = ""
        block += 1
        start = len(out)
        if description := _DESCRIPTION.match(line):
            label, label_indent = description.group("name"), _indent(line)
            i = _past_options(lines, i + 1)  # `:noindex:` is not its body
        elif _FENCE.match(line):
            i = _fenced(lines, i, out, block)
        elif _CODE_DIRECTIVE.match(line):
            after = _past_options(lines, i + 1)
            i = _indented(lines, after, out, block, _indent(line), _caption(lines[i + 1 : after]))
        elif _DIRECTIVE.match(line):
            i = _directive(lines, i, out, block)
        elif _AUTODOC.match(line):
            i = _past_block(lines, i + 1, _indent(line))
        elif admonition := _MKDOCS_ADMONITION.match(line):
            i = _admonition(lines, i, out, block, admonition)
        elif _TABLE.match(line):
            i = _table(lines, i, out, block)
        elif _DOCTEST.match(line):
            i = _doctest(lines, i, out, block)
        elif _ITEM.match(line) or _FIELD.match(line):
            i, block = _item(lines, i, out, block, depth)
        else:
            i = _paragraph(lines, i, out, block)
        out[start:] = [Unit(u.text, u.kind, u.block, section, label) for u in out[start:]]
    return block


def _directive(lines: list[str], i: int, out: list[Unit], block: int) -> int:
    """A directive that is not code: its text (the argument and the lines continuing it) as
    Sphinx shows it, an admonition's or a version note's name, or a generic admonition's
    title, before its first paragraph ("Warning: …", "Changed in version 2.3: …"); nothing
    for one that names a file or a module. Its body's other paragraphs are read as any
    text. The line after it."""
    found = _DIRECTIVE_PARTS.match(lines[i])
    name, argument = (found["name"].lower(), found["argument"]) if found else ("", "")
    base, j = _indent(lines[i]), i + 1
    parts = [argument] if argument else []
    while (
        j < len(lines) and lines[j].strip() and _indent(lines[j]) > base and not _OPTION_LINE.match(lines[j])
    ):
        parts.append(lines[j].strip())
        j += 1
    j = _past_options(lines, j)
    text = " ".join(parts)
    if name in _NOT_PROSE:
        j = _past_block(lines, j, base)
    if name in _SILENT:
        return j
    if name in _VERSIONS:
        version, _, body = text.partition(" ")
        if not body:
            body, j = _first_paragraph(lines, j, base)
        text = f"{_VERSIONS[name]} {version}".strip() + (f": {body}" if body else ".")
    elif name == "admonition":  # a box headed by its argument: "Note: …"
        body, j = _first_paragraph(lines, j, base)
        text = f"{text}: {body}" if text and body else text or body
    elif name in _ADMONITIONS and not text:
        text, j = _first_paragraph(lines, j, base)
    if name in _ADMONITIONS and text:
        text = f"{_ADMONITIONS[name]}: {text}"
    out.extend(_sentences(text, block))
    return j


def _admonition(lines: list[str], i: int, out: list[Unit], block: int, found: re.Match[str]) -> int:
    """A Markdown admonition (`!!! warning`) read as its reST directive is: "Warning: …"
    before its first paragraph, or its title ("Note: Keep the key secret."). The line after
    what was read; its body's other paragraphs are read as any text."""
    name = (found["name"] or "").lower()
    title = (found["title"] if found["title"] is not None else _ADMONITIONS.get(name, name.title())).strip()
    body = next((k for k in range(i + 1, len(lines)) if lines[k].strip()), len(lines))
    if body < len(lines) and _AUTODOC.match(lines[body]) and _indent(lines[body]) > _indent(lines[i]):
        return _past_block(lines, body, _indent(lines[i]))  # a box of generated reference only
    text, j = _first_paragraph(lines, i + 1, _indent(lines[i]))
    out.extend(_sentences(f"{title}: {text}" if title and text else text or title, block))
    return j if text else i + 1


def _past_block(lines: list[str], j: int, base: int) -> int:
    """The line after the blank lines and the lines indented deeper than `base` from `j` on."""
    while j < len(lines) and (not lines[j].strip() or _indent(lines[j]) > base):
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
        or _indent(lines[k]) <= base
        or any(p.match(lines[k]) for p in (_ITEM, _DIRECTIVE, _FENCE, _DOCTEST))
    ):
        return "", j
    end = k
    while end < len(lines) and lines[end].strip() and _indent(lines[end]) > base:
        end += 1
    text = " ".join(line.strip() for line in lines[k:end])
    if text.endswith("::"):  # it introduces a literal block: left to the paragraph reader
        return "", j
    return text, end


def continued_code(previous: Unit, before: str, text: str) -> tuple[Unit | None, str]:
    """When the passage `before` ends inside a code block, or with the line opening one,
    and the passage after it, `text`, goes on with the block: the block's rest as a code
    unit, without the lines `text` repeats of `before` (chunks overlap), and the text after
    the block. When `previous` (the passage's last unit) is the block's code, the unit is
    the whole block, read from its opener as `previous` was, so that it begins with
    `previous`'s text (one block, its lines indented as written); else a block of its own
    after it. Otherwise None and `text`."""
    continued = _continued_block(before, text)
    if not continued.lines:
        return None, text
    rest = "\n".join(_lines(text)[continued.lines :])
    fresh = continued.code[continued.repeated :]
    if not "".join(fresh).strip():
        return None, rest
    if previous.kind == Kind.CODE and continued.opener >= 0:
        read: list[Unit] = []
        _read([*_lines(before)[continued.opener :], *fresh], 0, read, previous.block - 1)
        whole = next((u for u in read if u.kind == Kind.CODE), None)
        if whole is not None and whole.text.startswith(previous.text):
            return replace(whole, block=previous.block, section=previous.section, label=previous.label), rest
    code = _cap(textwrap.dedent("\n".join(fresh)).strip("\n"))
    block = previous.block if previous.kind == Kind.CODE else previous.block + 1
    return Unit(code, Kind.CODE, block, previous.section, previous.label), rest


class _Continued(NamedTuple):
    """What of a passage continues a code block the passage before it left open."""

    lines: int
    """How many of its lines continue it (a closing fence included)."""
    code: list[str]
    """Those lines as code (a first line cut from the middle of its line made whole)."""
    repeated: int
    """How many of its lines repeat the passage before it (chunks overlap)."""
    cut: bool = False
    """Whether it begins in the middle of a line."""
    opener: int = -1
    """The line of the passage before that opens the block (-1: none, or not there)."""
    whole: str = ""
    """When it begins in the middle of a line: that line, whole, from the passage before."""


def _continued_block(before: str, text: str) -> _Continued:
    """What of `text` continues a code block still open at the end of `before`, the
    passage before it; nothing when no block is open there. An indented block goes on while
    lines are indented deeper than its opener; a fenced one up to its closing fence.
    Passages overlap: `text` may repeat the end of `before`, from the middle of a line, and
    what it repeats may begin inside a block that `before` closes."""
    before_lines, lines = _lines(before), _lines(text)
    before = "\n".join(before_lines)
    start = _overlap(before, "\n".join(lines))
    if start is None:  # it repeats nothing: it begins where `before` ends
        row, cut = len(before_lines), False
    else:
        row, cut = before.count("\n", 0, start), before[start - 1 : start] not in ("", "\n")  # mid-line
    found = _open_block(before_lines, row + 1 if cut else row)
    if found is None or (cut and found[0] == row) or not text.strip():
        whole = (
            before_lines[row] if cut else ""
        )  # no block open where `text` begins, or it begins on its opener
        return _Continued(0, [], 0, cut, whole=whole)
    _, base, fenced = found
    end = 1 if cut else 0
    while end < len(lines) and (
        not _FENCE.match(lines[end]) if fenced else not lines[end].strip() or _indent(lines[end]) > base
    ):
        end += 1
    body = lines[:end]
    if cut:  # the line the passage begins in the middle of, whole: `before` ends with it
        body[0] = before_lines[row]
    repeated = 0 if start is None else before[start:].count("\n") + 1
    return _Continued(min(end + fenced, len(lines)), body, repeated, cut, found[0], body[0] if cut else "")


def _goes_on(lines: list[str]) -> None:
    """A passage's first line, begun in the middle of its line, indented as the line after
    it when that one goes on with its paragraph (a directive's or a list item's body):
    "…requests do" and "    not time out." are one sentence, not a sentence and a fragment."""
    if len(lines) < 2 or not lines[1].strip() or _indent(lines[1]) <= _indent(lines[0]):
        return
    if not (_FIELD.match(lines[1]) or _DOCTEST.match(lines[1])):  # (a paragraph stops at other blocks)
        lines[0] = " " * _indent(lines[1]) + lines[0].lstrip()


def _open_block(lines: list[str], end: int) -> tuple[int, int, bool] | None:
    """The code block open after `lines[:end]`, as (the line opening it, -1 when the lines
    begin inside it; the indentation its lines run deeper than; whether it is fenced), or
    None. A fenced block is open when a fence before `end` has no closing one before it; an
    indented one when, going back from line `end - 1`, every line is blank or indented
    deeper than its opener, a paragraph ending with `::` or a code directive."""
    inside, fences = _fence_roles(lines)  # `lines` may begin inside a fenced block themselves
    opened = [(j, opens) for j, opens in fences if j < end]
    if opened and opened[-1][1]:
        return opened[-1][0], _indent(lines[opened[-1][0]]), True
    if inside and not opened:
        return -1, 0, True
    least = None
    for j in range(end - 1, -1, -1):
        line = lines[j]
        if not line.strip():
            continue
        indent = _indent(line)
        if (least is None or indent < least) and _opens_literal(line):
            return j, indent, False  # (with no line after it: the block begins past `end`)
        if indent == 0:
            return None
        if not _OPTION_LINE.match(line):  # a code directive's options lie between it and its code
            least = indent if least is None else min(least, indent)
    return None


def _opens_literal(line: str) -> bool:
    """A code directive, or a paragraph's line ending with `::` (not another directive)."""
    return bool(_CODE_DIRECTIVE.match(line)) or (line.rstrip().endswith("::") and not _DIRECTIVE.match(line))


def joined(passages: Sequence[str]) -> str:
    """Consecutive passages of a document as one text, each without what it repeats of the
    one before (chunks overlap)."""
    text = ""
    for passage in passages:
        start = _overlap(text, passage) if text else None
        if start is None:
            text = f"{text}\n{passage}" if text else passage
        else:
            text += passage[len(text) - start :]
    return text


def _overlap(before: str, text: str) -> int | None:
    """Where in `before` the longest stretch running to its end that `text` starts with
    begins; None when `text` starts with none of it."""
    start = before.find(text[:1], max(0, len(before) - OVERLAP_CHARS))
    while start >= 0:
        if before[start:].strip() and text.startswith(before[start:]):
            return start
        start = before.find(text[:1], start + 1)
    return None


def _lines(text: str) -> list[str]:
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _closing_fence(lines: list[str]) -> int | None:
    """The line of the fence that closes a code block begun before the passage (a passage
    cut from a document may start inside one), or None."""
    inside, fences = _fence_roles(lines)
    return fences[0][0] if inside and fences else None


def _fence_roles(lines: list[str]) -> tuple[bool, list[tuple[int, bool]]]:
    """Whether `lines` begin inside a fenced code block, and each fence line that opens or
    closes one, with whether it opens. A fence naming a language opens a block: one inside a
    block is its text (CommonMark), which in a document means the guess of where blocks
    begin was wrong, so the guess with fewer of those is taken. On a tie, the passage began
    inside a block when it holds an odd number of fences and the first is bare and follows a
    line of text: code runs up to the fence that closes it, while a fence that opens a block
    follows a blank line or a heading."""
    fences = _fences(lines, 0)

    def walk(inside: bool) -> tuple[int, list[tuple[int, bool]]]:
        wrong, roles = 0, []
        for j in fences:
            if inside and _FENCE.sub("", lines[j]).strip():
                wrong += 1
                continue
            inside = not inside
            roles.append((j, inside))
        return wrong, roles

    (outside_wrong, outside), (inside_wrong, inside) = walk(False), walk(True)
    if inside_wrong != outside_wrong:
        return (True, inside) if inside_wrong < outside_wrong else (False, outside)
    first = fences[0] if len(fences) % 2 else 0
    if first == 0 or _FENCE.sub("", lines[first]).strip() or not lines[first - 1].strip():
        return False, outside
    return True, inside


def _fences(lines: list[str], start: int) -> list[int]:
    """The code fence lines from line `start` on (not a reST title's underline of backticks)."""
    return [
        j
        for j in range(start, len(lines))
        if _FENCE.match(lines[j]) and not (j and _is_heading(lines, j - 1))
    ]


def _unread(line: str) -> bool:
    """A reST comment or link target, a Markdown link reference definition, or an option
    line of a directive a passage begins after (`:members:`) or a page's metadata
    (`:orphan:`)."""
    option = _OPTION_NAME.match(line)
    return bool(_COMMENT.match(line) or _REFERENCE.match(line) or (option and option["name"] in _OPTIONS))


def _looks_like_a_title(unit: Unit) -> bool:
    """Short, not ended as a sentence, and not a label before a value or code ("Default:
    ``False``", "For example: `request.query_params['search']`": what a setting's
    default is, a page's example)."""
    text = unit.text.strip()
    return (
        unit.kind == Kind.SENTENCE
        and len(text.split()) <= 6
        and text[-1:] not in ".!?:;,)"
        and ": " not in text
        and "`" not in text
    )


def _heading_text(line: str) -> str:
    return line.strip().lstrip("#").strip()


def _is_heading(lines: list[str], i: int) -> bool:
    """An ATX heading, or a reST title: a short line underlined with one repeated symbol."""
    if _ATX.match(lines[i]):
        return True
    if i + 1 >= len(lines) or not lines[i].strip() or _UNDERLINE.match(lines[i]):
        return False
    under = lines[i + 1].strip()
    if _BACKTICKS.match(under):  # reST allows backticks; three are a Markdown code fence
        return len(under) > 3 and len(under) >= len(lines[i].strip()) - 1
    return bool(_UNDERLINE.match(lines[i + 1])) and len(under) >= len(lines[i].strip()) - 1


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _fenced(lines: list[str], i: int, out: list[Unit], block: int) -> int:
    fence = _FENCE.match(lines[i])
    assert fence is not None
    end = i + 1
    while end < len(lines) and not lines[end].strip().startswith(fence.group(1)):
        end += 1
    out.append(_code(textwrap.dedent("\n".join(lines[i : end + 1])), block))  # (a fence may be indented)
    return end + 1


def _caption(options: list[str]) -> str:
    """A code block's `:caption:` (its file's name, usually), or ''."""
    for line in options:
        if found := _CAPTION.match(line):
            return readable(found["caption"]).replace("`", "")
    return ""


def _past_options(lines: list[str], i: int) -> int:
    """The line after a directive's options (`:caption: app.py`, `:linenos:`), which are
    not its content."""
    while i < len(lines) and _OPTION_LINE.match(lines[i]):
        i += 1
    return i


def _indented(lines: list[str], i: int, out: list[Unit], block: int, base: int, caption: str = "") -> int:
    """A literal block: the lines indented deeper than `base` (blank lines inside kept), under
    a comment line naming its `caption` when it has one."""
    end = i
    while end < len(lines) and (not lines[end].strip() or _indent(lines[end]) > base):
        end += 1
    body = lines[i:end]
    while body and not body[-1].strip():
        body.pop()
    while body and not body[0].strip():
        body.pop(0)
    if body:
        least = min(_indent(b) for b in body if b.strip())
        code = "\n".join(b[least:] for b in body)
        out.append(_code(f"# {caption}\n{code}" if caption else code, block))
    return max(end, i + 1) if body else i


def _doctest(lines: list[str], i: int, out: list[Unit], block: int) -> int:
    """A doctest block (an interactive Python session pasted into reST): its lines up to the
    next blank line, as code."""
    end = i
    while end < len(lines) and lines[end].strip():
        end += 1
    out.append(_code(textwrap.dedent("\n".join(lines[i:end])), block))
    return end


def _table(lines: list[str], i: int, out: list[Unit], block: int) -> int:
    end = i
    while end < len(lines) and lines[end].strip():
        end += 1
    out.append(_code("\n".join(lines[i:end]), block))
    return end


def _item(lines: list[str], i: int, out: list[Unit], block: int, depth: int) -> tuple[int, int]:
    """Consecutive list items (or reST fields): each item's own paragraph is a unit, what is
    nested in it after that (a paragraph, a literal or fenced code block, a sub-list) is read
    as blocks of its own. The line after the list, and the last block number used."""
    base = _indent(lines[i])
    end = i
    while end < len(lines):
        start = end
        end += 1
        while end < len(lines):
            line = lines[end]
            if line.strip() and _indent(line) <= base and (_ITEM.match(line) or _FIELD.match(line)):
                break
            if not line.strip() and (end + 1 >= len(lines) or _indent(lines[end + 1]) <= base):
                break
            if line.strip() and _indent(line) < base:
                break
            if _is_heading(lines, end):
                break
            end += 1
        own = start + 1
        while (
            own < end
            and lines[own].strip()
            and not (_FENCE.match(lines[own]) or _DIRECTIVE.match(lines[own]))
        ):
            own += 1
        text = _item_text(lines[start:own], base)
        literal = text.endswith("::")
        if literal:  # "Example::" introduces the literal block nested in the item
            text = text[:-3] if text.endswith(" ::") else text[:-1]
        out.append(Unit(_cap(text), Kind.ITEM, block))
        block = _nested(lines[own:end], out, block, depth + 1, literal=literal)
        if (
            end >= len(lines)
            or not lines[end].strip()
            or not (_ITEM.match(lines[end]) or _FIELD.match(lines[end]))
        ):
            break
        if _indent(lines[end]) != base:
            break
    return end, block


def _item_text(lines: list[str], base: int) -> str:
    """An item's own paragraph on one line, but for the sub-items it runs into (Markdown
    nests a list without a blank line), each on a line of its own at its depth."""
    text = ""
    for line in lines:
        if not line.strip():
            continue
        if text and _ITEM.match(line) and _indent(line) > base:
            text += "\n" + line[base:].rstrip()
        else:
            text += (" " if text else "") + line.strip()
    return text


def _nested(lines: list[str], out: list[Unit], block: int, depth: int, *, literal: bool) -> int:
    """What a list item holds after its own paragraph, dedented and read as blocks (all of it
    one literal block when the item's text ended with `::`); the last block number used.
    Deeper than `MAX_NESTING` (a model's or a document's runaway list), it is one unit."""
    if not any(line.strip() for line in lines):
        return block
    if depth > MAX_NESTING:
        out.append(Unit(_cap(" ".join(line.strip() for line in lines if line.strip())), Kind.ITEM, block + 1))
        return block + 1
    least = min(_indent(line) for line in lines if line.strip())
    dedented = [line[least:] for line in lines]
    if literal:
        out.append(_code("\n".join(dedented).strip("\n"), block + 1))
        return block + 1
    return _read(dedented, 0, out, block, depth)


def _paragraph(lines: list[str], i: int, out: list[Unit], block: int) -> int:
    """A paragraph's sentences; one ending in `::` is followed by a literal block."""
    base = _indent(lines[i])
    end = i
    while end < len(lines) and lines[end].strip() and not _starts_block(lines, end, i):
        end += 1
    text = " ".join(part.strip() for part in lines[i:end])
    literal = text.endswith("::")
    if literal:
        text = "" if text == "::" else text[:-1] if not text.endswith(" ::") else text[:-3]
    out.extend(_sentences(text, block))
    if literal:
        following = end
        while following < len(lines) and not lines[following].strip():
            following += 1
        if following < len(lines) and _indent(lines[following]) > base:
            return _indented(lines, following, out, block, base)
    return max(end, i + 1)


def _starts_block(lines: list[str], j: int, first: int) -> bool:
    if j == first:
        return False
    line = lines[j]
    return bool(
        _FENCE.match(line)
        or _DIRECTIVE.match(line)
        or _ITEM.match(line)
        or _is_heading(lines, j)
        or _UNDERLINE.match(line)
        or _indent(line) > _indent(lines[first]) + 1
    )


def _sentences(text: str, block: int) -> list[Unit]:
    return [Unit(s.strip(), Kind.SENTENCE, block) for s in _SENTENCE_END.split(text) if s.strip()]


def _code(text: str, block: int) -> Unit:
    return Unit(_cap(text), Kind.CODE, block)


def _cap(text: str) -> str:
    if len(text) <= MAX_UNIT_CHARS:
        return text
    cut = text.rfind("\n", 0, MAX_UNIT_CHARS)
    cut = cut if cut > MAX_UNIT_CHARS // 2 else text.rfind(" ", 0, MAX_UNIT_CHARS)
    return text[: max(cut, 1)].rstrip() + "\n…"
