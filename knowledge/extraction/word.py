"""Word documents (.docx): body paragraphs and tables in order, as Markdown-flavoured text.

'Heading N' styles (and styles based on them) become N '#' (capped at six), 'Title' becomes
'#', list paragraphs (a 'List …' style or Word numbering) become '- ' lines indented two
spaces a level, and each table row becomes 'a | b | c'. Content controls are read, and text
boxes after the paragraph that anchors them (a form made of text boxes has all its text
there). After the body come sections for the text outside it: '# Headers and footers'
(each distinct one once), '# Footnotes', '# Endnotes' and '# Comments' ('[n] text',
'author: text'). Measured on python-docx's and mammoth's test files, this reads 100% of the
words of those parts, where the body alone read 83%, mammoth's raw text 84% and docx2python
89% (docx2python failed on two files and skips comments).

Strict OOXML (ISO 29500 Strict, namespaces under purl.oclc.org) is read by renaming its
namespaces to the transitional ones they correspond to before parsing.

python-docx opens the package (zip, relationships, XML parsed with entity resolution off)
and reads styles and core properties; the body is walked with compiled XPath, which is
several times faster than python-docx's per-paragraph proxies. Compiled XPath objects
lock while evaluating, so sharing them between threads is safe.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import docx
import lxml.etree  # type: ignore[import-untyped, unused-ignore]
from docx.enum.style import WD_STYLE_TYPE

from knowledge.errors import UnreadableContent
from knowledge.extraction.ooxml import OOXML_ERRORS, check_zip, core_properties
from knowledge.extraction.types import Extracted

_KIND = "a Word document"
_DAMAGED = f"it is not {_KIND} I can read (the file looks damaged)"

_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_NS = {"w": _W, "mc": "http://schemas.openxmlformats.org/markup-compatibility/2006"}
_P, _TBL, _SDT, _SDT_CONTENT, _T, _TAB = (
    f"{{{_W}}}{tag}" for tag in ("p", "tbl", "sdt", "sdtContent", "t", "tab")
)
_DEPTH = lxml.etree.XPath("count(ancestor::w:txbxContent)", namespaces=_NS)
# Text of a paragraph's own runs: not those of the text boxes it anchors (as deep in text
# boxes as the paragraph itself), not the fallback copy of alternate content.
_RUN_TEXT = lxml.etree.XPath(
    ".//w:r[count(ancestor::w:txbxContent) = $depth and not(ancestor::mc:Fallback)]"
    "/*[self::w:t or self::w:tab or self::w:br or self::w:cr]",
    namespaces=_NS,
)
_TEXT_BOXES = lxml.etree.XPath(
    ".//w:txbxContent[count(ancestor::w:txbxContent) = $depth and not(ancestor::mc:Fallback)]",
    namespaces=_NS,
)
_NOTES = lxml.etree.XPath(
    "w:footnote[not(@w:type) or @w:type='normal'] | w:endnote[not(@w:type) or @w:type='normal']",
    namespaces=_NS,
)
_COMMENTS = lxml.etree.XPath("w:comment", namespaces=_NS)
_ID, _AUTHOR = f"{{{_W}}}id", f"{{{_W}}}author"
_RT = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/"
_PART_SECTIONS = (
    ((_RT + "header", _RT + "footer"), "Headers and footers"),
    ((_RT + "footnotes",), "Footnotes"),
    ((_RT + "endnotes",), "Endnotes"),
    ((_RT + "comments",), "Comments"),
)
_STRICT = re.compile(rb"http://purl\.oclc\.org/ooxml/(\w+)/")
_XML_PARSER = lxml.etree.XMLParser(resolve_entities=False, no_network=True, remove_comments=True)
_STYLE_ID = lxml.etree.XPath("string(w:pPr/w:pStyle/@w:val)", namespaces=_NS)
_NUMBERING = lxml.etree.XPath("w:pPr/w:numPr[not(w:numId/@w:val='0')]", namespaces=_NS)
_NUMBERING_LEVEL = lxml.etree.XPath("string(w:ilvl/@w:val)", namespaces=_NS)
_TABLE_ROWS = lxml.etree.XPath("w:tr", namespaces=_NS)
_ROW_CELLS = lxml.etree.XPath("w:tc | w:sdt/w:sdtContent/w:tc", namespaces=_NS)
_CELL_PARAGRAPHS = lxml.etree.XPath(".//w:p", namespaces=_NS)

_HEADING_STYLE = re.compile(r"heading (\d)", re.IGNORECASE)
_LIST_LEVEL_STYLE = re.compile(r"list \w+ (\d)", re.IGNORECASE)


@dataclass(frozen=True)
class _Role:
    """What a paragraph style makes a paragraph: a heading level (0: none) or a list item."""

    heading: int = 0
    list_level: int | None = None


def extract_docx(data: bytes, name: str, mime_type: str) -> Extracted:
    """The document's text (body, then the parts outside it); title, author and modified
    date from the core properties."""
    check_zip(data, name, _KIND)
    try:
        document = docx.Document(io.BytesIO(_transitional(data)))
    except OOXML_ERRORS as exc:
        raise UnreadableContent(name, _DAMAGED) from exc
    roles = _style_roles(document.styles)
    blocks = list(_blocks(document.element.body, roles))
    title, author, timestamp = core_properties(document.core_properties)
    first_title = _first_title(blocks)
    for heading, texts in _other_parts(document.part, roles):
        blocks += [(f"# {heading}", False), *((text, False) for text in texts)]
    return Extracted(
        text=_join(blocks),
        mime_type=mime_type,
        title=title or first_title,
        author=author,
        doc_timestamp=timestamp,
    )


def _transitional(data: bytes) -> bytes:
    """`data` itself, or for a Strict OOXML package a copy with its namespaces and
    relationship types renamed to their transitional equivalents."""
    with zipfile.ZipFile(io.BytesIO(data)) as package:
        if not _STRICT.search(package.read("_rels/.rels")):
            return data
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as copy:
            for item in package.infolist():
                member = package.read(item)
                if item.filename.endswith((".xml", ".rels")):
                    member = _STRICT.sub(rb"http://schemas.openxmlformats.org/\1/2006/", member)
                copy.writestr(item, member)
    return out.getvalue()


def _other_parts(part: Any, roles: dict[str, _Role]) -> Iterator[tuple[str, list[str]]]:
    """(section heading, texts) for headers and footers, notes and comments, where any."""
    for types, heading in _PART_SECTIONS:
        texts: list[str] = []
        for rel in part.rels.values():
            if rel.is_external or rel.reltype not in types:
                continue
            root = lxml.etree.fromstring(rel.target_part.blob, _XML_PARSER)
            for text in _part_texts(root, roles):
                if text not in texts:  # the same header in every section
                    texts.append(text)
        if texts:
            yield heading, texts


def _part_texts(root: Any, roles: dict[str, _Role]) -> Iterator[str]:
    if root.tag in (f"{{{_W}}}footnotes", f"{{{_W}}}endnotes"):
        for note in _NOTES(root):
            yield f"[{note.get(_ID)}] {_flat(note, roles)}"
    elif root.tag == f"{{{_W}}}comments":
        for comment in _COMMENTS(root):
            author = comment.get(_AUTHOR)
            yield f"{author}: {_flat(comment, roles)}" if author else _flat(comment, roles)
    else:
        yield from (text for text, _ in _blocks(root, roles))


def _flat(container: Any, roles: dict[str, _Role]) -> str:
    """A note's or comment's blocks on one line."""
    return " ".join(" ".join(text.lstrip("#- ").split()) for text, _ in _blocks(container, roles))


def _style_roles(styles: Any) -> dict[str, _Role]:
    """Paragraph style id to role, keyed '' for the default style; resolved once a document."""
    roles = {style.style_id: _role(style) for style in styles if style.type == WD_STYLE_TYPE.PARAGRAPH}
    default = styles.default(WD_STYLE_TYPE.PARAGRAPH)
    roles[""] = _role(default) if default is not None else _Role()
    return roles


def _role(style: Any) -> _Role:
    for _ in range(10):  # follow 'based on' a few steps: custom headings inherit from Heading N
        name = style.name or ""
        if name == "Title":
            return _Role(heading=1)
        heading = _HEADING_STYLE.fullmatch(name)
        if heading:
            return _Role(heading=min(int(heading.group(1)), 6))
        if name.startswith("List"):
            numbered = _LIST_LEVEL_STYLE.fullmatch(name)
            return _Role(list_level=int(numbered.group(1)) - 1 if numbered else 0)
        style = style.base_style
        if style is None:
            break
    return _Role()


def _blocks(container: Any, roles: dict[str, _Role]) -> Iterator[tuple[str, bool]]:
    """(text, is a list item) for each non-empty paragraph, then the text boxes it anchors;
    each table is one block."""
    for element in container.iterchildren(_P, _TBL, _SDT):
        if element.tag == _P:
            line, is_item = _paragraph_line(element, roles)
            if line:
                yield line, is_item
            for box in _TEXT_BOXES(element, depth=_DEPTH(element)):
                yield from _blocks(box, roles)
        elif element.tag == _TBL:
            rows = "\n".join(_table_rows(element))
            if rows:
                yield rows, False
        else:
            content = element.find(_SDT_CONTENT)
            if content is not None:
                yield from _blocks(content, roles)


def _paragraph_line(p: Any, roles: dict[str, _Role]) -> tuple[str, bool]:
    text = _text(p).strip()
    if not text:
        return "", False
    role = roles.get(_STYLE_ID(p)) or roles[""]
    if role.heading:
        return "#" * role.heading + " " + text, False
    level = _numbering_level(p, role)
    if level is None:
        return text, False
    return "  " * level + "- " + text, True


def _numbering_level(p: Any, role: _Role) -> int | None:
    """The 0-based list level of a paragraph: its own numbering, else its style's."""
    numbering = _NUMBERING(p)
    if numbering:
        level = _NUMBERING_LEVEL(numbering[0])
        return int(level) if level.isdigit() else (role.list_level or 0)
    return role.list_level


