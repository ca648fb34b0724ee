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
from dataclasses import dataclass, replace

from knowledge.cuts import begins_mid_sentence, closing_fence, continued_block, goes_on
from knowledge.markup import readable
from knowledge.syntax import (
    ATX,
    CODE_DIRECTIVE,
    DIRECTIVE,
    DOCTEST,
    FENCE,
    FIELD,
    ITEM,
    OPTION_LINE,
    TABLE,
    UNDERLINE,
    heading_text,
    indentation,
    is_heading,
    split_lines,
)

MAX_UNIT_CHARS = 1200
"""A longer code block or item is cut at a line end, saying so with "…"."""

_BACKTICK_RUN = re.compile(r"`{3,}")
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
    "rst-class", "highlight", "index", "contents", "raw", "meta", "default-role", "role", "run",
))  # fmt: skip
"""Directives whose argument is a file, a module or a setting: nothing a reader is shown (nor
the calls `click:run` makes to show an example's output, which only a docs build prints)."""
_TITLED = frozenset(("admonition", "tab", "group-tab"))
"""Directives shown as a box or a tab headed by their argument (a generic admonition, and the
tabs of sphinx-tabs and sphinx-design): quoted as "Title: …"."""
_NOT_PROSE = frozenset(("toctree", "image", "include", "index", "contents", "raw", "meta", "run"))
"""Silent directives whose body is not prose either (a table of contents' entries …)."""
_MKDOCS_ADMONITION = re.compile(
    r'^\s*(?:(?:!!!|\?\?\?\+?)\s+(?P<name>[\w-]+)|===\+?(?=\s+"))(?:\s+"(?P<title>[^"]*)")?\s*$'
)
"""A Markdown admonition (MkDocs, Python-Markdown): `!!! note "Title"`, its body indented;
or a content tab, `=== "Title"`, read as one headed by its title."""
_BLOCK = re.compile(r"^\s*/{3,}\s*(?P<name>[a-z][a-z-]*)(?:\s*\|\s*(?P<title>.*?))?\s*$")
"""A block of pymdownx.blocks (FastAPI's, Typer's and SQLModel's docs): `/// tip`, `/// note |
Technical Details`, its body not indented, up to a line of `///`."""
_BLOCK_END = re.compile(r"^\s*/{3,}\s*$")
_INCLUDE = re.compile(r"^\s*\{(?:\*|!>?)\s.*?\s(?:\*|!)\}\s*$")
"""A snippet the docs build inserts from another file (FastAPI's `{* ../../docs_src/app.py hl[3]
*}`, markdown-include's `{!> ../docs_src/app.py !}`): no text of the page."""
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
_COMMENT = re.compile(r"^\s*\.\.(?:\s|$)(?!\s*[\w:-]+::)")
_REFERENCE = re.compile(r"^\s{0,3}\[[^\]\n]+\]:\s+\S+\s*$")
"""A Markdown link reference definition, `[jinja2]: https://…`: no text of the page."""
_ROLE_TAIL = re.compile(r"<[^<>`\s]+>`")
"""The end of a reST reference cut in two: "<Config.from_mapping>` sets …"."""
_BARE_MARKER = re.compile(r"^\s*(?:\d{1,3}[.)]|#\.|[*•])\s*$")
"""A numbered item's number, or a bullet, with nothing after it."""
_AUTO_NUMBER = re.compile(r"^(\s*)#\.(?=\s)")
"""reST's auto-numbered item ("#. Install it"), shown as a bullet."""
_SENTENCE_END = re.compile(
    r"(?<=[.!?])(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\betc\.)(?<!\bvs\.)(?<!\bcf\.)(?<!\bNo\.)"
    r"[\"')\]]*\s+(?=[A-Z0-9\"'(\[`*:<])"
)


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
    """It begins in the middle of a sentence or a code block the passage before holds (known
    from that passage's text: "CLI command, or `with` block." ends a sentence begun there)."""

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
        if opening := FENCE.match(self.text):
            return self.text if _closed(self.text) else f"{self.text}\n{opening[1]}"
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


