"""The real-file extraction benchmark's measures, on a tiny corpus made here (the real one
is a cache that a clone does not have)."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import docx
from fpdf import FPDF

from bench import agreement
from bench.extraction import run
from bench.realfiles import MANIFEST, corpus

ARTICLE = (
    "<h1>Rotating the signing keys</h1><p>The platform team rotates the webhook signing keys "
    "every ninety days. A rotation starts with a new key published next to the old one, and "
    "the old key is retired once every consumer has confirmed the switch.</p><p>Consumers "
    "that miss the window get a reminder from the on-call engineer and a second one a week "
    "later, after which their deliveries stop until they confirm.</p>"
)
CHROME = "".join(f'<li><a href="/section/{n}">Section {n} archive listing</a></li>' for n in range(40))


def _page(folder: Path) -> None:
    folder.mkdir(parents=True)
    source = (
        f"<html><head><title>Keys</title></head><body><nav><ul>{CHROME}</ul></nav>"
        f"<main><article>{ARTICLE}</article></main><footer>© Example. Privacy. Terms.</footer></body></html>"
    )
    (folder / "source.html").write_text(source)
    (folder / "expected.html").write_text(f"<div>{ARTICLE}</div>")


def _pdf() -> bytes:
    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("helvetica", size=12)
    pdf.multi_cell(0, 8, "Invoices are sent on the first working day of each month. " * 6)
    return bytes(pdf.output())


def _word() -> bytes:
    document = docx.Document()
    document.sections[0].header.paragraphs[0].text = "Quarterly ledger confidential draft"
    document.add_paragraph("The ledger closes on the fifth working day; late entries wait a month.")
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def _corpus(folder: Path) -> Path:
    _page(folder / "pages" / "keys")
    (folder / "invoices.pdf").write_bytes(_pdf())
    (folder / "ledger.docx").write_bytes(_word())
    (folder / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))
    (folder / "broken.pdf").write_bytes(b"%PDF-1.4\nthis is not a PDF body")
    return folder


def test_the_section_counts_outcomes_and_measures_text_quality(tmp_path: Path) -> None:
    folder = _corpus(tmp_path / "corpus")
    report = asyncio.run(run(tmp_path / "work", False, folder))
    by_type = report["by_type"]
    assert report["files"] == 5  # expected.html is a reference, not a corpus file
    assert by_type["pdf"] == {**by_type["pdf"], "files": 2, "accepted": 1, "refused": 1, "failed": 0}
    assert by_type["other"]["refusals"] == {"UnsupportedContent": 1}
    assert by_type["html (readability)"]["accepted"] == 1
    assert report["worker_peak_mb"] > 0 and report["overall"]["mb_per_s"] > 0

    quality = report["quality"]
    page = quality["readability"]
    assert page["recall"]["median"] > 0.9 and page["boilerplate"]["median"] < 0.2
    pdf = quality["pdf"]
    assert pdf["agreement"]["files"] == 1 and pdf["agreement"]["median"] > 0.95
    assert pdf["read_only_by_pdfminer"] == [] and pdf["disagreeing"] == []
    word = quality["docx"]
    assert word["files"] == 1 and 0.5 < word["pooled"] <= 1  # the body at least; the header too once read


def test_without_a_corpus_the_section_says_where_it_looked(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    report = asyncio.run(run(tmp_path, True, missing))
    assert report == {"skipped": f"no corpus at {missing} (build it with python -m bench.realfiles)"}


def test_a_manifest_lists_the_corpus_and_pairs_readability_pages_with_their_expected_text(
    tmp_path: Path,
) -> None:
    _page(tmp_path / "readability" / "keys")
    (tmp_path / "a.csv").write_text("name,team\nada,platform\n")
    rows = [
        "path\tsource_repo\toriginal_path\tlicense\ttype",
        "a.csv\tx/y\ta.csv\tMIT\tcsv",
        "readability/keys/source.html\tmozilla/readability\tsource.html\tApache-2.0\thtml",
        "readability/keys/expected.html\tmozilla/readability\texpected.html\tApache-2.0\texpected",
    ]
    (tmp_path / MANIFEST).write_text("\n".join(rows) + "\n")
    files = corpus(tmp_path)
    assert [(f.path.name, f.group) for f in files] == [
        ("a.csv", "csv"),
        ("source.html", "html (readability)"),
    ]
    assert files[1].expected == tmp_path / "readability" / "keys" / "expected.html"


def test_word_measures() -> None:
    words = agreement.words("Le café, 官報 No. 42")
    assert words == {"le": 1, "café": 1, "官": 1, "報": 1, "no": 1, "42": 1}
    expected = agreement.words("one two three four")
    ours = agreement.words("one two three menu menu")
    assert agreement.recall(ours, expected) == 0.75
    assert agreement.excess(ours, expected) == 0.4
    assert agreement.agreement(ours, expected) == 6 / 9
    assert "Quarterly ledger confidential draft" in agreement.ooxml_text(_word())
