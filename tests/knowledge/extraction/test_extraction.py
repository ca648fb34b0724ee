"""Extraction of every supported type from files generated at test time, and every refusal."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import random
import time
import tracemalloc
import zipfile
from datetime import UTC, datetime

import pytest

from knowledge.errors import (
    EmptyContent,
    IngestError,
    TooLarge,
    UnreadableContent,
    UnsupportedContent,
)
from knowledge.extraction import SUPPORTED_DESCRIPTION, Extracted, detect_type, extract
from knowledge.extraction.ooxml import check_expansion
from tests.knowledge import files
from tests.support.timing import own_heap

MB = 1024 * 1024
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
WHEN = datetime(2024, 3, 5, 12, 0, tzinfo=UTC)


def lines(result: Extracted) -> list[str]:
    return result.text.split("\n")


# --- Word ---------------------------------------------------------------------------------


def test_docx_headings_lists_tables_and_core_properties() -> None:
    data = files.make_docx(
        [(0, "Handbook"), (1, "Deploys"), (None, "Ship on Tuesdays."), (2, "Rollbacks")],
        bullets=["Page the on-call", "Revert the commit"],
        table=[["Service", "Owner"], ["billing", "Ada"]],
        title="Engineering handbook",
        author="Ada Lovelace",
        modified=WHEN,
    )

    result = extract(data, "handbook.docx")

    assert result.mime_type == DOCX
    assert lines(result) == [
        "# Handbook",
        "",
        "# Deploys",
        "",
        "Ship on Tuesdays.",
        "",
        "## Rollbacks",
        "",
        "- Page the on-call",
        "- Revert the commit",
        "",
        "Service | Owner",
        "billing | Ada",
    ]
    assert (result.title, result.author, result.doc_timestamp) == (
        "Engineering handbook",
        "Ada Lovelace",
        WHEN,
    )


def test_docx_title_falls_back_to_the_title_paragraph() -> None:
    data = files.make_docx([(0, "Onboarding"), (None, "Welcome aboard.")])

    assert extract(data, "onboarding.docx").title == "Onboarding"


def test_docx_deep_headings_are_capped_at_six_hashes() -> None:
    data = files.make_docx([(9, "Very deep"), (None, "text")])

    assert extract(data, "deep.docx").text.startswith("###### Very deep\n")


def test_docx_internal_entities_are_not_expanded() -> None:
    data = _with_doctype(
        files.make_docx([(None, "hello world")]),
        b'<!DOCTYPE w:document [<!ENTITY e "EXPANDED">]>',
        b"hello &e; world",
    )

    result = extract(data, "entity.docx")

    assert result.text.startswith("hello")
    assert "EXPANDED" not in result.text


def test_docx_billion_laughs_is_refused_quickly() -> None:
    entities = [b'<!ENTITY l0 "lol">'] + [
        b'<!ENTITY l%d "%s">' % (level, b"".join(b"&l%d;" % (level - 1) for _ in range(10)))
        for level in range(1, 10)
    ]
    data = _with_doctype(
        files.make_docx([(None, "hello world")]),
        b"<!DOCTYPE w:document [" + b"".join(entities) + b"]>",
        b"hello &l9; world",
    )

    with own_heap():
        started = time.perf_counter()
        try:
            result = extract(data, "lol.docx")
        except UnreadableContent:
            result = None
        assert time.perf_counter() - started < 2
    assert result is None or "lol" not in result.text


def _with_doctype(docx: bytes, doctype: bytes, text: bytes) -> bytes:
    """`docx` with a DOCTYPE in word/document.xml and 'hello world' replaced by `text`."""
    source = zipfile.ZipFile(io.BytesIO(docx))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            data = source.read(info)
            if info.filename == "word/document.xml":
                end_of_declaration = data.index(b"?>") + 2
                data = data[:end_of_declaration] + doctype + data[end_of_declaration:]
                data = data.replace(b"hello world", text)
            target.writestr(info, data)
    return buffer.getvalue()


def test_empty_docx_is_empty_content() -> None:
    with pytest.raises(EmptyContent):
        extract(files.make_docx([]), "blank.docx")


def test_truncated_docx_is_unreadable() -> None:
    data = files.make_docx([(None, "hello " * 200)])

    with pytest.raises(UnreadableContent, match="not a Word document I can read") as caught:
        extract(data[: len(data) // 2], "cut.docx")
    assert caught.value.__cause__ is not None


def test_encrypted_office_file_is_unreadable() -> None:
    with pytest.raises(UnreadableContent, match="encrypted or in the old binary Office format"):
        extract(files.make_ole_file(), "secret.docx")


def test_old_binary_word_file_is_unsupported() -> None:
    with pytest.raises(UnsupportedContent, match=r"old binary Office format \(\.doc\)"):
        extract(files.make_ole_file(), "memo.doc")


# --- PowerPoint ---------------------------------------------------------------------------


def test_pptx_slides_become_sections_with_notes() -> None:
    data = files.make_pptx(
        [
            ("Roadmap", ["Q1: search", "Q2: ingestion"], "Mention the hiring plan"),
            (None, ["A slide without a title"], ""),
        ],
        author="Grace Hopper",
        modified=WHEN,
    )

    result = extract(data, "roadmap.pptx")

    assert result.mime_type == PPTX
    assert lines(result) == [
        "## Roadmap",
        "",
        "Q1: search",
        "Q2: ingestion",
        "Notes: Mention the hiring plan",
        "",
        "## Slide 2",
        "",
        "A slide without a title",
    ]
    assert result.title == "Roadmap"  # no core title: the first slide's
    assert (result.author, result.doc_timestamp) == ("Grace Hopper", WHEN)
    assert result.metadata["slides"] == "2"


def test_pptx_core_title_wins() -> None:
    data = files.make_pptx([("Agenda", ["Intro"], "")], title="All-hands March")

    assert extract(data, "deck.pptx").title == "All-hands March"


def test_pptx_without_text_is_empty_content() -> None:
    with pytest.raises(EmptyContent):
        extract(files.make_pptx([(None, [], ""), (None, [], "")]), "blank.pptx")


# --- PDF ----------------------------------------------------------------------------------


def test_pdf_pages_and_info_dict() -> None:
    data = files.make_pdf(
        [["Incident review", "The cache (Redis) filled up."], ["Action items"]],
        title="Postmortem 42",
        author="Margaret Hamilton",
        mod_date="D:20240305140000+02'00'",
    )

    result = extract(data, "postmortem.pdf")

    assert result.mime_type == "application/pdf"
    assert result.text == "Incident review\nThe cache (Redis) filled up.\n\nAction items"
    assert (result.title, result.author) == ("Postmortem 42", "Margaret Hamilton")
    assert result.doc_timestamp == WHEN  # 14:00 at +02:00, in UTC
    assert result.metadata["pages"] == "2"


def test_encrypted_pdf_is_refused_with_the_reason() -> None:
    data = files.make_pdf([["top secret"]], user_password="hunter2")

    with pytest.raises(UnreadableContent, match=r"encrypted \(password-protected\)"):
        extract(data, "secret.pdf")


def test_pdf_encrypted_with_an_empty_password_is_read() -> None:
    data = files.make_pdf([["open to all"]], user_password="", owner_password="owner")

    assert extract(data, "open.pdf").text == "open to all"


def test_truncated_pdf_is_unreadable() -> None:
    data = files.make_pdf([["line"] * 40] * 3)

    with pytest.raises(UnreadableContent, match="not a PDF I can read"):
        extract(data[: len(data) // 2], "cut.pdf")


def test_pdf_name_without_pdf_bytes_is_damaged() -> None:
    with pytest.raises(UnreadableContent, match=r"the file looks damaged"):
        extract(b"this was never a PDF", "report.pdf")


def test_pdf_header_after_junk_is_read_when_named_pdf() -> None:
    data = b"\r\n" + files.make_pdf([["after some junk"]])

    assert extract(data, "mail-attachment.pdf").text == "after some junk"
    assert detect_type(b"Every PDF starts with %PDF-1.7, says the spec.", "notes.txt") == "text/plain"


def test_scanned_pdf_without_text_layer() -> None:
    with pytest.raises(EmptyContent, match=r"no text layer \(a scanned PDF\?\)"):
        extract(files.make_pdf([[], []]), "scan.pdf")


# --- HTML ---------------------------------------------------------------------------------


def test_html_main_content_without_boilerplate() -> None:
    article = [
        "Our search service moved to the new cluster on Monday. " * 4,
        "Latency dropped by a third, and the <a href='/dash'>dashboard</a> shows it. " * 3,
    ]
    page = files.make_html_page(
        title="Search migration",
        heading="Search has moved",
        article=article,
        nav=("Home", "Pricing", "Careers"),
        footer="Copyright 2024 Example Corp. All rights reserved.",
        author="Linus",
        published="2024-03-05T12:00:00Z",
    )

    result = extract(page, "migration.html")

    assert result.mime_type == "text/html"
    assert "# Search has moved" in lines(result)
    assert "moved to the new cluster" in result.text
    assert "the dashboard shows it" in result.text  # link text kept, target dropped
    for boilerplate in ("Pricing", "Careers", "Copyright", "All rights reserved"):
        assert boilerplate not in result.text
    assert (result.title, result.author, result.doc_timestamp) == ("Search migration", "Linus", WHEN)
    assert result.metadata["lang"] == "en"


def test_html_title_from_title_element_and_tables() -> None:
    page = (
        b"<html><head><title>Runbook</title></head><body><article><h2>Owners</h2>"
        b"<p>Who to call when things break, and what they own in production.</p>"
        b"<table><tr><th>Service</th><th>Owner</th></tr><tr><td>billing</td><td>Ada</td></tr>"
        b"</table></article></body></html>"
    )

    result = extract(page, "runbook.htm")

    assert result.title == "Runbook"
    assert "## Owners" in lines(result)
    assert "Service" in result.text and "billing" in result.text


def test_html_falls_back_to_body_text() -> None:
    page = b"<html><body><aside>Call the platform team on #platform.</aside></body></html>"

    assert extract(page, "note.html").text == "Call the platform team on #platform."


def test_html_in_a_legacy_charset() -> None:
    page = (
        "<html><head><meta charset='windows-1252'></head><body><p>"
        + "Le café crème coûte trois euros à la cantine. " * 5
        + "</p></body></html>"
    ).encode("cp1252")

    assert "café crème coûte" in extract(page, "menu.html").text


def test_html_without_text_is_empty_content() -> None:
    with pytest.raises(EmptyContent):
        extract(b"<html><head><script>var x = 1;</script></head><body></body></html>", "x.html")


# --- Text, Markdown, code -----------------------------------------------------------------


def test_markdown_is_kept_and_titled_by_its_first_h1() -> None:
    source = "```sh\n# not a heading\n```\n\n# Release notes\n\n## 1.2\n\n- faster\r\n"

    result = extract(source.encode(), "NOTES.md")

    assert result.mime_type == "text/markdown"
    assert result.text == source.replace("\r\n", "\n")
    assert result.title == "Release notes"


def test_markdown_front_matter_title() -> None:
    source = b"---\ntitle: 'Style guide'\n---\n# Introduction\n"

    assert extract(source, "style.markdown").title == "Style guide"


def test_plain_text_charsets() -> None:
    latin = "Le garçon a mangé une crème brûlée.".encode("latin-1")
    utf16 = "Grüße aus München".encode("utf-16")
    bom8 = b"\xef\xbb\xbfhello"

    assert extract(latin, "a.txt").text == "Le garçon a mangé une crème brûlée."
    assert extract(utf16, "b.txt").text == "Grüße aus München"
    assert extract(bom8, "c.txt").text == "hello"


def test_source_code_keeps_text_and_language() -> None:
    code = b"def main() -> None:\n    print('hi')\n"

    result = extract(code, "tool.py", mime_type="text/plain")

    assert (result.text, result.mime_type) == (code.decode(), "text/x-python")
    assert result.metadata == {"language": "python"}
    assert extract(b"FROM python:3.11\n", "Dockerfile").metadata == {"language": "dockerfile"}
    assert extract(b"key: value\n", "config.yml").metadata == {"language": "yaml"}


def test_unknown_extension_with_text_is_plain_text() -> None:
    assert extract(b"just some notes", "notes.weird").mime_type == "text/plain"


# --- CSV and JSON -------------------------------------------------------------------------


def test_csv_as_a_header_line_then_a_line_a_row() -> None:
    data = files.make_csv([["name", "team", "note"], ["Ada", "core", "likes, commas"], ["Bob", "", "x"]])

    result = extract(data, "people.csv")

    assert lines(result) == ["name | team | note", "Ada | core | likes, commas", "Bob |  | x"]
    assert result.metadata == {"rows": "2", "columns": "3"}


def test_csv_dialect_is_sniffed_and_tsv_uses_tabs() -> None:
    semicolons = b"city;population\nLyon;522000\nNice;342000\n"
    tabs = files.make_csv([["a", "b"], ["1, still one", "2"]], delimiter="\t")

    assert lines(extract(semicolons, "cities.csv"))[:2] == ["city | population", "Lyon | 522000"]
    assert lines(extract(tabs, "t.tsv")) == ["a | b", "1, still one | 2"]


def test_csv_ragged_rows_blank_headers_and_line_breaks_in_cells() -> None:
    data = b'name,,\nAda,core\nBob,ops,extra,more\n,,\n"Eve","two\nlines"\n'

    assert lines(extract(data, "ragged.csv")) == [
        "name | column 2 | column 3 | column 4",
        "Ada | core",
        "Bob | ops | extra | more",
        "Eve | two lines",
    ]


def test_json_is_flattened_to_paths() -> None:
    document = {"service": {"name": "billing", "owners": ["ada", {"team": "core"}]}, "on": True}

    result = extract(json.dumps(document).encode(), "service.json")

    assert lines(result) == [
        "service.name: billing",
        "service.owners[0]: ada",
        "service.owners[1].team: core",
        "on: true",
    ]


def test_json_lines_records_are_separated() -> None:
    data = b'{"id": 1, "v": null}\n\n{"id": 2, "v": [], "w": 1.5}\n'

    result = extract(data, "events.jsonl")

    assert result.text == "id: 1\nv: null\n\nid: 2\nv: []\nw: 1.5"
    assert result.metadata == {"records": "2"}


def test_invalid_json_says_where() -> None:
    with pytest.raises(UnreadableContent, match=r"not valid JSON \(.* line 2, column 7\)"):
        extract(b'{"a": 1,\n "b": }', "broken.json")


def test_deeply_nested_json_is_unreadable_not_a_crash() -> None:
    with pytest.raises(UnreadableContent):
        extract(b"[" * 200_000 + b"]" * 200_000, "deep.json")


# --- Detection and refusals ---------------------------------------------------------------


def test_magic_bytes_beat_the_name_and_the_declared_type() -> None:
    pdf = files.make_pdf([["x"]])
    docx = files.make_docx([(None, "x")])
    pptx = files.make_pptx([("x", [], "")])

    assert detect_type(pdf, "report.txt", "text/plain") == "application/pdf"
    assert detect_type(docx, "upload.bin") == DOCX
    assert detect_type(pptx, "deck.docx", DOCX) == PPTX


def test_declared_type_then_extension() -> None:
    assert detect_type(b"a,b\n1,2\n", "export", "text/csv; charset=utf-8") == "text/csv"
    assert detect_type(b"print(1)", "x.py", "application/octet-stream") == "text/x-python"
    assert detect_type(b"<!DOCTYPE html><html></html>", "page") == "text/html"


@pytest.mark.parametrize(
    ("data", "name", "reason"),
    [
        (b"MZ\x90\x00\x03\x00\x00\x00\x04\x00", "setup.exe", "I can't read .exe files; I read"),
        (random.Random(7).randbytes(4096), "blob", "binary data"),
        (b"\x89PNG\r\n\x1a\n" + b"\x00" * 64, "diagram.txt", "I can't read images yet"),
        (files.make_zip({"a.txt": b"a"}), "notes.zip", "zip archive"),
        (files.make_zip({"xl/workbook.xml": b"<x/>"}), "budget.xlsx", "save the sheet as CSV"),
        (b"text with a \x00 NUL", "notes.txt", "binary data"),
    ],
)
def test_unsupported_content(data: bytes, name: str, reason: str) -> None:
    with pytest.raises(UnsupportedContent, match=reason):
        extract(data, name)


def test_supported_description_lists_the_types() -> None:
    for kind in ("text", "Markdown", "HTML", "PDF", "Word", "PowerPoint", "CSV", "JSON", "code"):
        assert kind in SUPPORTED_DESCRIPTION


def test_too_large_is_refused_before_parsing() -> None:
    with pytest.raises(TooLarge, match=r"it is 63 MB; the limit is 50 MB"):
        extract(b"\x00" * (63 * MB), "huge.txt")
    with pytest.raises(TooLarge, match=r"it is 1\.1 KB; the limit is 1 KB"):
        extract(b"%PDF-1.4 broken" + b" " * 1100, "small.pdf", max_bytes=1024)


def test_empty_and_whitespace_only_files_are_empty_content() -> None:
    for data in (b"", b" \n\t\r\n"):
        with pytest.raises(EmptyContent, match="it has no text in it"):
            extract(data, "empty.txt")


def test_extracted_is_a_frozen_value() -> None:
    result = extract(b"hello", "a.txt")

    with pytest.raises(dataclasses.FrozenInstanceError):
        result.text = "changed"  # type: ignore[misc]


# --- Decompression bombs ------------------------------------------------------------------


def test_zip_bomb_is_refused_quickly_and_without_inflating() -> None:
    bomb = files.make_zip_bomb_docx(member_mb=32)
    tracemalloc.start()
    started = time.perf_counter()
    try:
        with pytest.raises(UnreadableContent, match=r"a zip bomb\?"):
            extract(bomb, "bomb.docx")
        elapsed = time.perf_counter() - started
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert elapsed < 2
    assert peak < 10 * MB


def test_zip_with_too_many_members_is_refused() -> None:
    with pytest.raises(UnreadableContent, match=r"10,003 files"):
        extract(files.make_many_members_docx(10_001), "many.docx")


def test_total_expansion_limit() -> None:
    def member(size: int, compressed: int) -> zipfile.ZipInfo:
        info = zipfile.ZipInfo("word/part.xml")
        info.file_size, info.compress_size = size, compressed
        return info

    moderate = [member(100 * MB, 2 * MB)] * 3  # 50:1 each, 300 MB in all
    with pytest.raises(UnreadableContent, match="expands to far more"):
        check_expansion(moderate, 6 * MB, "big.docx")
    check_expansion(moderate, 20 * MB, "big.docx")  # 15x its size: a large real document


# --- No third-party exception escapes -----------------------------------------------------


@pytest.mark.parametrize("kind", ["docx", "pptx", "pdf"])
def test_corrupted_files_raise_only_ingest_errors(kind: str) -> None:
    original = {
        "docx": lambda: files.make_docx([(1, "Title"), (None, "body text " * 50)]),
        "pptx": lambda: files.make_pptx([("Title", ["body text"] * 5, "notes")]),
        "pdf": lambda: files.make_pdf([["body text"] * 20] * 2, title="T"),
    }[kind]()
    rng = random.Random(kind)
    for _ in range(25):
        data = bytearray(original)
        for _ in range(rng.randint(1, 20)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        with contextlib.suppress(IngestError):  # anything else fails the test
            extract(bytes(data), f"fuzzed.{kind}")