def _closed(code: str) -> bool:
    """Whether a fenced block's text ends with the fence that closes it (a passage may end
    inside the block: its quote must close it, or the rest of the answer would show as code)."""
    lines = code.rstrip().split("\n")
    opening = FENCE.match(lines[0])
    last = lines[-1].strip()
    return (
        opening is not None
        and len(lines) > 1
        and last.startswith(opening[1])
        and not last.strip(opening[1][0])
    )


def without_marker(text: str) -> str:
    """A list item's text without its bullet or number ("- Register …" → "Register …")."""
    found = ITEM.match(text)
    return text[found.end() - 1 :] if found else text


def units(text: str, before: str = "", *, titles: bool = True) -> list[Unit]:
    """The quotable units of `text`, in order. `before` is the text before it in its
    section, if known (the passages before it, `cuts.joined`): a passage may begin inside a code
    block opened there, and those lines are code, not prose. A text of titles alone is
    quoted by its titles' words, unless `titles` is False (the rest of a passage read on
    into: the next section's title is nothing to quote)."""
    lines = split_lines(text)
    while lines and not lines[-1].strip():
        lines.pop()
    if lines and _BARE_MARKER.match(lines[-1]):
        lines.pop()  # the passage was cut just after the next item's number
    out: list[Unit] = []
    i, code, _, cut, _, whole = continued_block(before, text)
    if not i and cut and lines and (DIRECTIVE.match(whole) or FENCE.match(whole) or _INCLUDE.match(whole)):
        lines[0] = whole  # begun in the middle of a directive's, a fence's or an include's line
    elif not i and cut:
        goes_on(lines)
    if not i and (closing := closing_fence(lines)) is not None:  # it starts inside a fenced block
        i, code = closing + 1, lines[:closing]
    block = 1 if any(line.strip() for line in code) else 0
    if block:  # the rest of a block the passage before begins
        out.append(replace(_code(textwrap.dedent("\n".join(code)).strip("\n"), block), continues=True))
    _read(lines, i, out, block)
    found = [u for u in out if u.rendered.strip() and not _bare_fences(u)]  # not an image's tag alone
    if len(found) > 1 and _looks_like_a_title(found[-1]) and found[-2].block != found[-1].block:
        found.pop()  # a heading whose underline fell into the next passage
    if found and lines and not i and _at_start(found[0], lines) and begins_mid_sentence(before, text):
        found[0] = replace(found[0], continues=True)
    if not found and titles:  # nothing but titles: their words are what there is to quote
        words = " ".join(
            line.strip()
            for line in lines
            if not (UNDERLINE.match(line) or _unread(line) or DIRECTIVE.match(line))
        )
        found = [Unit(" ".join(words.split()), Kind.SENTENCE, 1)] if words.strip() else []
    return found


def _at_start(unit: Unit, lines: list[str]) -> bool:
    """Whether `unit` is a sentence the passage's first line begins."""
    first = " ".join(lines[0].split())
    return (
        unit.kind == Kind.SENTENCE
        and bool(first)
        and (first.startswith(unit.text) or unit.text.startswith(first))
    )


def _bare_fences(unit: Unit) -> bool:
    """A code unit of fence lines only: a passage that ends just after a block opens."""
    return unit.kind == Kind.CODE and all(
        not line.strip() or FENCE.match(line) for line in unit.text.split("\n")
    )