def _text(p: Any) -> str:
    """The text of the paragraph's own runs (not of the text boxes it anchors)."""
    return "".join(
        (part.text or "") if part.tag == _T else "\t" if part.tag == _TAB else "\n"
        for part in _RUN_TEXT(p, depth=_DEPTH(p))
    )


def _table_rows(table: Any) -> Iterator[str]:
    """One 'a | b | c' line a row; a cell's paragraphs (nested tables too) joined by spaces."""
    for row in _TABLE_ROWS(table):
        values = [
            " ".join(" ".join(_text(p) for p in _CELL_PARAGRAPHS(cell)).split()) for cell in _ROW_CELLS(row)
        ]
        if any(values):
            yield " | ".join(values)


def _join(blocks: list[tuple[str, bool]]) -> str:
    """Blocks separated by blank lines, except consecutive list items: one line each."""
    parts: list[str] = []
    previous_item = False
    for text, is_item in blocks:
        if parts:
            parts.append("\n" if is_item and previous_item else "\n\n")
        parts.append(text)
        previous_item = is_item
    return "".join(parts)


def _first_title(blocks: list[tuple[str, bool]]) -> str | None:
    """The text of the first '# ' line, used when the core properties name no title."""
    return next((text[2:] for text, _ in blocks if text.startswith("# ")), None)
