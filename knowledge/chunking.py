"""Chunking: documents split along their structure, sized to the embedder's window.

Text arrives Markdown-flavoured (extractors turn headings into `#` lines). It is cut at
headings into sections, each knowing its heading path ("Install > Linux"); each section is
split by `semantic-text-splitter` at paragraphs, then sentences, then words, so that the
chunk *with its title and heading prefix* fits the model's 256 word pieces. Consecutive
chunks of a section overlap; tiny chunks are dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from knowledge.embedding import MAX_WORD_PIECES, tokenizer_path

HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$", re.MULTILINE)
FENCE = re.compile(r"^(```|~~~)", re.MULTILINE)
SPECIAL_TOKENS = 2  # [CLS] and [SEP]
PREFIX_SHARE = 4  # the title and heading prefix may take at most 1/4 of the window
NON_SPACE = re.compile(r"\S")
SAMPLE = 4000
FILL = 0.92  # aim a little under the window so few chunks need a second cut


@dataclass(frozen=True)
class ChunkSpec:
    """Chunking parameters; the defaults suit all-MiniLM-L6-v2."""

    max_tokens: int = MAX_WORD_PIECES
    overlap_tokens: int = 32
    min_chars: int = 40


@dataclass(frozen=True)
class TextChunk:
    position: int
    heading: str
    """Heading path, e.g. "Install > Linux > Debian"; '' when the text has no headings."""
    text: str
    start: int
    """Character offset of the chunk in the document's text."""

    def embedding_text(self, title: str, max_tokens: int = MAX_WORD_PIECES) -> str:
        """The text to embed: the title and heading path, then the chunk."""
        return f"{prefix(title, self.heading, max_tokens)}\n{self.text}"


def prefix(title: str, heading: str, max_tokens: int = MAX_WORD_PIECES) -> str:
    """`Title — Heading > Path`, cut to a quarter of the window."""
    title, heading = title.strip(), heading.strip()
    text = f"{title} — {heading}" if heading and title and not heading.startswith(title) else heading or title
    return truncate_word_pieces(text, max_tokens // PREFIX_SHARE)


def chunk_text(text: str, *, title: str = "", spec: ChunkSpec | None = None) -> list[TextChunk]:
    """The document's chunks in order; [] for empty text.

    Splitting counts characters (fast), with a character budget from the document's own
    characters-per-word-piece ratio; every chunk is then measured in word pieces in one
    batch, and the rare one over the window is cut at word-piece boundaries."""
    spec = spec or ChunkSpec()
    ratio = chars_per_piece(text)
    drafts: list[tuple[str, str, int, int]] = []
    for heading, body, offset in sections(text):
        capacity = (
            spec.max_tokens - SPECIAL_TOKENS - 1 - count_word_pieces(prefix(title, heading, spec.max_tokens))
        )
        overlap = min(spec.overlap_tokens, capacity // 4)
        splitter = _splitter(_round(capacity * ratio * FILL), _round(overlap * ratio))
        drafts.extend(
            (heading, chunk, offset + start, capacity) for start, chunk in splitter.chunk_indices(body)
        )
    encodings = _tokenizer().encode_batch([d[1] for d in drafts], add_special_tokens=False) if drafts else []
    pieces = [
        (heading, part, start + at)
        for (heading, chunk, start, capacity), encoding in zip(drafts, encodings, strict=True)
        for at, part in _fit(chunk, encoding.offsets, capacity)
    ]
    kept = [p for p in pieces if len(NON_SPACE.findall(p[1])) >= spec.min_chars]
    if not kept and pieces:
        kept = [max(pieces, key=lambda p: len(p[1]))]
    return [TextChunk(n, heading, body, start) for n, (heading, body, start) in enumerate(kept)]


def chars_per_piece(text: str) -> float:
    """Characters per word piece in a sample of the text (prose ≈ 4.5, code ≈ 3)."""
    middle = len(text) // 2
    sample = text[max(0, middle - SAMPLE // 2) : middle + SAMPLE // 2]
    pieces = count_word_pieces(sample)
    return max(1.0, len(sample) / pieces) if pieces else 4.0


def sections(text: str) -> list[tuple[str, str, int]]:
    """(heading path, body, body offset) for each stretch of text between headings."""
    fenced = _fenced_ranges(text)
    path: list[tuple[int, str]] = []
    found: list[tuple[str, str, int]] = []
    cursor = 0
    for match in HEADING.finditer(text):
        if any(a <= match.start() < b for a, b in fenced):
            continue
        found.append((_path(path), text[cursor : match.start()], cursor))
        level = len(match.group(1))
        path = [(lvl, name) for lvl, name in path if lvl < level] + [(level, _clean(match.group(2)))]
        cursor = match.end()
    found.append((_path(path), text[cursor:], cursor))
    return [(h, body, offset) for h, body, offset in found if body.strip()]


def count_word_pieces(text: str) -> int:
    """Word pieces of `text` for the MiniLM tokenizer, without special tokens."""
    if not text:
        return 0
    return len(_tokenizer().encode(text, add_special_tokens=False).ids)


def truncate_word_pieces(text: str, limit: int) -> str:
    encoding = _tokenizer().encode(text, add_special_tokens=False)
    if len(encoding.ids) <= limit:
        return text
    end = encoding.offsets[limit - 1][1]
    return text[:end].rstrip() + "…"


def _fit(chunk: str, offsets: list[tuple[int, int]], capacity: int) -> list[tuple[int, str]]:
    """The chunk, or its word-piece-bounded parts if the character budget let it run over."""
    if len(offsets) <= capacity:
        return [(0, chunk)]
    parts = []
    for first in range(0, len(offsets), capacity):
        start, end = offsets[first][0], offsets[min(first + capacity, len(offsets)) - 1][1]
        parts.append((start, chunk[start:end]))
    return parts


def _path(path: list[tuple[int, str]]) -> str:
    return " > ".join(name for _, name in path)


def _clean(heading: str) -> str:
    return re.sub(r"[*_`]+", "", heading).strip()


def _fenced_ranges(text: str) -> list[tuple[int, int]]:
    marks = [m.start() for m in FENCE.finditer(text)]
    return [(marks[i], marks[i + 1]) for i in range(0, len(marks) - 1, 2)]


@lru_cache(maxsize=1)
def _tokenizer() -> Any:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(tokenizer_path()))
    tokenizer.no_padding()  # the file pads and truncates to 128; counting needs neither
    tokenizer.no_truncation()
    return tokenizer


def _round(chars: float) -> int:
    """Character budgets in steps of 16, so a few cached splitters serve every document."""
    return max(16, int(chars) // 16 * 16)


@lru_cache(maxsize=128)
def _splitter(capacity: int, overlap: int) -> Any:
    from semantic_text_splitter import MarkdownSplitter

    return MarkdownSplitter(capacity, overlap=min(overlap, capacity // 2))