def _read(lines: list[str], i: int, out: list[Unit], block: int, depth: int = 0) -> int:
    """The units of `lines` from line `i` on, appended to `out`; the last block number used
    (`block` is the one before the first). `depth`: how many list items `lines` is nested in."""
    section, label, label_indent = "", "", -1
    while i < len(lines):
        line = lines[i]
        if is_heading(lines, i):
            section, label = heading_text(lines[i]), ""
            i += 1 if ATX.match(line) else 2
            continue
        if not line.strip() or (UNDERLINE.match(line) and not FENCE.match(line)) or _unread(line):
            i += 1
            continue
        if label and indentation(line) <= label_indent:
            label = ""
        block += 1
        start = len(out)
        if description := _DESCRIPTION.match(line):
            label, label_indent = description.group("name"), indentation(line)
            i = _past_options(lines, i + 1)  # `:noindex:` is not its body
        elif FENCE.match(line):
            i = _fenced(lines, i, out, block)
        elif CODE_DIRECTIVE.match(line):
            after = _past_options(lines, i + 1)
            i = _indented(lines, after, out, block, indentation(line), _caption(lines[i + 1 : after]))
        elif DIRECTIVE.match(line):
            i = _directive(lines, i, out, block)
        elif _AUTODOC.match(line):
            i = _past_block(lines, i + 1, indentation(line))
        elif admonition := _MKDOCS_ADMONITION.match(line):
            i = _admonition(lines, i, out, block, admonition)
        elif opened := _BLOCK.match(line):
            i = _pymdown_block(lines, i, out, block, opened)
        elif TABLE.match(line):
            i = _table(lines, i, out, block)
        elif DOCTEST.match(line):
            i = _doctest(lines, i, out, block)
        elif ITEM.match(line) or FIELD.match(line):
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
    j = _past_options(lines, j)
    text = " ".join(parts)
    if name in _NOT_PROSE:
        j = _past_block(lines, j, base)
    if name in _SILENT:
        if name in _NOT_PROSE and out and out[-1].kind == Kind.SENTENCE and out[-1].text.endswith(":"):
            out.pop()  # "What it looks like:" introduces what only a docs build shows
        return j
    if name in _VERSIONS:
        version, _, body = text.partition(" ")
        if not body:
            body, j = _first_paragraph(lines, j, base)
        text = f"{_VERSIONS[name]} {version}".strip() + (f": {body}" if body else ".")
    elif name in _TITLED:  # a box or a tab headed by its argument: "Note: …", "Bash: …"
        body, j = _first_paragraph(lines, j, base)
        text = _headed(text, body)
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
    if body < len(lines) and _AUTODOC.match(lines[body]) and indentation(lines[body]) > indentation(lines[i]):
        return _past_block(lines, body, indentation(lines[i]))  # a box of generated reference only
    text, j = _first_paragraph(lines, i + 1, indentation(lines[i]))
    out.extend(_sentences(_headed(title, text), block))
    return j if text else i + 1


def _pymdown_block(lines: list[str], i: int, out: list[Unit], block: int, found: re.Match[str]) -> int:
    """A pymdownx block (`/// warning`, `/// tab | Python`) read as an admonition is: its title,
    or its name as a box shows it, before its first paragraph ("Warning: …"). The line after
    what was read; the rest of its body is read as any text, and its closing `///` as none."""
    name = found["name"].lower()
    title = (found["title"] or _ADMONITIONS.get(name, name.title())).strip()
    j = i + 1
    while j < len(lines) and not lines[j].strip():
        j += 1
    end = j
    while (
        end < len(lines)
        and lines[end].strip()
        and not (_BLOCK_END.match(lines[end]) or _BLOCK.match(lines[end]))
    ):
        end += 1
    paragraph = lines[j:end]
    text = ""
    if paragraph and not any(p.match(paragraph[0]) for p in (FENCE, ITEM, DIRECTIVE, TABLE, DOCTEST)):
        text = " ".join(line.strip() for line in paragraph)
    out.extend(_sentences(_headed(title, text), block))
    return end if text else i + 1


def _headed(title: str, text: str) -> str:
    """A box's first paragraph headed by its title ("Warning: …"), or either alone."""
    return f"{title}: {text}" if title and text else text or title


def _past_block(lines: list[str], j: int, base: int) -> int:
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


