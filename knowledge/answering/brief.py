"""The answer at a glance: what a chat surface shows before "Show more".

A reader in Slack wants the answer in a glance, not 30 to 55 quoted lines. The brief is at
most `VISIBLE_LINES` display lines (a line of `LINE_CHARS` characters; a longer one counts as
the lines it wraps to). The whole answer stays what it was: the brief is a view of it.

From the documents (no model), the brief is quotes shown as quotes from their document
("From deploy.md › Rollbacks: …"), never a sentence Lore seems to have written: the units the
second stage scored best (`knowledge.judging.ranking`) among those the whole answer quotes,
picked best first while they fit, shown in the order they stand in their documents, the
sentences of one paragraph on one line as the paragraph has them ("…" where units between
them are left out). So the brief holds nothing the whole answer does not, and no passage the
whole answer does not quote (none off the subject). No threshold decides what is shown: the
scores order the units, the room decides how many.

Anything else (a model's answer, an abstention) is cut after the paragraph, else the line,
that fills the room.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

VISIBLE_LINES = 8
"""Lines a reader takes in at a glance, before "Show more"."""
LINE_CHARS = 100
"""Characters of a display line (Slack's message column on a laptop); a longer line counts as
the lines it wraps to."""
GAP = "…"
"""Between two quoted units that do not follow each other in their document."""
FENCES = ("```", "~~~")
CODE_BREAK = "\n"
"""A code block opens on a line of its own, after its source."""


def display_lines(text: str) -> int:
    """How many lines `text` takes on screen: each of its lines, wrapped at `LINE_CHARS`."""
    return sum(max(1, math.ceil(len(line) / LINE_CHARS)) for line in text.split("\n"))


@dataclass(frozen=True)
class Glimpse:
    """A quote in the brief: lines of the excerpt that citation `n` shows, under `source`
    (its document's name, and the heading its passage stands under: "deploy.md › Rollbacks"),
    which opens its first line ("From deploy.md › Rollbacks: …")."""

    n: int
    text: str
    source: str = ""

    @property
    def shown(self) -> str:
        """The quote as a line of text shows it, its source first."""
        if not self.source:
            return self.text
        return f"From {self.source}:{CODE_BREAK if self.text.startswith(FENCES) else ' '}{self.text}"


@dataclass(frozen=True)
class Brief:
    """What a chat surface shows first. `quotes` for an answer quoted from the documents,
    else `text`, the start of the answer's own words. `complete`: nothing of the answer is
    left for "Show more" (its sources aside)."""

    text: str = ""
    quotes: tuple[Glimpse, ...] = ()
    complete: bool = True

    def lines(self) -> int:
        """Display lines of the brief, each quote's source included."""
        if self.quotes:
            return sum(display_lines(q.shown) for q in self.quotes)
        return display_lines(self.text) if self.text else 0


def cut(text: str, room: int = VISIBLE_LINES) -> Brief:
    """The start of `text` that fits `room` lines: whole paragraphs, else whole lines, else
    the first line's first words; a code block left open is closed."""
    text = text.strip()
    if display_lines(text) <= room:
        return Brief(text=text)
    room -= 1  # for the gap that says there is more (and a fence that closes a code block)
    kept: list[str] = []
    for paragraph in text.split("\n\n"):
        if display_lines("\n\n".join([*kept, paragraph])) > room:
            break
        kept.append(paragraph)
    shown = "\n\n".join(kept)
    if not shown:
        lines: list[str] = []
        for line in text.split("\n"):
            if display_lines("\n".join([*lines, line])) > room - 1:
                break
            lines.append(line)
        shown = "\n".join(lines) or _words(text.split("\n", 1)[0], room * LINE_CHARS)
    return Brief(text=_closed(shown) + "\n" + GAP, complete=False)


@dataclass(frozen=True)
class Candidate:
    """A unit the whole answer quotes: the citation it is in, its place in that quote, the
    paragraph (list, code block) it belongs to, its text as shown, its second-stage score,
    and whether it is prose (sentences of one paragraph are shown as one)."""

    n: int
    position: int
    block: int
    shown: str
    score: float
    prose: bool = True


def pick(
    candidates: Sequence[Candidate], sources: Mapping[int, str] | None = None, room: int = VISIBLE_LINES
) -> tuple[Glimpse, ...]:
    """The best-scoring candidates that fit `room` lines together, as quotes in citation
    order under their `sources`, each in the order of its units: sentences of one paragraph
    on one line, `GAP` where units are skipped. When not even the best fits, its start."""
    sources = sources or {}
    chosen: list[Candidate] = []
    for candidate in sorted(candidates, key=lambda c: (-c.score, c.n, c.position)):
        if _lines(_glimpses([*chosen, candidate], sources)) <= room:
            chosen.append(candidate)
    if chosen or not candidates:
        return _glimpses(chosen, sources)
    best = max(candidates, key=lambda c: (c.score, -c.n, -c.position))
    label = sources.get(best.n, "")
    room_left = room - display_lines(f"From {label}: ") + 1 if label else room
    return (Glimpse(best.n, cut(best.shown, max(2, room_left)).text, label),)


def _glimpses(chosen: Sequence[Candidate], sources: Mapping[int, str]) -> tuple[Glimpse, ...]:
    quotes = []
    for n in sorted({c.n for c in chosen}):
        mine = sorted((c for c in chosen if c.n == n), key=lambda c: c.position)
        lines: list[str] = []
        for before, unit in zip([None, *mine], mine, strict=False):
            skipped = before is not None and unit.position != before.position + 1
            if before is not None and before.block == unit.block and before.prose and unit.prose:
                lines[-1] += f" {GAP} {unit.shown}" if skipped else f" {unit.shown}"
            else:
                lines.append(f"{GAP} {unit.shown}" if skipped and unit.prose else unit.shown)
        quotes.append(Glimpse(n, "\n".join(lines), sources.get(n, "")))
    return tuple(quotes)


def _lines(quotes: Sequence[Glimpse]) -> int:
    return Brief(quotes=tuple(quotes)).lines()


def _words(line: str, limit: int) -> str:
    return line if len(line) <= limit else line[: limit - 1].rsplit(" ", 1)[0]


def _closed(text: str) -> str:
    """`text` with a code fence it leaves open closed."""
    fences = [line for line in text.split("\n") if line.lstrip().startswith(FENCES)]
    return text + "\n```" if len(fences) % 2 else text
