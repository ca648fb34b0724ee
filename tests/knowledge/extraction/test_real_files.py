"""Real files from public test suites (tests/data/real/, see SOURCES.md): what Lore reads
from each, and what it refuses with a reason rather than index as garbage (issue 16)."""

from __future__ import annotations

from pathlib import Path

import pytest

from knowledge.errors import GarbledContent
from knowledge.extraction import extract
from knowledge.extraction.quality import assess
from tests.knowledge.files import make_pdf

REAL = Path(__file__).parents[2] / "data" / "real"


def real(name: str) -> bytes:
    return (REAL / name).read_bytes()


def words(text: str) -> str:
    return " ".join(text.split())


def test_a_japanese_pdf_pypdf_garbles_is_read_by_the_fallback() -> None:
    # jo.pdf (pdfminer.six's samples) uses an Adobe-Japan1 CMap; pypdf gives 'ɹɹং Θͨ͘͠ͱ͍'.
    extracted = extract(real("jo.pdf"), "jo.pdf")
    assert extracted.metadata["extracted_by"] == "pdfminer.six"
    assert "わたくしといふ現象は" in extracted.text and "ひとつの青い照明です" in extracted.text
    assert assess(extracted.text).readable


@pytest.mark.parametrize(
    ("name", "expected"), [("simple1.pdf", "Hello World"), ("simple3.pdf", "あいうえお")]
)
def test_pdfs_without_startxref_that_pypdf_calls_damaged_are_read(name: str, expected: str) -> None:
    extracted = extract(real(name), name)
    assert expected in words(extracted.text) and extracted.metadata["extracted_by"] == "pdfminer.six"


def caesar(text: str) -> str:
    """What a font without a Unicode map gives: glyph codes 29 below the letters."""
    return "".join(chr(ord(char) - 29) for char in text)


def test_a_pdf_whose_text_is_garbled_by_every_extractor_is_refused_with_a_reason() -> None:
    lines = ["Computer Science Department", "New York University", "Comparable news articles"] * 8
    pdf = make_pdf([[caesar(line) for line in lines]])
    with pytest.raises(GarbledContent) as refused:
        extract(pdf, "slides.pdf")
    assert "placeholders or control codes" in refused.value.reason
    assert "exported again" in refused.value.reason


def test_readable_text_in_many_scripts_passes_and_mojibake_does_not() -> None:
    prose = {
        "en": "The on-call engineer carries the pager for one week, from Monday to Monday.",
        "de": "Die Bereitschaft trägt den Pager eine Woche lang, von Montag bis Montag, für alle.",
        "ru": "Дежурный инженер носит пейджер одну неделю, с понедельника до понедельника.",
        "ja": "当番のエンジニアは月曜日から月曜日まで一週間ポケベルを持ちます。Slackで連絡します。",
        "el": "Ο μηχανικός εφημερίας κρατά τον τηλεειδοποιητή για μία εβδομάδα, από Δευτέρα.",
    }
    for language, text in prose.items():
        assert assess(text * 3).readable, language
    mojibake = "ୈ ೋ ৚ ୈ Ұ ߲ ͷ ද ͷ ੨ ৭ ͷ ౮ Ր ͷ ߲ ୈ ࡾ ߸ தủ ؚ ΉỐỜỨ Λủ ؚ ΉỐ ੨ ৭ ͷ ౮ Ր ͷ ໼ ҹ ͷ ߲ Λ আ ͖ỏ"
    assert not assess(mojibake * 3).readable
    assert "jumble" in (assess(mojibake * 3).problem or "")
    assert not assess(caesar("Computer Science Department New York University") * 3).readable


def test_data_is_judged_by_its_characters_only() -> None:
    code = 'x = {"a": [1, 2, 3]} if y else {"b": (4, 5)}  # ->> ## $$ %% &&\n' * 20
    assert assess(code, data=True).readable
    assert not assess("\ufffd" * 40 + "abc", data=True).readable


def test_a_text_box_is_read_where_the_body_has_no_text_of_its_own() -> None:
    # mammoth's text-box.docx: a drawing whose text box holds the only text (like a form
    # made of text boxes); it was refused as "it has no text in it".
    assert extract(real("text-box.docx"), "text-box.docx").text == "Datum plane"


def test_a_strict_ooxml_word_document_is_read() -> None:
    assert extract(real("strict-format.docx"), "strict-format.docx").text == "Test"


@pytest.mark.parametrize(
    ("name", "section", "line"),
    [
        ("footnotes.docx", "# Footnotes", "[1] A tachyon walks into a bar."),
        ("endnotes.docx", "# Endnotes", "[2] A tachyon walks into a bar."),
        ("comments.docx", "# Comments", "Michael Williamson: A tachyon walks into a bar."),
        ("hdr-header-footer.docx", "# Headers and footers", "Footer for section 1"),
    ],
)
def test_word_text_outside_the_body_follows_it_in_its_own_section(name: str, section: str, line: str) -> None:
    body, _, rest = extract(real(name), name).text.partition(f"\n\n{section}\n\n")
    assert body and line in rest.split("\n\n")


def tightly_set_pdf(lines: list[str], gap: float = 1.5) -> bytes:
    """A PDF that places each word by its own text move, `gap` points after the previous one
    (Helvetica 12), with no space characters: how some typesetters justify lines."""
    from pdfminer.fontmetrics import FONT_METRICS

    widths = FONT_METRICS["Helvetica"][1]

    def advance(word: str) -> float:
        return sum(widths.get(char, 556) for char in word) * 12 / 1000 + gap

    rows = []
    for number, line in enumerate(lines):
        moves = b" ".join(b"(%s) Tj %.2f 0 Td" % (word.encode(), advance(word)) for word in line.split())
        rows.append(b"BT /F1 12 Tf 72 %d Td %s ET" % (720 - 16 * number, moves))
    pdf = make_pdf([["placeholder"]])
    stream = b"\n".join(rows)
    old = b"BT /F1 12 Tf 14 TL 72 720 Td (placeholder) Tj ET"
    body = pdf.replace(b"/Length %d" % len(old), b"/Length %d" % len(stream)).replace(old, stream)
    return _with_xref(body)


def _with_xref(pdf: bytes) -> bytes:
    """`pdf` with its cross-reference table rebuilt (its objects moved)."""
    import re

    head = pdf[: pdf.index(b"xref\n")]
    offsets = [m.start() for m in re.finditer(rb"(?m)^\d+ 0 obj", head)]
    table = b"xref\n0 %d\n0000000000 65535 f \n" % (len(offsets) + 1)
    table += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    trailer = b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(offsets) + 1, len(head))
    return head + table + trailer


def test_words_run_together_by_pypdf_are_read_apart_by_the_fallback() -> None:
    lines = [
        "the committee considered substantial nonresident withholding temporarily",
        "an individual taxpayer reported essentially total income withholding",
    ] * 4
    pdf = tightly_set_pdf(lines)
    import io

    from pypdf import PdfReader

    assert "committeeconsidered" in PdfReader(io.BytesIO(pdf)).pages[0].extract_text()  # the symptom
    extracted = extract(pdf, "instructions.pdf")
    assert extracted.metadata["extracted_by"] == "pdfminer.six"
    assert "substantial nonresident withholding temporarily" in words(extracted.text)
