"""Documents cut into the units an answer may quote: sentences, list items, code blocks.

Documents arrive as Markdown or reStructuredText-flavoured plain text. A quote must never
stop in the middle of a fact, so a document is cut only where a reader would pause: between
sentences of a paragraph, between list items, around a code block (fenced, indented after
a `::` paragraph, or under a `.. code-block::` directive), which is kept whole. Heading lines
and their underlines are not quotable; they name the section the units that follow belong to.
A quoted sentence or item shows reST's inline markup as Sphinx renders it (`knowledge.text.markup`).

Ingest reads each document once, whole (`document_units`), each unit with where its source
lies in the document; `units` reads a passage alone (a table's rows, a model's answer).
"""

from __future__ import annotations

import enum
import re
import textwrap
from dataclasses import dataclass, field, replace

from knowledge.text.directives import (
    AUTODOC,
    BLOCK,
    DESCRIPTION,
    MKDOCS_ADMONITION,
    Framed,
    admonition,
    caption,
    directive,
    past_block,
    past_options,
    pymdown_block,
    unread,
)
from knowledge.text.markup import readable
from knowledge.text.syntax import (
    ATX,
    CODE_DIRECTIVE,
    DIRECTIVE,
    DOCTEST,
    FENCE,
    FIELD,
    ITEM,
    TABLE,
    UNDERLINE,
    fence_lines,
    heading_text,
    indentation,
    is_heading,
    split_lines,
)

MAX_UNIT_CHARS = 1200
"""A longer code block or item is cut at a line end, saying so with "…"."""

_BACKTICK_RUN = re.compile(r"`{3,}")
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
    """It is the part of a unit that begins before the passage (in the passage before it),
    which holds the unit whole: "CLI command, or `with` block." ends a sentence begun there."""
    start: int | None = None
    """Where its source begins in the document's text; None when not known (a passage read
    alone)."""
    end: int | None = None
    """Where its source ends in the document's text (`document[start:end]` is what it was read
    from)."""
    titled: int | None = field(default=None, compare=False)
    """Where the heading of its `section` begins in the document's text (not stored: a
    passage shows the section only when it holds that heading)."""
    display: str | None = field(default=None, compare=False)
    """`rendered`, as ingest recorded it (a question renders no markup); None: not recorded."""

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
        if self.display is not None:
            return self.display
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


def units(text: str, *, titles: bool = True) -> list[Unit]:
    """The quotable units of `text`, a passage read alone (a table's rows, a chunk stored
    without its document's units), in order. A text of titles alone is quoted by its titles'
    words, unless `titles` is False."""
    lines = split_lines(text)
    while lines and not lines[-1].strip():
        lines.pop()
    if lines and _BARE_MARKER.match(lines[-1]):
        lines.pop()  # the passage was cut just after the next item's number
    out: list[Unit] = []
    i, code = 0, []
    if (closing := _closing_fence(lines)) is not None:  # it starts inside a fenced block
        i, code = closing + 1, lines[:closing]
    block = 1 if any(line.strip() for line in code) else 0
    if block:  # the rest of a block the passage before begins
        out.append(replace(_code(textwrap.dedent("\n".join(code)).strip("\n"), block), continues=True))
    _read(lines, i, out, block)
    found = [u for u in out if u.rendered.strip() and not _bare_fences(u)]  # not an image's tag alone
    if len(found) > 1 and _looks_like_a_title(found[-1]) and found[-2].block != found[-1].block:
        found.pop()  # a heading whose underline fell into the next passage
    if not found and titles:  # nothing but titles: their words are what there is to quote
        words = " ".join(
            line.strip()
            for line in lines
            if not (UNDERLINE.match(line) or unread(line) or DIRECTIVE.match(line))
        )
        found = [Unit(" ".join(words.split()), Kind.SENTENCE, 1)] if words.strip() else []
    return found


def document_units(text: str) -> list[Unit]:
    """The quotable units of a whole document, in order, each with where its source lies in
    `text` (`Unit.start`, `Unit.end`): read once, from its first line, so that no unit is
    guessed from a piece of it. Blocks are placed by their lines; a sentence or an item within
    its block by its first word, searched for from where the one before it begins."""
    lines = split_lines(text)
    at = line_starts(text)
    out: list[Unit] = []
    _read(lines, 0, out, 0, at=at)
    starts, ends, cursor = [], [], 0
    for unit in out:
        lo, hi = unit.start or 0, unit.end or len(text)
        found = _found(text, unit, max(lo, cursor), hi)
        starts.append(found if found >= 0 else max(lo, min(cursor, hi)))
        ends.append(hi)
        if found >= 0:
            cursor = found + 1
    for k in range(len(out) - 1):  # a unit of a block ends where the next one begins
        if starts[k] < starts[k + 1] < ends[k]:
            end = starts[k + 1]
            while end > starts[k] + 1 and text[end - 1].isspace():
                end -= 1
            ends[k] = end
    return [  # (not `replace`: a long page has 100,000s of units)
        Unit(u.text, u.kind, u.block, u.section, u.label, u.continues, start, end, u.titled)
        for u, start, end in zip(out, starts, ends, strict=True)
        if u.rendered.strip() and not _bare_fences(u)
    ]


def _found(text: str, unit: Unit, lo: int, hi: int) -> int:
    """Where `unit` begins in `text[lo:hi]`, or -1: code by its first line as written; prose
    by its first word followed by its second (a word alone may be found in a sentence before)."""
    if unit.kind == Kind.CODE:
        first = next((line.strip() for line in unit.text.split("\n") if line.strip()), "")
        return text.find(first, lo, hi) if first else -1
    words = unit.text.split(maxsplit=2)
    if not words:
        return -1
    at = text.find(words[0], lo, hi)
    while at >= 0 and len(words) > 1:
        after = _SPACE.match(text, at + len(words[0])).end()  # type: ignore[union-attr]
        if text.startswith(words[1], after):
            return at
        at = text.find(words[0], at + 1, hi)
    return at


