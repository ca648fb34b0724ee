"""Where a passage was cut from its document, read from the passages before it.

Chunks are cut by size and overlap (`knowledge.indexing.chunking`), so a passage may begin in the
middle of a line, of a sentence or of a code block that an earlier passage opened. Given the
text before it in its section and how much of it the passage repeats (`Before`, from the
chunks' offsets), these functions tell whether a code block is open where the passage begins
and which of its lines go on with it (`continued_block`), whether its first words end a
sentence begun before it (`begins_mid_sentence`), and mend a first line cut from its indented
paragraph (`goes_on`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from knowledge.text.syntax import (
    ATX,
    DIRECTIVE,
    DOCTEST,
    FENCE,
    FIELD,
    ITEM,
    OPTION_LINE,
    TABLE,
    UNDERLINE,
    fence_lines,
    indentation,
    opens_literal,
    split_lines,
)


@dataclass(frozen=True)
class Before:
    """What comes before a passage in its section: the text of the passages before it, and how
    many of the passage's first characters repeat the end of that text (chunks overlap; the
    chunks' offsets say by how much)."""

    text: str = ""
    repeated: int = 0

    def start(self) -> int | None:
        """Where in `text` (its lines as `split_lines` reads them) the passage begins; None when
        it repeats nothing, beginning where `text` ends."""
        if self.repeated <= 0 or not self.text:
            return None
        tail = self.text[len(self.text) - self.repeated :]
        return len("\n".join(split_lines(self.text))) - len("\n".join(split_lines(tail)))

    @classmethod
    def section(cls, before: Sequence[tuple[str, int | None]], start: int | None) -> Before:
        """What comes before a passage starting at `start`, given the passages before it in
        its section (each its text and its start, in order; none for a section's first)."""
        if not before:
            return cls()
        text, last_start = before[-1]
        return cls(joined(before), repeated(last_start, text, start))


def repeated(start: int | None, text: str, next_start: int | None) -> int:
    """How many characters the passage starting at `next_start` repeats of the one starting at
    `start` with `text` (chunks overlap), by their offsets; 0 when either is not known."""
    if start is None or next_start is None:
        return 0
    return max(0, min(len(text), start + len(text) - next_start))


def joined(passages: Sequence[tuple[str, int | None]]) -> str:
    """Consecutive passages of a section (each its text and its start) as one text, each
    without what it repeats of the one before; a line break between two that do not overlap."""
    text = ""
    for before, (passage, start) in zip([None, *passages], passages, strict=False):
        if before is None:
            text = passage
            continue
        overlap = repeated(before[1], before[0], start)
        text = text + passage[overlap:] if overlap else f"{text}\n{passage}"
    return text


class Continued(NamedTuple):
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


def continued_block(context: Before, text: str) -> Continued:
    """What of `text` continues a code block still open at the end of `before` (the text
    of `context`), the passage before it; nothing when no block is open there. An indented block goes on while
    lines are indented deeper than its opener; a fenced one up to its closing fence.
    Passages overlap: `text` may repeat the end of `before`, from the middle of a line, and
    what it repeats may begin inside a block that `before` closes."""
    before_lines, lines = split_lines(context.text), split_lines(text)
    before = "\n".join(before_lines)
    start = context.start()
    if start is None:  # it repeats nothing: it begins where `before` ends
        row, cut = len(before_lines), False
    else:
        row, cut = before.count("\n", 0, start), before[start - 1 : start] not in ("", "\n")  # mid-line
    found = open_block(before_lines, row + 1 if cut else row)
    if found is None or (cut and found[0] == row) or not text.strip():
        whole = (
            before_lines[row] if cut else ""
        )  # no block open where `text` begins, or it begins on its opener
        return Continued(0, [], 0, cut, whole=whole)
    _, base, fenced = found
    end = 1 if cut else 0
    while end < len(lines) and (
        not FENCE.match(lines[end]) if fenced else not lines[end].strip() or indentation(lines[end]) > base
    ):
        end += 1
    body = lines[:end]
    if cut:  # the line the passage begins in the middle of, whole: `before` ends with it
        body[0] = before_lines[row]
    repeated = 0 if start is None else before[start:].count("\n") + 1
    return Continued(min(end + fenced, len(lines)), body, repeated, cut, found[0], body[0] if cut else "")


