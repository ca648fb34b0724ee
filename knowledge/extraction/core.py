"""`extract`: size check, type detection, the extractor for the type, the quality check and
its fallback, the character cap, and the error boundary.

Every failure leaves as a `knowledge.errors.IngestError`; the parsers' own exceptions are
translated (chained with `raise … from`), except MemoryError and KeyboardInterrupt.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace

from knowledge.errors import (
    EmptyContent,
    ExtractionLimit,
    GarbledContent,
    IngestError,
    TooLarge,
    UnreadableContent,
)
from knowledge.extraction import formats
from knowledge.extraction.detect import detect_type
from knowledge.extraction.quality import Quality, assess
from knowledge.extraction.text import extract_text
from knowledge.extraction.types import Extracted, without_surrogates

# Defaults of LORE_MAX_FILE_MB and LORE_MAX_DOCUMENT_CHARS: a long manual fits, a dump does not.
DEFAULT_MAX_BYTES = 50 * 1024 * 1024
DEFAULT_MAX_CHARS = 5_000_000

Extractor = Callable[[bytes, str, str], Extracted]
"""(data, name, detected MIME type) -> Extracted; raises IngestError subclasses."""

_EXTRACTORS: dict[str, str] = {
    formats.TEXT: "text:extract_text",
    formats.MARKDOWN: "text:extract_markdown",
    formats.HTML: "html:extract_html",
    formats.PDF: "pdf:extract_pdf",
    formats.DOCX: "word:extract_docx",
    formats.PPTX: "powerpoint:extract_pptx",
    formats.CSV: "structured:extract_csv",
    formats.TSV: "structured:extract_csv",
    formats.JSON: "structured:extract_json",
    formats.JSONL: "structured:extract_json_lines",
    formats.EPUB: "packages:extract_epub",
    formats.ODT: "packages:extract_odf",
    formats.ODP: "packages:extract_odf",
}
"""Each type's extractor, as `module:function` of this package: imported on first use, since
the PDF, HTML and Office libraries behind them take a fifth of a second to import, which
every command (`lore ask`, `lore --help`) would otherwise pay."""
_FALLBACKS: dict[str, str] = {formats.PDF: "pdf_layout:extract_pdf_layout"}
"""A second extractor, tried when the first fails or its text is garbled."""
_DATA = frozenset((formats.CSV, formats.TSV, formats.JSON, formats.JSONL))
_GARBLED_HINT = "; a copy exported again from the program that made it may read better"


def extract(
    data: bytes,
    name: str,
    *,
    mime_type: str | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_chars: int = DEFAULT_MAX_CHARS,
) -> Extracted:
    """The text and metadata of the document `data`, called `name`, maybe declared `mime_type`.

    Raises TooLarge (over `max_bytes`, checked before any parsing), UnsupportedContent,
    UnreadableContent (damaged, encrypted, a decompression bomb), GarbledContent (no
    extractor got readable text out), EmptyContent (no text) or ExtractionLimit (more than
    `max_chars` characters of text).
    """
    if len(data) > max_bytes:
        raise TooLarge(name, f"it is {_size(len(data), up=True)}; the limit is {_size(max_bytes)}")
    with _translated(name, "a file"):
        detected = detect_type(data, name, mime_type)
    result = _readable(data, name, detected)
    if len(result.text) > max_chars:
        raise ExtractionLimit(
            name,
            f"it holds {len(result.text):,} characters of text, more than the {max_chars:,} I read "
            "from one document; split it into smaller files",
        )
    return result


def _readable(data: bytes, name: str, detected: str) -> Extracted:
    """The first extractor's result if it reads, else the fallback's (if the type has one);
    the fallback's too when the first ran words together and the fallback did less than half
    as often."""
    fallback = _load(_FALLBACKS[detected]) if detected in _FALLBACKS else None
    try:
        result, quality = _run(_extractor(detected), data, name, detected)
    except (UnreadableContent, EmptyContent) as exc:
        if fallback is None:
            raise
        first = exc
    else:
        if fallback is None or not quality.run_together:
            return result
        try:
            other, other_quality = _run(fallback, data, name, detected)
        except IngestError:
            return result
        return other if 2 * other_quality.long_words < quality.long_words else result
    try:
        return _run(fallback, data, name, detected)[0]
    except IngestError as second:
        raise (second if isinstance(second, GarbledContent) else first) from second


def _run(extractor: Extractor, data: bytes, name: str, detected: str) -> tuple[Extracted, Quality]:
    """`extractor`'s result, cleaned, and its quality; GarbledContent when it fails the check."""
    with _translated(name, formats.describe(detected)):
        result = _checked(extractor(data, name, detected), name)
    data_like = detected in _DATA or formats.language_of(detected) is not None
    quality = assess(result.text, data=data_like)
    if quality.problem is not None:
        raise GarbledContent(name, quality.problem + _GARBLED_HINT)
    return result, quality


@contextmanager
def _translated(name: str, kind: str) -> Iterator[None]:
    """Let IngestError and MemoryError through; turn any other exception into UnreadableContent."""
    try:
        yield
    except (IngestError, MemoryError):
        raise
    except RecursionError as exc:
        raise UnreadableContent(name, "it is nested too deeply for me to read") from exc
    except Exception as exc:  # a parser tripping over damage it does not foresee
        reason = f"it is not {kind} I can read (the file looks damaged)"
        raise UnreadableContent(name, reason) from exc


def _extractor(mime_type: str) -> Extractor:
    if formats.language_of(mime_type) is not None:
        return extract_text
    return _load(_EXTRACTORS[mime_type])


def preload() -> None:
    """Import every extractor now: the sandbox's worker does before it caps its memory, so
    that the libraries (40 MB) are not counted against the first document that needs them."""
    for name in {*_EXTRACTORS.values(), *_FALLBACKS.values()}:
        _load(name)


def _load(name: str) -> Extractor:
    module, function = name.split(":")
    extractor: Extractor = getattr(importlib.import_module(f"knowledge.extraction.{module}"), function)
    return extractor


def _checked(result: Extracted, name: str) -> Extracted:
    """`result` without NUL characters (databases refuse them) and with lone surrogates
    replaced (they cannot be encoded), in its text and metadata; EmptyContent if no text."""
    text = _storable(result.text)
    if not text.strip():
        raise EmptyContent(name, "it has no text in it")
    return replace(
        result,
        text=text,
        title=None if result.title is None else _storable(result.title),
        author=None if result.author is None else _storable(result.author),
        metadata={key: _storable(value) for key, value in result.metadata.items()},
    )


def _storable(text: str) -> str:
    return without_surrogates(text.replace("\x00", "") if "\x00" in text else text)


def _size(count: int, *, up: bool = False) -> str:
    """A byte count for people; sizes round up and limits down, so they never look equal."""
    for unit, scale in (("MB", 1024 * 1024), ("KB", 1024)):
        if count >= scale:
            tenths = -(-count * 10 // scale) if up else count * 10 // scale
            return f"{tenths // 10}{f'.{tenths % 10}' if tenths % 10 else ''} {unit}"
    return f"{count} bytes"