def continued_code(previous: Unit, before: str, text: str) -> tuple[Unit | None, str]:
    """When the passage `before` ends inside a code block, or with the line opening one,
    and the passage after it, `text`, goes on with the block: the block's rest as a code
    unit, without the lines `text` repeats of `before` (chunks overlap), and the text after
    the block. When `previous` (the passage's last unit) is the block's code, the unit is
    the whole block, read from its opener as `previous` was, so that it begins with
    `previous`'s text (one block, its lines indented as written); else a block of its own
    after it. Otherwise None and `text`."""
    continued = continued_block(before, text)
    if not continued.lines:
        return None, text
    rest = "\n".join(split_lines(text)[continued.lines :])
    fresh = continued.code[continued.repeated :]
    if not "".join(fresh).strip():
        return None, rest
    if previous.kind == Kind.CODE and continued.opener >= 0:
        read: list[Unit] = []
        _read([*split_lines(before)[continued.opener :], *fresh], 0, read, previous.block - 1)
        whole = next((u for u in read if u.kind == Kind.CODE), None)
        if whole is not None and whole.text.startswith(previous.text):
            return replace(whole, block=previous.block, section=previous.section, label=previous.label), rest
    code = _cap(textwrap.dedent("\n".join(fresh)).strip("\n"))
    block = previous.block if previous.kind == Kind.CODE else previous.block + 1
    return Unit(code, Kind.CODE, block, previous.section, previous.label), rest


def _unread(line: str) -> bool:
    """A reST comment or link target, a Markdown link reference definition, an option line of
    a directive a passage begins after (`:members:`) or a page's metadata (`:orphan:`), the
    `///` closing a pymdownx block, or a snippet the docs build inserts from another file."""
    option = _OPTION_NAME.match(line)
    return bool(
        _COMMENT.match(line)
        or _REFERENCE.match(line)
        or _BLOCK_END.match(line)
        or _INCLUDE.match(line)
        or (option and option["name"] in _OPTIONS)
    )


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


def _fenced(lines: list[str], i: int, out: list[Unit], block: int) -> int:
    fence = FENCE.match(lines[i])
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
    while i < len(lines) and OPTION_LINE.match(lines[i]):
        i += 1
    return i


def _indented(lines: list[str], i: int, out: list[Unit], block: int, base: int, caption: str = "") -> int:
    """A literal block: the lines indented deeper than `base` (blank lines inside kept), under
    a comment line naming its `caption` when it has one."""
    end = i
    while end < len(lines) and (not lines[end].strip() or indentation(lines[end]) > base):
        end += 1
    body = lines[i:end]
    while body and not body[-1].strip():
        body.pop()
    while body and not body[0].strip():
        body.pop(0)
    if body:
        least = min(indentation(b) for b in body if b.strip())
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
    base = indentation(lines[i])
    end = i
    while end < len(lines):
        start = end
        end += 1
        while end < len(lines):
            line = lines[end]
            if line.strip() and indentation(line) <= base and (ITEM.match(line) or FIELD.match(line)):
                break
            if not line.strip() and (end + 1 >= len(lines) or indentation(lines[end + 1]) <= base):
                break
            if line.strip() and indentation(line) < base:
                break
            if is_heading(lines, end):
                break
            end += 1
        own = start + 1
        while (
            own < end and lines[own].strip() and not (FENCE.match(lines[own]) or DIRECTIVE.match(lines[own]))
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
            or not (ITEM.match(lines[end]) or FIELD.match(lines[end]))
        ):
            break
        if indentation(lines[end]) != base:
            break
    return end, block


def _item_text(lines: list[str], base: int) -> str:
    """An item's own paragraph on one line, but for the sub-items it runs into (Markdown
    nests a list without a blank line), each on a line of its own at its depth."""
    text = ""
    for line in lines:
        if not line.strip():
            continue
        if text and ITEM.match(line) and indentation(line) > base:
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
    least = min(indentation(line) for line in lines if line.strip())
    dedented = [line[least:] for line in lines]
    if literal:
        out.append(_code("\n".join(dedented).strip("\n"), block + 1))
        return block + 1
    return _read(dedented, 0, out, block, depth)


def _paragraph(lines: list[str], i: int, out: list[Unit], block: int) -> int:
    """A paragraph's sentences; one ending in `::` is followed by a literal block."""
    base = indentation(lines[i])
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
        if following < len(lines) and indentation(lines[following]) > base:
            return _indented(lines, following, out, block, base)
    return max(end, i + 1)


def _starts_block(lines: list[str], j: int, first: int) -> bool:
    if j == first:
        return False
    line = lines[j]
    return bool(
        FENCE.match(line)
        or DIRECTIVE.match(line)
        or ITEM.match(line)
        or is_heading(lines, j)
        or UNDERLINE.match(line)
        or indentation(line) > indentation(lines[first]) + 1
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
