"""Chunking: documents split along their structure, each chunk sized to the embedder's window.

Text arrives Markdown-flavoured (extractors write headings as `#` lines). It is cut at
headings into sections that know their heading path ("Install > Linux"); a heading line is
not text of its own, its words live in the path. Each section is split by
`semantic-text-splitter`'s Markdown splitter (paragraphs, then sentences, then words) so
that a chunk, with its title and heading prefix, fits MiniLM's 256 word pieces. A chunk
then repeats the end of the one before it in its section. Chunks with hardly any text are
dropped.

Why not the splitter's own token counting and overlap: counting with the tokenizer, the
splitter ran at 0.01–0.1 MB/s here (it measures long spans again and again), and its
overlap, made of whole units at the level it split at, was empty for most pairs of
Markdown chunks. So a section is split by characters, at the section's own rate of
characters per word piece, and every chunk is counted exactly (`count_by_words`): one that
runs over is split again by exact count, neighbours that fit together are joined, and the
overlap is added here, counted.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise
from typing import Any

from knowledge.backends.wordpieces import (
    SPECIAL_TOKENS,
    WINDOW,
    count_by_words,
    count_word_pieces,
    split_word_pieces,
    truncate_word_pieces,
)
from knowledge.text.syntax import ATTRIBUTES

__all__ = ["ChunkSpec", "TextChunk", "chunk_text", "count_word_pieces", "prefix"]

PREFIX_PIECES = WINDOW // 4
"""The title and heading prefix is cut to this many word pieces (a quarter of MiniLM's window)."""
MIN_TEXT_PIECES = 32  # under this a chunk's own text is too short to embed as a passage
MAX_CHARS_PER_PIECE = 8
"""Bounds a chunk's length when the model reads long runs as one piece ([UNK] for words
over 100 characters, such as base64 or a line without spaces)."""
HEADING_CHARS = 200  # a heading longer than a line is a paragraph set as one: cut
_PATH_SEPARATOR, _TITLE_SEPARATOR = " > ", " — "
"""Between the headings of a path ("Install > Linux"), and after the title ("Guide — Install")."""
BLOCK_CHARS = 32_768  # the splitter slows on long spans (see `_blocks`): text is fed to it in blocks
CHAR_STEP = 16  # capacities are rounded down to a multiple of these, so splitters are reused

# A fenced code block (whose `#` lines are not headings) or an ATX heading line.
_BLOCKS = re.compile(
    r"^ {0,3}(?P<fence>`{3,}|~{3,}).*\n(?:.*\n)*?(?: {0,3}(?P=fence)[`~]*[ \t]*\r?$|.*\Z)"
    r"|^ {0,3}(?P<hashes>#{1,6})[ \t]+(?P<name>.+?)(?:[ \t]+#+)?[ \t]*\r?$",
    re.MULTILINE,
)
_SEPARATOR = re.compile(r"[ \t\n\r]")  # whitespace the tokenizer always splits at
_WORD_START = re.compile(r"(?<=[ \t\n\r])\S")
_LINK = re.compile(r"!?\[([^\]\n]*)\]\([^)\n]*\)")
_EMPHASIS = re.compile(r"[*`]+")


@dataclass(frozen=True)
class ChunkSpec:
    """Chunking parameters; the defaults suit all-MiniLM-L6-v2.

    Raises ValueError when the window leaves too little room for text (the prefix may take
    `PREFIX_PIECES`, and the text needs at least `MIN_TEXT_PIECES`) or when the overlap is
    over half of the text's share.
    """

    max_tokens: int = WINDOW
    """The embedder's window in word pieces, [CLS] and [SEP] included."""
    overlap_tokens: int = 32
    min_chars: int = 40
    """Chunks with fewer non-space characters are dropped (a document keeps at least one)."""

    def __post_init__(self) -> None:
        room = self.max_tokens - SPECIAL_TOKENS - PREFIX_PIECES
        if room < MIN_TEXT_PIECES:
            least = SPECIAL_TOKENS + PREFIX_PIECES + MIN_TEXT_PIECES
            raise ValueError(f"max_tokens={self.max_tokens} is too small: use at least {least}")
        if not 0 <= self.overlap_tokens <= room // 2:
            raise ValueError(f"overlap_tokens={self.overlap_tokens}: use 0 to {room // 2}")
        if self.min_chars < 0:
            raise ValueError(f"min_chars={self.min_chars}: use 0 or more")


@dataclass(frozen=True)
class TextChunk:
    """A piece of a document, in document order."""

    position: int
    """0-based and consecutive among the chunks kept."""
    heading: str
    """Heading path, e.g. "Install > Linux > Debian"; '' before the first heading."""
    text: str
    """`document[start : start + len(text)]`: the chunk's text, with the overlap it repeats
    from the chunk before, without the prefix."""
    start: int | None
    """Character offset of the chunk in the document's text; None when its text is not one
    stretch of it (a table's chunk: the header, then its rows)."""
    embedded: str | None = None
    """What is embedded instead of `text` when the two differ: the part of a table chunk
    that fits the window (the rest of its rows are found by keyword)."""

    def prefix(self, title: str) -> str:
        """The title and heading path as embedded; also what keyword search and citations show."""
        return _prefix(title, self.heading)

    def embedding_text(self, title: str) -> str:
        """The title and heading path on one line (at most `PREFIX_PIECES` word pieces), then
        the text: "Guide — Install > Linux\\n<text>". The title is not repeated when the path
        starts with it. With the `ChunkSpec` the chunk was made with, it fits the window."""
        prefix = _prefix(title, self.heading)
        text = self.text if self.embedded is None else self.embedded
        return f"{prefix}\n{text}" if prefix else text


@dataclass(frozen=True, slots=True)
class _Span:
    """`document[start:end]` under a heading path; `lead` (<= start) is where the span's
    text begins once it repeats the end of the span before it."""

    heading: str
    start: int
    end: int
    lead: int


@dataclass(frozen=True, slots=True)
class _Part:
    """`document[start:end]`, which holds `pieces` word pieces."""

    start: int
    end: int
    pieces: int


def chunk_text(text: str, *, title: str = "", spec: ChunkSpec = ChunkSpec()) -> list[TextChunk]:
    """The document's chunks in order; [] for empty or whitespace-only text.

    Every chunk satisfies `count_word_pieces(chunk.embedding_text(title)) + 2 <= spec.max_tokens`.
    A chunk never spans two sections; one that follows another of its section starts by
    repeating the last `spec.overlap_tokens` word pieces or fewer of it (from a word start).
    Deterministic; no I/O but loading the tokenizer.
    """
    if not text.strip():
        return []
    parts = [_split(text, section, title, spec) for section in _sections(text)]
    kept = _drop_tiny(text, parts, spec.min_chars)
    return [TextChunk(n, s.heading, text[s.lead : s.end], s.lead) for n, s in enumerate(kept)]


def _sections(text: str) -> list[_Span]:
    """Each stretch of non-blank text between headings, with its heading path.

    A text made of headings only is one section without a path, so it is not lost.
    """
    found: list[_Span] = []
    path: list[tuple[int, str]] = []
    cursor = 0
    for match in _BLOCKS.finditer(text):
        if match["hashes"] is None:
            continue  # a fenced code block
        found.append(_Span(_joined(path), cursor, match.start(), cursor))
        level = len(match["hashes"])
        path = [(lvl, name) for lvl, name in path if lvl < level] + [(level, _clean(match["name"]))]
        cursor = match.end()
    found.append(_Span(_joined(path), cursor, len(text), cursor))
    return [s for s in found if text[s.start : s.end].strip()] or [_Span("", 0, len(text), 0)]


def _split(text: str, section: _Span, title: str, spec: ChunkSpec) -> list[_Span]:
    """The section's chunks: split by characters at the section's own rate, made to fit the
    window less the overlap, neighbours that fit together joined, then given their overlap."""
    capacity = spec.max_tokens - SPECIAL_TOKENS - count_by_words(_prefix(title, section.heading))
    own = capacity - spec.overlap_tokens
    body = text[section.start : section.end]
    rate = _chars_per_piece(body)
    chars = max(CHAR_STEP, int(own * rate) // CHAR_STEP * CHAR_STEP)
    splitter = _char_splitter(chars)
    parts = [
        part
        for at, block in _blocks(body)
        for offset, chunk in splitter.chunk_indices(block)
        for part in _fit(chunk, section.start + at + offset, own)
    ]
    parts = _join(text, parts, own, own * MAX_CHARS_PER_PIECE)
    leads = [part.start for part in parts[:1]]
    leads += [_lead(text, a, b, spec.overlap_tokens, rate) for a, b in pairwise(parts)]
    return [_Span(section.heading, p.start, p.end, lead) for p, lead in zip(parts, leads, strict=True)]


def _blocks(body: str) -> Iterator[tuple[int, str]]:
    """(offset, block) pieces of `body` of at most about `BLOCK_CHARS`: the splitter slows
    down on long texts. Chunks split apart at a cut are joined again if they fit together."""
    start = 0
    while len(body) - start > BLOCK_CHARS:
        cut = _cut_point(body, start + BLOCK_CHARS // 2, start + BLOCK_CHARS)
        yield start, body[start:cut]
        start = cut
    yield start, body[start:]


def _cut_point(body: str, low: int, high: int) -> int:
    """The last blank line in `body[low:high]`, else line end, else space, else `high`."""
    for mark in ("\n\n", "\n", " "):
        at = body.rfind(mark, low, high)
        if at >= 0:
            return at
    return high


def _fit(chunk: str, start: int, capacity: int) -> list[_Part]:
    """`chunk`, found at `start`, as parts of at most `capacity` word pieces.

    A chunk that runs over is split by exact count into parts of about equal size, rather
    than into full parts and a scrap.
    """
    pieces = count_by_words(chunk)
    if pieces <= capacity:
        return [_Part(start, start + len(chunk), pieces)]
    needed = -(-pieces // capacity)
    even = min(capacity, -(-pieces // needed) + capacity // 8)
    split = _piece_splitter(even).chunk_indices(chunk)
    if len(split) > needed:
        split = _piece_splitter(capacity).chunk_indices(chunk)
    return [part for at, piece in split for part in _cut(piece, start + at, capacity)]


def _cut(text: str, start: int, capacity: int) -> list[_Part]:
    """`text` as one part, or, if the splitter could not split it, cut at word pieces."""
    pieces = count_by_words(text)
    if pieces <= capacity:
        return [_Part(start, start + len(text), pieces)]
    cuts = split_word_pieces(text, capacity)
    return [_Part(start + at, start + at + len(cut), count_by_words(cut)) for at, cut in cuts]


def _join(text: str, parts: list[_Part], capacity: int, most_chars: int) -> list[_Part]:
    """`parts`, each joined to the one before it when the two fit `capacity` together (and
    `most_chars`: the model reads a long run of text without spaces as one piece)."""
    joined: list[_Part] = []
    for part in parts:
        if (
            joined
            and joined[-1].pieces + part.pieces <= capacity
            and part.end - joined[-1].start <= most_chars
        ):
            both = _Part(joined[-1].start, part.end, _joint_count(text, joined[-1], part))
            if both.pieces <= capacity:
                joined[-1] = both
                continue
        joined.append(part)
    return joined


def _joint_count(text: str, a: _Part, b: _Part) -> int:
    """Word pieces from `a`'s start to `b`'s end: the sum of theirs when whitespace the
    tokenizer splits at lies between them, else counted."""
    if _SEPARATOR.search(text, a.end, b.start):
        return a.pieces + b.pieces
    return count_by_words(text[a.start : b.end])


def _lead(text: str, previous: _Part, part: _Part, limit: int, rate: float) -> int:
    """Where `part` begins once it repeats at most `limit` word pieces from the end of
    `previous` (from a word start); its own start when nothing can be repeated."""
    tail = _tail(text, previous.start, previous.end, limit, rate)
    if tail == previous.end:
        return part.start
    if _SEPARATOR.search(text, previous.end, part.start):
        return tail
    return tail if count_by_words(text[tail : part.end]) <= part.pieces + limit else part.start


def _tail(text: str, first: int, end: int, limit: int, rate: float) -> int:
    """The start of the last `limit` word pieces or fewer of `text[first:end]`, at a word
    start; `end` when there is none."""
    chars = int(limit * rate)
    while chars > 0:
        word = _WORD_START.search(text, max(first, end - chars), end)
        if word is None:
            return end
        shared = count_by_words(text[word.start() : end])
        if shared <= limit:
            return word.start()
        chars = (end - word.start()) * limit // shared - 1
    return end


def _chars_per_piece(text: str) -> float:
    return min(max(len(text) / max(count_by_words(text), 1), 1.0), MAX_CHARS_PER_PIECE)


def _drop_tiny(text: str, sections: list[list[_Span]], min_chars: int) -> list[_Span]:
    """The spans of each section (in order) but a section's first whose own text has fewer
    than `min_chars` non-space characters (a section of "ok" or "---"); if none is left, the
    longest, so that a document keeps one chunk. A section's later spans are kept however
    small: the end of a code block cut off by the size limit ("})" and its fence) is part of
    what the span before began."""
    spans = [span for parts in sections for span in parts]
    sizes = [_visible(text[s.start : s.end]) for s in spans]
    later = [n > 0 for parts in sections for n in range(len(parts))]
    kept = [span for span, size, cont in zip(spans, sizes, later, strict=True) if size >= min_chars or cont]
    if kept or not spans:
        return kept
    return [spans[sizes.index(max(sizes))]]


def _visible(text: str) -> int:
    return len("".join(text.split()))


def innermost(prefix: str) -> str:
    """The last heading of a chunk's prefix ("Guide — Install > Linux" → "Linux")."""
    return re.split(f"{re.escape(_PATH_SEPARATOR)}|{re.escape(_TITLE_SEPARATOR)}", prefix)[-1].strip()


def section(prefix: str) -> str:
    """The heading a chunk stands under, from its prefix ("Guide — Install > Linux" →
    "Linux"); "" when the prefix is a title alone (a document without headings, or the text
    before its first)."""
    return innermost(prefix) if _PATH_SEPARATOR in prefix or _TITLE_SEPARATOR in prefix else ""


def prefix(title: str, heading: str = "") -> str:
    """`Title — Heading > Path` on one line, cut to `PREFIX_PIECES` word pieces."""
    return _prefix(title, heading)


@lru_cache(maxsize=4096)
def _prefix(title: str, heading: str) -> str:
    """`Title — Heading > Path` on one line, cut to `PREFIX_PIECES` word pieces."""
    title, heading = " ".join(title.split()), " ".join(heading.split())
    if title and heading and not _starts_with(heading, title):
        prefix = f"{title}{_TITLE_SEPARATOR}{heading}"
    else:
        prefix = heading or title
    if count_by_words(prefix) <= PREFIX_PIECES:
        return prefix
    return truncate_word_pieces(prefix, PREFIX_PIECES)


def _starts_with(heading: str, title: str) -> bool:
    heading, title = heading.casefold(), title.casefold()
    return heading == title or heading.startswith(f"{title} > ")


def _joined(path: list[tuple[int, str]]) -> str:
    return _PATH_SEPARATOR.join(name for _, name in path if name)


def _clean(name: str) -> str:
    """A heading's words: links reduced to their text, emphasis marks and an attribute list
    (`{ #query-params }`, the anchor FastAPI's headings carry) gone, length capped."""
    name = _EMPHASIS.sub("", _LINK.sub(r"\1", ATTRIBUTES.sub("", name))).strip()
    return name if len(name) <= HEADING_CHARS else name[: HEADING_CHARS - 1].rstrip() + "…"


@lru_cache(maxsize=512)
def _char_splitter(chars: int) -> Any:
    from semantic_text_splitter import MarkdownSplitter

    return MarkdownSplitter(chars)


@lru_cache(maxsize=512)
def _piece_splitter(capacity: int) -> Any:
    from semantic_text_splitter import MarkdownSplitter

    return MarkdownSplitter.from_callback(count_by_words, capacity)
