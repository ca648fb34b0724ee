"""Is extracted text readable? A cheap check run after every extraction.

A PDF whose fonts map glyphs to the wrong characters extracts as fluent-looking nonsense
(`ୈ ೋ ৚ Ұ ߲`, or `$PNQVUFS4DJFODF`); indexed, it makes answers quote noise. `assess`
measures, over a few evenly spread samples of the text:

- `bad`: the share of characters that no text is written with: U+FFFD, control characters,
  and pdfminer's `(cid:N)` placeholders (private-use characters are not counted: Word's
  Symbol-font bullets are private-use);
- `mess`: charset_normalizer's mess ratio (script mixing, odd successions of letters and
  symbols, accents where none go); prose scores under 0.1, such garbage over 0.8;
- `odd_words`: the share of words that cannot be words of their script: letters of two
  alphabets in one word, or a Latin word of four letters or more with no vowel.

`run_together` is no reason to refuse, but a reason to try another extractor: pypdf runs
words together where a PDF sets them with tight gaps instead of spaces. Lower-case words of
16 letters or more, in pypdf's text against pdfminer.six's: IRS form instructions 104 of
36,640 against 2 ('substantialnonresident'); an arXiv paper set with LaTeX 21 of 771 sampled
against 0 ('foranunresolvedradiosource'); a book scan's text layer 120 of 469 against 1.
Prose has under 0.1%.

Data (CSV, JSON, source code) is judged by `bad` only: symbols are its nature. Texts too short
to judge pass: fewer than `MIN_CHARS` visible characters, or `MIN_CHARS_FOR_MESS` for `mess`. Thresholds were set on real files
(pypdf's and pdfminer.six's test PDFs, python-docx's and mammoth's DOCX files, this README):
readable text stayed under a third of each limit, garbled text went over each.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from charset_normalizer.md import mess_ratio

# Thresholds set on real files, readable text under a third of each (see the docstring).
MIN_CHARS = 16
MIN_CHARS_FOR_MESS = 64
SAMPLES = 8
SAMPLE_CHARS = 4096
MAX_BAD = 0.05
MAX_MESS = 0.3
MAX_ODD_WORDS = 0.5
MIN_WORDS = 20
LONG_WORD = 16
MIN_LONG_WORDS = 5
MAX_LONG_WORDS = 0.002

_CID = re.compile(r"\(cid:\d+\)")
_WORD = re.compile(r"[^\W\d_]{2,}")
_LATIN_VOWELS = frozenset("aeiouyæœøåäöüàáâãèéêëìíîïòóôõùúûýÿāēīōūąęįųǎǐǒǔ")
_ALLOWED_CONTROLS = frozenset("\t\n\r\f\v")
_CJK = frozenset(("CJK", "HIRAGANA", "KATAKANA", "HALFWIDTH", "FULLWIDTH", "IDEOGRAPHIC"))
_UNSPACED = frozenset(("CJK", "HANGUL"))


@dataclass(frozen=True)
class Quality:
    """How readable a text looks; each share is 0.0–1.0 (mess may exceed 1)."""

    chars: int
    """Visible characters in the samples."""
    bad: float
    mess: float
    odd_words: float
    words: int
    long_words: int = 0
    """Lower-case words of `LONG_WORD` letters or more: words run together."""

    @property
    def run_together(self) -> bool:
        """True when words seem to have lost the spaces between them."""
        return self.long_words >= MIN_LONG_WORDS and self.long_words > MAX_LONG_WORDS * self.words

    @property
    def readable(self) -> bool:
        return self.problem is None

    @property
    def problem(self) -> str | None:
        """Why the text is not readable, in words for the user; None when it is."""
        if self.chars < MIN_CHARS:
            return None
        if self.bad > MAX_BAD:
            return f"{self.bad:.0%} of its characters are placeholders or control codes"
        if self.chars >= MIN_CHARS_FOR_MESS and self.mess > MAX_MESS:
            return "its text comes out as a jumble of unrelated characters"
        if self.words >= MIN_WORDS and self.odd_words > MAX_ODD_WORDS:
            return f"{self.odd_words:.0%} of its words are not words of any language"
        return None


def assess(text: str, *, data: bool = False) -> Quality:
    """Measure `text`; with `data`, only its share of bad characters counts."""
    samples = _samples(text)
    visible = sum(len(sample) - _spaces(sample) for sample in samples)
    if visible == 0:
        return Quality(0, 0.0, 0.0, 0.0, 0)
    bad = sum(_bad_chars(sample) for sample in samples) / visible
    if data:
        return Quality(visible, bad, 0.0, 0.0, 0)
    mess = sum(mess_ratio(sample, 1.0) * len(sample) for sample in samples) / sum(map(len, samples))
    words = [word for sample in samples for word in _WORD.findall(sample)]
    odd = sum(_odd(word) for word in words) / len(words) if words else 0.0
    long_words = sum(1 for word in words if len(word) >= LONG_WORD and word.islower())
    return Quality(visible, bad, mess, odd, len(words), long_words)


def _samples(text: str) -> list[str]:
    """The whole text when short, else `SAMPLES` windows spread evenly, cut at spaces."""
    if len(text) <= SAMPLES * SAMPLE_CHARS:
        return [text]
    step = (len(text) - SAMPLE_CHARS) // (SAMPLES - 1)
    windows = []
    for start in range(0, step * SAMPLES, step):
        window = text[start : start + SAMPLE_CHARS]
        first, last = window.find(" "), window.rfind(" ")
        windows.append(window[first + 1 : last] if 0 <= first < last else window)
    return windows


def _spaces(text: str) -> int:
    return sum(1 for char in text if char.isspace())


def _bad_chars(text: str) -> int:
    count = text.count("\ufffd") + sum(len(m) for m in _CID.findall(text))
    for char in text:
        category = unicodedata.category(char)
        if category == "Cc" and char not in _ALLOWED_CONTROLS:
            count += 1
    return count


def _odd(word: str) -> bool:
    """A word mixing alphabets, or a Latin one of 4+ letters without a vowel. Words with CJK
    or Hangul in them are never odd: those run into Latin without a space as a matter of course."""
    scripts = {_script(char) for char in word}
    if scripts & _UNSPACED:
        return False
    if len(scripts) > 1:
        return True
    if scripts == {"LATIN"} and len(word) >= 4:
        return not any(char in _LATIN_VOWELS for char in word.lower())
    return False


@lru_cache(maxsize=8192)
def _script(char: str) -> str:
    """The script group of a letter: the first word of its Unicode name, CJK as one group."""
    name = unicodedata.name(char, "UNKNOWN")
    script = name.split(" ", 1)[0]
    return "CJK" if script in _CJK else script
