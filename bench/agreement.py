"""How close an extracted text is to a reference: word multisets compared.

Words are runs of letters and digits, lower-cased; Chinese, Japanese and Korean characters
count one by one (those scripts put no spaces between words). Each measure is a share in
[0, 1]:

- `recall(ours, expected)`: how much of the expected text we kept;
- `excess(ours, expected)`: how much of ours is not in the expected text (boilerplate);
- `agreement(a, b)`: the Dice overlap of two extractions of the same file (2|A∩B| / (|A|+|B|)).

The references: readability's `expected.html` as text, pdfminer.six's text of a PDF, and
every `<w:t>` / `<a:t>` run in every part of a Word or PowerPoint file (body, headers,
footers, notes, comments, text boxes).
"""

from __future__ import annotations

import io
import re
import zipfile
from collections import Counter

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_WORD = re.compile(rf"[{_CJK}]|[^\W_{_CJK}]+")
Words = Counter[str]


def words(text: str) -> Words:
    return Counter(_WORD.findall(text.lower()))


def _common(a: Words, b: Words) -> int:
    return sum((a & b).values())


def recall(ours: Words, expected: Words) -> float:
    total = sum(expected.values())
    return _common(ours, expected) / total if total else 1.0


def excess(ours: Words, expected: Words) -> float:
    total = sum(ours.values())
    return 1 - _common(ours, expected) / total if total else 0.0


def agreement(a: Words, b: Words) -> float:
    total = sum(a.values()) + sum(b.values())
    return 2 * _common(a, b) / total if total else 1.0


def html_text(html: bytes) -> str:
    """The visible text of an HTML document (scripts and styles left out)."""
    import lxml.html  # type: ignore[import-untyped]

    tree = lxml.html.fromstring(html)
    for element in tree.xpath("//script|//style|//noscript"):
        element.drop_tree()
    return str(tree.text_content())


_TEXT_RUN = re.compile(rb"<(?:w|a):t(?:\s[^>]*)?>([^<]*)</(?:w|a):t>")
_CONTENT_PARTS = re.compile(r"^(word|ppt/(slides|notesSlides))/[^/]+\.xml$")
_NOT_CONTENT = ("settings", "styles", "fontTable", "numbering", "webSettings", "stylesWithEffects")


def ooxml_text(data: bytes) -> str:
    """Every text run of every content part of a .docx or .pptx, one part after another."""
    import html

    parts = []
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for name in sorted(archive.namelist()):
            stem = name.rsplit("/", 1)[-1].removesuffix(".xml")
            if _CONTENT_PARTS.match(name) and stem not in _NOT_CONTENT:
                runs = _TEXT_RUN.findall(archive.read(name))
                parts.append(" ".join(html.unescape(run.decode("utf-8", "replace")) for run in runs))
    return "\n".join(parts)


def pdfminer_text(data: bytes) -> str:
    """pdfminer.six's text of a PDF: the benchmark's second opinion (a bench-only dependency)."""
    from pdfminer.high_level import extract_text

    return str(extract_text(io.BytesIO(data)))
