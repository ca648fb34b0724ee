"""Word pieces: counting and cutting text as the local embedder (all-MiniLM-L6-v2) sees it.

The WordPiece tokenizer shipped in `knowledge/data` is loaded once per process. Its file
pads and truncates to 128 pieces, which would cap every count, so both are switched off.

`count_word_pieces` asks the tokenizer. `count_by_words` returns the same number about
ten times faster on prose (the tokenizer manages ~1 MB/s here): BERT's normaliser works
character by character and its pre-tokeniser splits at whitespace and isolates each
punctuation mark, so a text's count is the sum of its words' counts, and words repeat.
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache
from importlib import resources
from typing import Any

WINDOW = 256
"""The model's window in word pieces, [CLS] and [SEP] included."""
SPECIAL_TOKENS = 2  # [CLS] and [SEP]

# Characters `str.split` splits at but BERT's normaliser deletes (they are control
# characters), so "a\x0bb" is one word to the model: they are deleted before splitting.
_DELETED_BY_MODEL = re.compile("[\x0b\x0c\x1c-\x1f\x85]")
_ASCII_PUNCTUATION = r"!-/:-@\[-`{-~"
_PARTS = re.compile(rf"[{_ASCII_PUNCTUATION}]|[^{_ASCII_PUNCTUATION}]+")
_LONGEST_WORD = 100  # the model reads a longer word as one [UNK]
_REMEMBERED_CHARS = 200  # longer words are rare and read once: not worth remembering
_REMEMBERED_WORDS = 200_000  # bounds the counts' memory (tens of MB) on a corpus of any size


def count_word_pieces(text: str) -> int:
    """Word pieces of `text` for the MiniLM tokenizer, without [CLS] and [SEP]."""
    if not text:
        return 0
    return len(tokenizer().encode(text, add_special_tokens=False).ids)


def count_by_words(text: str) -> int:
    """The same number as `count_word_pieces(text)`, from remembered per-word counts."""
    return _word_counts().count(text)


def truncate_word_pieces(text: str, limit: int) -> str:
    """`text` if it has at most `limit` pieces, else its first pieces then "…" (`limit` in all)."""
    encoding = tokenizer().encode(text, add_special_tokens=False)
    if len(encoding.ids) <= limit:
        return text
    if limit < 2:
        return ""
    return text[: encoding.offsets[limit - 2][1]] + "…"


def split_word_pieces(text: str, limit: int) -> list[tuple[int, str]]:
    """(offset, part) cuts of `text` at piece boundaries, each of at most `limit` pieces
    when counted alone. A last resort for text that has no better place to be cut."""
    offsets = tokenizer().encode(text, add_special_tokens=False).offsets
    step = max(limit, 1)
    while True:
        firsts = range(0, len(offsets), step)
        bounds = [(offsets[at][0], offsets[min(at + step, len(offsets)) - 1][1]) for at in firsts]
        cuts = [(start, text[start:end]) for start, end in bounds]
        if step == 1 or all(count_word_pieces(cut) <= limit for _, cut in cuts):
            return cuts
        step -= max(1, step // 8)  # a word cut in two may count more pieces than it had


@lru_cache(maxsize=1)
def tokenizer() -> Any:
    """The MiniLM WordPiece tokenizer, without padding or truncation (one per process)."""
    from tokenizers import Tokenizer

    path = resources.files("knowledge") / "data" / "minilm-tokenizer.json"
    loaded = Tokenizer.from_file(str(path))
    loaded.no_padding()
    loaded.no_truncation()
    return loaded


class _WordCounts:
    """Remembered per-word piece counts (thread-safe); new words are counted per call."""

    def __init__(self) -> None:
        self._counts: dict[str, int] = {}
        self._lock = threading.Lock()

    def count(self, text: str) -> int:
        if _DELETED_BY_MODEL.search(text):
            text = _DELETED_BY_MODEL.sub("", text)
        words = text.split()
        counts = self._counts  # a reset replaces the dict, so this one stays whole
        try:
            return sum(map(counts.__getitem__, words))
        except KeyError:
            learned = self._learn(set(words).difference(counts), counts)
        return sum(learned[w] if w in learned else counts[w] for w in words)

    def _learn(self, words: set[str], known: dict[str, int]) -> dict[str, int]:
        """Counts of new `words`, as the sums of their parts' counts.

        Parts are the runs between ASCII punctuation marks (one piece each), and an ASCII
        run counts as its lower case does, so "Kentucky('kentucky'," needs only "kentucky".
        Words and parts are remembered.
        """
        parts = {word: [_key(part) for part in _PARTS.findall(word)] for word in words}
        fresh = _count_parts({p for word_parts in parts.values() for p in word_parts}.difference(known))
        learned = {w: sum(fresh[p] if p in fresh else known[p] for p in ps) for w, ps in parts.items()}
        with self._lock:
            if len(self._counts) + len(fresh) + len(learned) > _REMEMBERED_WORDS:
                self._counts = {}
            for table in (fresh, learned):
                self._counts.update((w, n) for w, n in table.items() if len(w) <= _REMEMBERED_CHARS)
        return learned


def _key(part: str) -> str:
    return part.lower() if part.isascii() else part


def _count_parts(parts: set[str]) -> dict[str, int]:
    """Pieces of each part: ASCII letters and digits by WordPiece's own rule, the rest by
    the tokenizer (which costs ~20 µs a word here)."""
    plain = {part for part in parts if part.isascii() and part.isalnum()}
    others = sorted(parts - plain)
    encodings = tokenizer().encode_batch(others, add_special_tokens=False)
    counts = {part: len(encoding.ids) for part, encoding in zip(others, encodings, strict=True)}
    counts.update((part, _greedy_pieces(part)) for part in plain)
    return counts


def _greedy_pieces(word: str) -> int:
    """WordPiece on a lower-case ASCII word: the longest known prefix, then the longest
    known '##' continuation, and so on; one [UNK] if some rest matches nothing."""
    starts, continuations = _vocabulary()
    if word in starts or len(word) > _LONGEST_WORD:
        return 1
    pieces, start = 0, 0
    while start < len(word):
        known = starts if start == 0 else continuations
        end = len(word)
        while end > start and word[start:end] not in known:
            end -= 1
        if end == start:
            return 1
        pieces, start = pieces + 1, end
    return pieces


@lru_cache(maxsize=1)
def _vocabulary() -> tuple[frozenset[str], frozenset[str]]:
    """The tokenizer's word-start pieces, and its continuation pieces without '##'."""
    vocab = tokenizer().get_vocab()
    return frozenset(vocab), frozenset(piece[2:] for piece in vocab if piece.startswith("##"))


@lru_cache(maxsize=1)
def _word_counts() -> _WordCounts:
    return _WordCounts()
