"""The smaller real-world findings of issue 16 (item 9): a short Windows-1252 file, EPUB and
OpenDocument read, XPS and spreadsheets refused by name, JSON errors worded once, HTML titles
without the site's name or line breaks, MathML kept as text."""

from __future__ import annotations

import pytest

from knowledge.errors import UnreadableContent, UnsupportedContent
from knowledge.extraction import extract
from tests.knowledge.files import make_epub, make_odt, make_zip


@pytest.mark.parametrize(
    ("data", "text"),
    [
        (b"Caf\xe9", "Café"),  # was 'Cafﻠ' (four bytes taken for two UTF-16 characters)
        (b"Stra\xdfe", "Straße"),
        (b"Meet at the Caf\xe9 on Monday.\n", "Meet at the Café on Monday.\n"),
        (b"It\x92s \x93quoted\x94 \x96 fine", "It’s “quoted” – fine"),
        ("Привет мир, как дела".encode("cp1251"), "Привет мир, как дела"),
        ("Καλημέρα κόσμε".encode("cp1253"), "Καλημέρα κόσμε"),
    ],
)
def test_short_legacy_encoded_text_is_decoded(data: bytes, text: str) -> None:
    assert extract(data, "note.txt").text == text


def test_an_epub_book_is_read_in_reading_order() -> None:
    book = make_epub(
        [
            ("Down the Rabbit-Hole", ["Alice was beginning to get very tired."]),
            ("The Pool of Tears", ["Curiouser!"]),
        ],
        title="Alice's Adventures in Wonderland",
        author="Lewis Carroll",
    )
    result = extract(book, "alice.epub")
    assert result.text.split("\n\n") == [
        "# Down the Rabbit-Hole",
        "Alice was beginning to get very tired.",
        "# The Pool of Tears",
        "Curiouser!",
    ]
    assert (result.title, result.author, result.metadata["chapters"]) == (
        "Alice's Adventures in Wonderland",
        "Lewis Carroll",
        "2",
    )


def test_an_opendocument_text_is_read() -> None:
    document = make_odt([(1, "Expenses"), (None, "Receipts are due within thirty days.")], title="Handbook")
    result = extract(document, "handbook.odt")
    assert result.text == "# Expenses\n\nReceipts are due within thirty days."
    assert result.title == "Handbook"


@pytest.mark.parametrize(
    ("members", "name", "reason"),
    [
        ({"FixedDocSeq.fdseq": b"<x/>", "Documents/1/Pages/1.fpage": b"<x/>"}, "scan.xps", "XPS document"),
        (
            {"mimetype": b"application/vnd.oasis.opendocument.spreadsheet"},
            "budget.ods",
            "save the sheet as CSV",
        ),
    ],
)
def test_other_packages_are_refused_by_name_not_as_an_archive(
    members: dict[str, bytes], name: str, reason: str
) -> None:
    with pytest.raises(UnsupportedContent, match=reason) as refused:
        extract(make_zip(members), name)
    assert "unpack it" not in refused.value.reason


def test_json_errors_name_the_place_once() -> None:
    with pytest.raises(UnreadableContent) as refused:
        extract(b'["a\x01b"]', "cut.json")
    assert refused.value.reason == "it is not valid JSON (Invalid control character at line 1, column 4)"


@pytest.mark.parametrize(
    ("head", "body", "title"),
    [
        ("<title>Hermitian matrix - Wikipedia</title>", "<h1>Hermitian matrix</h1>", "Hermitian matrix"),
        (
            '<title>Attack stokes fears - The Washington Post</title><meta property="og:site_name" '
            'content="The Washington Post">',
            "",
            "Attack stokes fears",
        ),
        (
            "<title>Obama admits US gun laws are his biggest frustration | BBC News</title>"
            '<link rel="canonical" href="https://www.bbc.co.uk/news/world-33646875">',
            "",
            "Obama admits US gun laws are his biggest frustration",
        ),
        ("<title>\n  Release notes\n  for 2.0\n</title>", "", "Release notes for 2.0"),
        ("<title>Cats - Dogs - Mice</title>", "", "Cats - Dogs - Mice"),
    ],
)
def test_html_titles_lose_the_site_name_and_line_breaks(head: str, body: str, title: str) -> None:
    paragraph = "<p>" + "Plenty of words make this page worth reading for its own sake. " * 5 + "</p>"
    page = f"<html><head>{head}</head><body>{body}{paragraph}</body></html>".encode()
    assert extract(page, "page.html").title == title


def test_mathml_is_kept_as_text() -> None:
    formula = (
        '<math xmlns="http://www.w3.org/1998/Math/MathML"><semantics><mrow><msup><mi>e</mi><mrow><mi>i</mi>'
        "<mi>&#960;</mi></mrow></msup><mo>+</mo><mn>1</mn><mo>=</mo><mn>0</mn></mrow>"
        '<annotation encoding="application/x-tex">e^{i\\pi}+1=0</annotation></semantics></math>'
    )
    plain = "<math><mi>a</mi><mo>+</mo><mi>b</mi></math>"
    page = (
        "<html><body><article><p>Euler's identity is often cited as an example of deep mathematical beauty: "
        f"{formula} holds.</p><p>A sum of two variables, {plain}, is written in the text of this paragraph.</p>"
        "</article></body></html>"
    ).encode()
    text = extract(page, "euler.html").text
    assert "beauty: e^{i\\pi}+1=0 holds." in text and "variables, a + b, is" in text
