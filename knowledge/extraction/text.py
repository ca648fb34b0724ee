"""Text files: decoding bytes to text, and plain text, Markdown and source code kept as is."""

from __future__ import annotations

import codecs
import re
import unicodedata

import charset_normalizer

from knowledge.errors import UnsupportedContent
from knowledge.extraction import formats
from knowledge.extraction.myst import as_rest
from knowledge.extraction.types import Extracted, clean

_BOM_CODECS = (
    (codecs.BOM_UTF32_LE, "utf-32"),  # before UTF-16 LE, whose BOM is its prefix
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_GUESS_SAMPLE_BYTES = 1 << 20  # the encoding is guessed from the first MB (charset_normalizer slows on more)
_PREFERRED = "cp1252"
_FEW_NON_ASCII = 8  # a few odd bytes in ASCII text are too few to guess an encoding from
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
_WIDE = ("utf_16", "utf_32")  # without a BOM, and without NUL bytes (refused as binary): a wrong guess
_BINARY = "it looks like binary data, not text"

_MARKDOWN_LANDMARK = re.compile(
    r"^(?:(?P<fence>```|~~~)[^\n]*|#[ \t]+(?P<title>[^\n]*?)[ \t#]*)$", re.MULTILINE
)
_FRONT_MATTER_TITLE = re.compile(r"^title:[ \t]*(?P<title>[^\n]+)$", re.MULTILINE)


def decode_text(data: bytes, name: str) -> str:
    """`data` as text with '\\n' line ends: a BOM decides, else UTF-8, else a detected charset.

    Raises UnsupportedContent for binary data: NUL bytes without a UTF-16/32 BOM, or bytes no
    charset explains.
    """
    for bom, codec in _BOM_CODECS:
        if data.startswith(bom):
            return _unix_newlines(data.decode(codec, errors="replace"))
    if b"\x00" in data:
        raise UnsupportedContent(name, _BINARY)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = _mostly_utf8(data) or _few_western(data) or _decode_guessed(data, name)
    return _unix_newlines(text)


def _few_western(data: bytes) -> str | None:
    """`data` as Windows-1252 when it has only a few non-ASCII bytes and each decodes to a
    letter inside a Latin word ('Café') or to punctuation ('’', '–'); else None. With so
    little to go on, a charset detector guesses wildly ('Café' came out as 'Cafﻠ')."""
    if sum(1 for byte in data if byte >= 0x80) > _FEW_NON_ASCII:
        return None
    try:
        text = data.decode(_PREFERRED)
    except UnicodeDecodeError:
        return None
    for word in _NON_ASCII.finditer(text):
        char, before, after = (
            word.group(),
            text[word.start() - 1 : word.start()],
            text[word.end() : word.end() + 1],
        )
        if char.isalpha():
            if not (before.isascii() and before.isalpha()) and not (after.isascii() and after.isalpha()):
                return None
        elif not unicodedata.category(char[0]).startswith(("P", "S", "Z")):
            return None
    return text


def _mostly_utf8(data: bytes) -> str | None:
    """UTF-8 with a few stray bytes (replaced), when valid multi-byte characters outnumber
    the invalid bytes ten to one; None otherwise. A charset guess would garble the rest."""
    text = data.decode("utf-8", errors="replace")
    invalid = text.count("\ufffd")
    non_ascii = len(text) - len(text.encode("ascii", errors="ignore"))
    valid = non_ascii - invalid
    return text if valid >= 10 * invalid else None


def _decode_guessed(data: bytes, name: str) -> str:
    sample = data[:_GUESS_SAMPLE_BYTES]
    if len(sample) < len(data) and b"\n" in sample:
        sample = sample[: sample.rindex(b"\n") + 1]  # no multi-byte character cut in half
    matches = [m for m in charset_normalizer.from_bytes(sample) if not m.encoding.startswith(_WIDE)]
    best = min(matches, key=lambda m: (m.chaos, -m.coherence), default=None)
    if best is None:
        raise UnsupportedContent(name, _BINARY)
    # Short texts tie between many single-byte charsets; Windows-1252 is the likeliest then.
    tied = {m.encoding for m in matches if (m.chaos, m.coherence) == (best.chaos, best.coherence)}
    return data.decode(_PREFERRED if _PREFERRED in tied else best.encoding, errors="replace")


def _unix_newlines(text: str) -> str:
    if "\r" not in text:
        return text
    return text.replace("\r\n", "\n").replace("\r", "\n")


def extract_text(data: bytes, name: str, mime_type: str) -> Extracted:
    """Plain text or source code, kept as is; code carries metadata 'language'."""
    language = formats.language_of(mime_type)
    metadata = {"language": language} if language is not None else {}
    return Extracted(text=decode_text(data, name), mime_type=mime_type, metadata=metadata)


def extract_markdown(data: bytes, name: str, mime_type: str) -> Extracted:
    """Markdown kept as is, but for MyST's directives and roles, written as the reST they
    stand for (`myst.as_rest`); the title is the front matter's `title:` or the first '# '
    line."""
    text = decode_text(data, name)
    return Extracted(text=as_rest(text), mime_type=mime_type, title=markdown_title(text))


def markdown_title(text: str) -> str | None:
    """The front matter title, else the first level-1 ATX heading outside code fences."""
    title = _front_matter_title(text)
    if title is not None:
        return title
    fence: str | None = None
    for match in _MARKDOWN_LANDMARK.finditer(text):
        marker = match.group("fence")
        if marker is not None:
            fence = None if fence == marker else (fence or marker)
        elif fence is None and (title := clean(match.group("title"))):
            return title
    return None


def _front_matter_title(text: str) -> str | None:
    if not text.startswith("---\n"):
        return None
    end = text.find("\n---", 4)
    if end < 0:
        return None
    match = _FRONT_MATTER_TITLE.search(text, 4, end)
    return clean(match.group("title").strip("'\"")) if match else None
