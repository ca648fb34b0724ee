"""PDF text by layout analysis (pdfminer.six): the fallback when pypdf's text is garbled or
pypdf cannot open the file.

Chosen by measurement over pdfminer.six's own samples (see the README's "Files"): on the
Japanese PDFs that pypdf garbles (Adobe-Japan1 CMaps: kampo.pdf, jo.pdf, nlp2004slides.pdf)
pdfminer.six reads all the text, pypdfium2 only 1%, 27% and all of it; on simple1.pdf and
simple3.pdf (no `startxref`, which pypdf refuses) pdfminer.six reads every word, pypdfium2
drops the Japanese. Vertical writing is detected, so a column of Japanese stays one line;
what is left of it (a masthead set one character a box) is joined back.

A page pdfminer cannot read is skipped and listed in metadata 'unreadable_pages'.
"""

from __future__ import annotations

import io
import logging
import re

from pdfminer.converter import TextConverter
from pdfminer.layout import LAParams
from pdfminer.pdfdocument import PDFDocument, PDFPasswordIncorrect
from pdfminer.pdfinterp import PDFPageInterpreter, PDFResourceManager
from pdfminer.pdfpage import PDFPage
from pdfminer.pdfparser import PDFParser
from pdfminer.psparser import PSException

from knowledge.errors import EmptyContent, UnreadableContent
from knowledge.extraction.pdf import DAMAGED, ENCRYPTED, NO_TEXT, PARSE_ERRORS
from knowledge.extraction.types import Extracted, clean

log = logging.getLogger(__name__)

ENGINE = "pdfminer.six"
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f"
# A run of lines holding one CJK character each (with blank lines between): one vertical
# word that layout analysis set as a box a character.
_CJK_SINGLES = re.compile(rf"(?m)^([{_CJK}])[ \t]*\n(?:[ \t]*\n)*(?=[{_CJK}][ \t]*$)")
_ERRORS = (*PARSE_ERRORS, PSException)


def extract_pdf_layout(data: bytes, name: str, mime_type: str) -> Extracted:
    """Page texts separated by blank lines; title and author from the info dict."""
    parser = PDFParser(io.BytesIO(data))
    try:
        document = PDFDocument(parser)
    except PDFPasswordIncorrect as exc:
        raise UnreadableContent(name, ENCRYPTED) from exc
    except _ERRORS as exc:
        raise UnreadableContent(name, DAMAGED) from exc
    pages, unreadable = _page_texts(document, name)
    text = "\n\n".join(page for page in pages if page)
    if not text.strip():
        raise EmptyContent(name, NO_TEXT)
    metadata = {"pages": str(len(pages) + len(unreadable)), "extracted_by": ENGINE}
    if unreadable:
        metadata["unreadable_pages"] = ", ".join(map(str, unreadable))
    title, author = _info(document)
    return Extracted(text=text, mime_type=mime_type, title=title, author=author, metadata=metadata)


def _page_texts(document: PDFDocument, name: str) -> tuple[list[str], list[int]]:
    resources = PDFResourceManager(caching=True)
    laparams = LAParams(detect_vertical=True)
    texts: list[str] = []
    unreadable: list[int] = []
    try:
        for number, page in enumerate(PDFPage.create_pages(document), 1):
            with io.StringIO() as output:
                device = TextConverter(resources, output, laparams=laparams)
                try:
                    PDFPageInterpreter(resources, device).process_page(page)
                except _ERRORS as exc:
                    log.warning("skipping unreadable page %d of %s: %r", number, name, exc)
                    unreadable.append(number)
                    continue
                finally:
                    device.close()
                texts.append(_tidy(output.getvalue()))
    except _ERRORS as exc:  # the page tree itself is broken past some page
        if not texts:
            raise UnreadableContent(name, DAMAGED) from exc
        log.warning("stopped reading %s after page %d: %r", name, len(texts), exc)
    return texts, unreadable


def _tidy(text: str) -> str:
    """A page's text with its form feed gone and one-character CJK lines joined."""
    return _CJK_SINGLES.sub(r"\1", text.replace("\x0c", "")).strip()


def _info(document: PDFDocument) -> tuple[str | None, str | None]:
    for info in document.info:
        title, author = _text(info.get("Title")), _text(info.get("Author"))
        if title or author:
            return title, author
    return None, None


def _text(value: object) -> str | None:
    """A PDF string of the info dict as text: UTF-16 with a BOM, else PDFDocEncoding-ish."""
    if isinstance(value, bytes):
        if value.startswith((b"\xfe\xff", b"\xff\xfe")):
            return clean(value.decode("utf-16", errors="replace"))
        return clean(value.decode("latin-1"))
    return clean(value) if isinstance(value, str) else None
