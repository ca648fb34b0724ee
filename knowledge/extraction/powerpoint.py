"""PowerPoint decks (.pptx): each slide as a '## ' section with its text, tables and notes.

A slide's heading is its title placeholder's text, else 'Slide N'. Text frames (inside
groups too) give one line a paragraph, indented two spaces a level, tables one 'a | b | c'
line a row, and speaker notes follow as 'Notes: …'. Charts, SmartArt and pictures are not
read.

python-pptx opens the package (zip, relationships, XML parsed with entity resolution off)
and reads core properties; slides are walked with compiled XPath, several times faster than
python-pptx's shape proxies. Compiled XPath objects lock while evaluating, so sharing them
between threads is safe.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

import lxml.etree  # type: ignore[import-untyped, unused-ignore]
import pptx

from knowledge.errors import UnreadableContent
from knowledge.extraction.ooxml import OOXML_ERRORS, check_zip, core_properties
from knowledge.extraction.types import Extracted

_KIND = "a PowerPoint file"
_DAMAGED = f"it is not {_KIND} I can read (the file looks damaged)"

_A = "http://schemas.openxmlformats.org/drawingml/2006/main"
_P = "http://schemas.openxmlformats.org/presentationml/2006/main"
_NS = {"a": _A, "p": _P}
_SP, _GRP, _FRAME = (f"{{{_P}}}{tag}" for tag in ("sp", "grpSp", "graphicFrame"))
_T = f"{{{_A}}}t"


def _xpath(path: str) -> Any:
    return lxml.etree.XPath(path, namespaces=_NS)


_SHAPE_TREE = _xpath("p:cSld/p:spTree")
_PLACEHOLDER_TYPE = _xpath("string(p:nvSpPr/p:nvPr/p:ph/@type)")
_NOTES_BODY = _xpath("p:cSld/p:spTree/p:sp[p:nvSpPr/p:nvPr/p:ph/@type='body']")
_TEXT_BODY = _xpath("p:txBody")
_PARAGRAPHS = _xpath("a:p")
_PARAGRAPH_PARTS = _xpath("a:r/a:t | a:fld/a:t | a:br")
_LEVEL = _xpath("string(a:pPr/@lvl)")
_TABLE_ROWS = _xpath("a:graphic/a:graphicData/a:tbl/a:tr")
_ROW_CELLS = _xpath("a:tc")
_CELL_PARAGRAPHS = _xpath("a:txBody/a:p")
_TITLE_TYPES = frozenset({"title", "ctrTitle"})


def extract_pptx(data: bytes, name: str, mime_type: str) -> Extracted:
    """One section a slide; title from the core properties, else the first slide's title."""
    check_zip(data, name, _KIND)
    try:
        presentation = pptx.Presentation(io.BytesIO(data))
    except OOXML_ERRORS as exc:
        raise UnreadableContent(name, _DAMAGED) from exc
    text, first_title, slides = _render(presentation.slides)
    title, author, timestamp = core_properties(presentation.core_properties)
    return Extracted(
        text=text,
        mime_type=mime_type,
        title=title or first_title,
        author=author,
        doc_timestamp=timestamp,
        metadata={"slides": str(slides)},
    )


def _render(slides: Any) -> tuple[str, str | None, int]:
    """The deck's text ('' when no slide has any), its first slide title, its slide count."""
    sections: list[str] = []
    first_title: str | None = None
    has_text = False
    for number, slide in enumerate(slides, 1):
        title, lines = _slide_content(slide.element)
        if slide.has_notes_slide:
            lines.extend(_notes_lines(slide.notes_slide.element))
        first_title = first_title or title or None
        has_text = has_text or bool(title or lines)
        heading = f"## {title or f'Slide {number}'}"
        sections.append("\n\n".join([heading, "\n".join(lines)]) if lines else heading)
    return ("\n\n".join(sections) if has_text else ""), first_title, len(sections)


def _slide_content(slide: Any) -> tuple[str, list[str]]:
    """The slide's title ('' if none) and the lines of everything else on it."""
    title = ""
    lines: list[str] = []
    for tree in _SHAPE_TREE(slide):
        for shape in _shapes(tree):
            if not title and shape.tag == _SP and _PLACEHOLDER_TYPE(shape) in _TITLE_TYPES:
                title = " ".join(" ".join(_frame_lines(shape)).split())
            else:
                lines.extend(_shape_lines(shape))
    return title, lines


def _shapes(tree: Any) -> Iterator[Any]:
    """Shapes in z-order, groups flattened."""
    for element in tree.iterchildren(_SP, _GRP, _FRAME):
        if element.tag == _GRP:
            yield from _shapes(element)
        else:
            yield element


def _shape_lines(shape: Any) -> Iterator[str]:
    if shape.tag == _SP:
        yield from _frame_lines(shape)
        return
    for row in _TABLE_ROWS(shape):
        values = [
            " ".join(" ".join(_paragraph_text(p) for p in _CELL_PARAGRAPHS(cell)).split())
            for cell in _ROW_CELLS(row)
        ]
        if any(values):
            yield " | ".join(values)


def _frame_lines(shape: Any) -> Iterator[str]:
    """One line a non-empty paragraph of the shape's text, indented by outline level."""
    for body in _TEXT_BODY(shape):
        for paragraph in _PARAGRAPHS(body):
            text = _paragraph_text(paragraph).strip()
            if text:
                level = _LEVEL(paragraph)
                yield "  " * int(level) + text if level.isdigit() else text


def _paragraph_text(paragraph: Any) -> str:
    return "".join((part.text or "") if part.tag == _T else " " for part in _PARAGRAPH_PARTS(paragraph))


def _notes_lines(notes: Any) -> Iterator[str]:
    lines = [line for shape in _NOTES_BODY(notes) for line in _frame_lines(shape)]
    if lines:
        yield "Notes: " + "\n".join(lines)