def goes_on(lines: list[str]) -> None:
    """A passage's first line, begun in the middle of its line, indented as the line after
    it when that one goes on with its paragraph (a directive's or a list item's body):
    "…requests do" and "    not time out." are one sentence, not a sentence and a fragment."""
    if len(lines) < 2 or not lines[1].strip() or indentation(lines[1]) <= indentation(lines[0]):
        return
    if not (FIELD.match(lines[1]) or DOCTEST.match(lines[1])):  # (a paragraph stops at other blocks)
        lines[0] = " " * indentation(lines[1]) + lines[0].lstrip()


def open_block(lines: list[str], end: int) -> tuple[int, int, bool] | None:
    """The code block open after `lines[:end]`, as (the line opening it, -1 when the lines
    begin inside it; the indentation its lines run deeper than; whether it is fenced), or
    None. A fenced block is open when a fence before `end` has no closing one before it; an
    indented one when, going back from line `end - 1`, every line is blank or indented
    deeper than its opener, a paragraph ending with `::` or a code directive."""
    inside, fences = fence_roles(lines)  # `lines` may begin inside a fenced block themselves
    opened = [(j, opens) for j, opens in fences if j < end]
    if opened and opened[-1][1]:
        return opened[-1][0], indentation(lines[opened[-1][0]]), True
    if inside and not opened:
        return -1, 0, True
    least = None
    for j in range(end - 1, -1, -1):
        line = lines[j]
        if not line.strip():
            continue
        indent = indentation(line)
        if (least is None or indent < least) and opens_literal(line):
            return j, indent, False  # (with no line after it: the block begins past `end`)
        if indent == 0:
            return None
        if not OPTION_LINE.match(line):  # a code directive's options lie between it and its code
            least = indent if least is None else min(least, indent)
    return None


def closing_fence(lines: list[str]) -> int | None:
    """The line of the fence that closes a code block begun before the passage (a passage
    cut from a document may start inside one), or None."""
    inside, fences = fence_roles(lines)
    return fences[0][0] if inside and fences else None


def fence_roles(lines: list[str]) -> tuple[bool, list[tuple[int, bool]]]:
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


def begins_mid_sentence(context: Before, text: str) -> bool:
    """Whether `text` begins in the middle of a sentence of `before`, the passage before it
    (chunks are cut by size and overlap): in a line whose start, in `before`, does not end a
    sentence, or at the start of a line that goes on with a line of prose before it that
    does not end one (reST wraps its paragraphs)."""
    before = "\n".join(split_lines(context.text))
    if not before.strip() or not text[:1].strip():
        return False
    start = context.start()
    preceding = split_lines(before if start is None else before[:start])
    if start is not None and preceding[-1].strip():  # it begins in the middle of a line
        return not ends_sentence(preceding[-1])
    if not preceding[-1].strip():
        preceding.pop()  # it begins a line
    previous = preceding[-1] if preceding else ""
    if not previous.strip():
        return False  # a new paragraph
    first = split_lines(text)[0]
    return not (
        indentation(previous) != indentation(first)
        or ends_sentence(previous)
        or any(p.match(previous) for p in (UNDERLINE, FENCE, TABLE, ATX))
        or any(p.match(first) for p in (ITEM, DIRECTIVE, FENCE, FIELD, DOCTEST, TABLE))
    )


def ends_sentence(line: str) -> bool:
    return line.rstrip().rstrip("\"')]*`").endswith((".", "!", "?", ":"))
