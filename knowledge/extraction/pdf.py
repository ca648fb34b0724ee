"""PDF documents: the text layer of each page (pypdf), and the document information dict.

`extract` falls back to `pdf_layout` (pdfminer.six) when this fails or its text is garbled.

Encrypted files are read only when the empty password opens them; nothing else is tried.
A page pypdf cannot read is skipped and listed in metadata 'unreadable_pages', so one broken
page does not lose a long document; if no page can be read the file is refused.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Callable
from datetime import datetime
from typing import TypeVar

from pypdf import PdfReader
from pypdf.errors import DependencyError, PyPdfError

from knowledge.errors import EmptyContent, UnreadableContent
from knowledge.extraction.types import Extracted, as_utc, clean

log = logging.getLogger(__name__)
T = TypeVar("T")

_MAGIC_WINDOW = 1024  # readers accept %PDF- within the first KB (junk may precede it)
DAMAGED = "it is not a PDF I can read (the file looks damaged)"
ENCRYPTED = "it is encrypted (password-protected); send a copy without the password"
NO_TEXT = "it has no text layer (a scanned PDF?); I can't read images yet"
# pypdf reports broken files through its own errors and, for damage it does not foresee,
# through whatever the parsing code trips over.
PARSE_ERRORS = (PyPdfError, ValueError, TypeError, KeyError, IndexError, AttributeError,
                 AssertionError, OSError, ZeroDivisionError, RecursionError)  # fmt: skip


def extract_pdf(data: bytes, name: str, mime_type: str) -> Extracted:
    """Page texts separated by blank lines; title, author and date from the info dict."""
    reader = _open(data, name)
    pages, unreadable = _page_texts(reader, name)
    metadata = {"pages": str(len(pages) + len(unreadable))}
    if unreadable:
        metadata["unreadable_pages"] = ", ".join(map(str, unreadable))
    text = "\n\n".join(page for page in pages if page)
    if not text.strip():
        raise EmptyContent(name, NO_TEXT)
    title, author, timestamp = _info(reader)
    return Extracted(
        text=text,
        mime_type=mime_type,
        title=title,
        author=author,
        doc_timestamp=timestamp,
        metadata=metadata,
    )


def _open(data: bytes, name: str) -> PdfReader:
    if b"%PDF-" not in data[:_MAGIC_WINDOW]:
        raise UnreadableContent(name, DAMAGED)
    try:
        reader = PdfReader(io.BytesIO(data))
    except DependencyError as exc:  # AES encryption needs a crypto library to even try
        raise UnreadableContent(name, ENCRYPTED) from exc
    except PARSE_ERRORS as exc:
        raise UnreadableContent(name, DAMAGED) from exc
    if reader.is_encrypted and not _opens_without_password(reader):
        raise UnreadableContent(name, ENCRYPTED)
    return reader


def _opens_without_password(reader: PdfReader) -> bool:
    try:
        return bool(reader.decrypt(""))
    except (DependencyError, *PARSE_ERRORS):
        return False


def _page_texts(reader: PdfReader, name: str) -> tuple[list[str], list[int]]:
    """The text of each readable page, and the 1-based numbers of the unreadable ones."""
    try:
        pages = list(reader.pages)
    except PARSE_ERRORS as exc:
        raise UnreadableContent(name, DAMAGED) from exc
    texts, unreadable = [], []
    for number, page in enumerate(pages, 1):
        try:
            texts.append(page.extract_text().strip())
        except PARSE_ERRORS as exc:
            log.warning("skipping unreadable page %d of %s: %r", number, name, exc)
            unreadable.append(number)
    if pages and len(unreadable) == len(pages):
        raise UnreadableContent(name, DAMAGED)
    return texts, unreadable


def _info(reader: PdfReader) -> tuple[str | None, str | None, datetime | None]:
    """Title, author and modification (else creation) date; damaged entries count as absent."""
    info = _safely(lambda: reader.metadata)
    if info is None:
        return None, None, None
    title = _safely(lambda: clean(info.title))
    author = _safely(lambda: clean(info.author))
    stamp = _safely(lambda: info.modification_date) or _safely(lambda: info.creation_date)
    return title, author, as_utc(stamp)


def _safely(read: Callable[[], T]) -> T | None:
    try:
        return read()
    except PARSE_ERRORS:
        return None