_SPACE = re.compile(r"\s*")


def line_starts(text: str) -> list[int]:
    """Where each line of `text`, as `split_lines` cuts it, begins."""
    return [0, *(found.end() for found in _LINE_BREAK.finditer(text))]


_LINE_BREAK = re.compile(r"\r\n|\r|\n")


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
    fences = fence_lines(lines, 0)

    def walk(inside: bool) -> tuple[int, list[tuple[int, bool]]]:
        wrong, roles = 0, []
        for j in fences:
            if inside and FENCE.sub("", lines[j]).strip():
                wrong += 1
                continue
            inside = not inside
            roles.append((j, inside))
        return wrong, roles

    (outside_wrong, outside), (inside_wrong, inside) = walk(False), walk(True)
    if inside_wrong != outside_wrong:
        return (True, inside) if inside_wrong < outside_wrong else (False, outside)
    first = fences[0] if len(fences) % 2 else 0
    if first == 0 or FENCE.sub("", lines[first]).strip() or not lines[first - 1].strip():
        return False, outside
    return True, inside


def _bare_fences(unit: Unit) -> bool:
    """A code unit of fence lines only: a passage that ends just after a block opens."""
    return unit.kind == Kind.CODE and all(
        not line.strip() or FENCE.match(line) for line in unit.text.split("\n")
    )


def _read(
    lines: list[str], i: int, out: list[Unit], block: int, depth: int = 0, at: list[int] | None = None
) -> int:
    """The units of `lines` from line `i` on, appended to `out`; the last block number used
    (`block` is the one before the first). `depth`: how many list items `lines` is nested in.
    With `at`, where each line begins in the document: each unit gets the span of the block
    it was read from (`Unit.start`, `Unit.end`) unless a nested reading gave it a narrower one."""
    section, label, label_indent, titled = "", "", -1, None
    while i < len(lines):
        line = lines[i]
        if is_heading(lines, i):
            section, label, titled = heading_text(lines[i]), "", at[i] if at else None
            i += 1 if ATX.match(line) else 2
            continue
        if not line.strip() or (UNDERLINE.match(line) and not FENCE.match(line)) or unread(line):
            i += 1
            continue
        if label and indentation(line) <= label_indent:
            label = ""
        block += 1
        start, first = len(out), i
        if description := DESCRIPTION.match(line):
            label, label_indent = description.group("name"), indentation(line)
            i = past_options(lines, i + 1)  # `:noindex:` is not its body
        elif FENCE.match(line):
            i = _fenced(lines, i, out, block)
        elif CODE_DIRECTIVE.match(line):
            after = past_options(lines, i + 1)
            i = _indented(lines, after, out, block, indentation(line), caption(lines[i + 1 : after]))
        elif DIRECTIVE.match(line):
            i = _framed(directive(lines, i), out, block)
        elif AUTODOC.match(line):
            i = past_block(lines, i + 1, indentation(line))
        elif box := MKDOCS_ADMONITION.match(line):
            i = _framed(admonition(lines, i, box), out, block)
        elif opened := BLOCK.match(line):
            i = _framed(pymdown_block(lines, i, opened), out, block)
        elif TABLE.match(line):
            i = _table(lines, i, out, block)
        elif DOCTEST.match(line):
            i = _doctest(lines, i, out, block)
        elif ITEM.match(line) or FIELD.match(line):
            i, block = _item(lines, i, out, block, depth, at)
        else:
            i = _paragraph(lines, i, out, block)
        lo, hi = _span(lines, at, first, i) or (None, None)
        out[start:] = [  # (not `replace`: a long page has 100,000s of units)
            Unit(u.text, u.kind, u.block, section, label, u.continues, lo, hi, titled)
            if u.start is None
            else Unit(u.text, u.kind, u.block, section, label, u.continues, u.start, u.end, titled)
            for u in out[start:]
        ]
    return block


def _span(lines: list[str], at: list[int] | None, first: int, after: int) -> tuple[int, int] | None:
    """Where lines `first` to `after` (not included) lie in the document, without the blank
    lines that end them; None without `at`."""
    if at is None:
        return None
    last = max(first, min(after, len(lines)) - 1)
    while last > first and not lines[last].strip():
        last -= 1
    return at[first], at[last] + len(lines[last])


def _framed(framed: Framed, out: list[Unit], block: int) -> int:
    """The sentences of what a directive or a box shows (`knowledge.text.directives`), appended to
    `out`; the line after it."""
    if framed.hides and out and out[-1].kind == Kind.SENTENCE and out[-1].text.endswith(":"):
        out.pop()  # "What it looks like:" introduces what only a docs build shows
    out.extend(_sentences(framed.text, block))
    return framed.end


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


def _item(
    lines: list[str], i: int, out: list[Unit], block: int, depth: int, at: list[int] | None = None
) -> tuple[int, int]:
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
        block = _nested(
            lines[own:end], out, block, depth + 1, literal=literal, at=at[own:end] if at else None
        )
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


def _nested(
    lines: list[str], out: list[Unit], block: int, depth: int, *, literal: bool, at: list[int] | None = None
) -> int:
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
    where = [a + least if line.strip() else a for a, line in zip(at, lines, strict=True)] if at else None
    return _read(dedented, 0, out, block, depth, where)


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


def sentences(text: str, block: int) -> list[Unit]:
    """The sentences of a paragraph's `text`, as units of `block`."""
    return _sentences(text, block)


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
