"""Zipped document packages other than Office Open XML: EPUB books and OpenDocument text.

EPUB: the chapters named by the package document's spine, in reading order, each XHTML file
as Markdown-flavoured text ('#' headings, one block a paragraph, list item, quotation or
table row); the title and author from its Dublin Core metadata.

OpenDocument text and presentations (.odt, .odp): the headings ('#' by outline level), and
paragraphs, list items and table rows of content.xml in document order; text frames and
notes included. Title and author from meta.xml.

Every XML file is parsed by lxml with entity resolution and network access off, after the
container passed the same bomb checks as Word files.
"""

from __future__ import annotations

import io
import posixpath
import zipfile
from collections.abc import Iterator
from typing import Any

import lxml.etree  # type: ignore[import-untyped, unused-ignore]

from knowledge.errors import UnreadableContent
from knowledge.extraction.ooxml import OOXML_ERRORS, check_zip
from knowledge.extraction.types import Extracted, clean, parse_iso_date

_PARSER = lxml.etree.XMLParser(resolve_entities=False, no_network=True, remove_comments=True, recover=True)
_CONTAINER = "{urn:oasis:names:tc:opendocument:xmlns:container}"
_OPF = "{http://www.idpf.org/2007/opf}"
_DC = "{http://purl.org/dc/elements/1.1/}"
_XHTML = "{http://www.w3.org/1999/xhtml}"
_TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
_TABLE = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
_META = "urn:oasis:names:tc:opendocument:xmlns:meta:1.0"
_ODF_CONTAINERS = (f"{{{_TABLE}}}table-cell", f"{{{_TEXT}}}p", f"{{{_TEXT}}}h")
"""Paragraphs inside these are read with them (a table row, a note inside a paragraph)."""
_HEADINGS = {f"h{level}": level for level in range(1, 7)}
_XHTML_BLOCKS = frozenset(("p", "li", "pre", "blockquote", "dt", "dd", "figcaption", "caption", "tr"))
_SKIPPED = frozenset(("script", "style", "head"))


def extract_epub(data: bytes, name: str, mime_type: str) -> Extracted:
    """The book's chapters in reading order; title and author from its metadata."""
    kind = "an EPUB book"
    check_zip(data, name, kind)
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as book:
            opf_path = _rootfile(book)
            package = _xml(book.read(opf_path))
            chapters = [_xhtml_blocks(_xml(book.read(path))) for path in _spine(package, opf_path, book)]
    except OOXML_ERRORS as exc:
        raise UnreadableContent(name, f"it is not {kind} I can read (the file looks damaged)") from exc
    metadata = package.find(f"{_OPF}metadata")
    title = author = None
    if metadata is not None:
        title = clean(metadata.findtext(f"{_DC}title"))
        author = clean(metadata.findtext(f"{_DC}creator"))
    text = "\n\n".join(block for chapter in chapters for block in chapter)
    return Extracted(
        text=text, mime_type=mime_type, title=title, author=author, metadata={"chapters": str(len(chapters))}
    )


def extract_odf(data: bytes, name: str, mime_type: str) -> Extracted:
    """An OpenDocument text or presentation; title, author and date from meta.xml."""
    kind = "an OpenDocument file"
    check_zip(data, name, kind)
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as package:
            content = _xml(package.read("content.xml"))
            meta = _xml(package.read("meta.xml")) if "meta.xml" in package.namelist() else None
    except OOXML_ERRORS as exc:
        raise UnreadableContent(name, f"it is not {kind} I can read (the file looks damaged)") from exc
    body = content.find("{urn:oasis:names:tc:opendocument:xmlns:office:1.0}body")
    text = "\n\n".join(_odf_blocks(body if body is not None else content))
    title = author = stamp = None
    if meta is not None:
        title = clean(meta.findtext(f".//{_DC}title"))
        author = clean(meta.findtext(f".//{_DC}creator")) or clean(
            meta.findtext(f".//{{{_META}}}initial-creator")
        )
        stamp = parse_iso_date(meta.findtext(f".//{_DC}date"))
    return Extracted(text=text, mime_type=mime_type, title=title, author=author, doc_timestamp=stamp)


def _xml(data: bytes) -> Any:
    root = lxml.etree.fromstring(data, _PARSER)
    if root is None:
        raise ValueError("an empty XML document")
    return root


def _rootfile(book: zipfile.ZipFile) -> str:
    container = _xml(book.read("META-INF/container.xml"))
    for rootfile in container.iter(f"{_CONTAINER}rootfile"):
        path = rootfile.get("full-path")
        if path:
            return str(path)
    raise KeyError("no rootfile")


def _spine(package: Any, opf_path: str, book: zipfile.ZipFile) -> list[str]:
    """The paths of the spine's XHTML documents, in reading order, that exist in the book."""
    folder = posixpath.dirname(opf_path)
    items = {
        item.get("id"): item.get("href")
        for item in package.iter(f"{_OPF}item")
        if "html" in (item.get("media-type") or "")
    }
    names = set(book.namelist())
    paths = []
    for ref in package.iter(f"{_OPF}itemref"):
        href = items.get(ref.get("idref"))
        if href:
            path = posixpath.normpath(posixpath.join(folder, href.split("#")[0]))
            if path in names and path not in paths:
                paths.append(path)
    return paths


def _xhtml_blocks(root: Any) -> list[str]:
    """Headings as '#' lines and block elements as paragraphs (the innermost block wins)."""
    for br in root.iter(f"{_XHTML}br", "br"):  # a line break separates words
        br.tail = " " + (br.tail or "")
    blocks: list[str] = []
    for element in root.iter():
        tag = _local(element)
        if tag in _SKIPPED or _inside(element, _SKIPPED):
            continue
        if tag in _HEADINGS:
            text = _words(element)
            if text:
                blocks.append("#" * _HEADINGS[tag] + " " + text)
        elif tag in _XHTML_BLOCKS and not any(
            _local(inner) in _XHTML_BLOCKS for inner in element.iterdescendants()
        ):
            text = " | ".join(_words(cell) for cell in element) if tag == "tr" else _words(element)
            if text.strip(" |"):
                blocks.append(text)
    return blocks


def _odf_blocks(body: Any) -> Iterator[str]:
    for element in body.iter(f"{{{_TEXT}}}h", f"{{{_TEXT}}}p", f"{{{_TABLE}}}table-row"):
        if element.tag == f"{{{_TABLE}}}table-row":
            cells = [" ".join(_words(p) for p in cell.iter(f"{{{_TEXT}}}p")) for cell in element]
            if any(cells):
                yield " | ".join(cells)
        elif not _inside(element, _ODF_CONTAINERS, qualified=True):
            text = _words(element)
            if text and element.tag == f"{{{_TEXT}}}h":
                level = int(element.get(f"{{{_TEXT}}}outline-level") or 1)
                yield "#" * min(max(level, 1), 6) + " " + text
            elif text:
                yield text


def _words(element: Any) -> str:
    return " ".join("".join(element.itertext()).split())


def _local(element: Any) -> str:
    tag = element.tag
    return tag.rsplit("}", 1)[-1].lower() if isinstance(tag, str) else ""


def _inside(element: Any, tags: frozenset[str] | tuple[str, ...], *, qualified: bool = False) -> bool:
    return any(
        (ancestor.tag if qualified else _local(ancestor)) in tags for ancestor in element.iterancestors()
    )
