"""Generators for test documents of every type the extractor reads.

Every file is built at test time from code, so no binary fixture is committed: DOCX and PPTX
through python-docx and python-pptx, PDF by hand (a minimal page tree with a Helvetica font
and BT/Tj text) passed through pypdf for metadata and encryption, zip bombs with zipfile.
"""

from __future__ import annotations

import csv
import io
import zipfile
from collections.abc import Sequence
from datetime import datetime

import docx
import pptx
from pypdf import PdfReader, PdfWriter

HeadingLevel = int | None
"""None for a body paragraph, 0 for the 'Title' style, 1-9 for 'Heading N'."""


def make_docx(
    blocks: Sequence[tuple[HeadingLevel, str]] = (),
    *,
    bullets: Sequence[str] = (),
    table: Sequence[Sequence[str]] = (),
    title: str = "",
    author: str = "",
    modified: datetime | None = None,
) -> bytes:
    """A DOCX with `blocks` (heading level or None, text), then `bullets`, then `table`."""
    document = docx.Document()
    for level, text in blocks:
        if level is None:
            document.add_paragraph(text)
        else:
            document.add_heading(text, level)
    for text in bullets:
        document.add_paragraph(text, style="List Bullet")
    if table:
        grid = document.add_table(rows=len(table), cols=len(table[0]))
        for row, values in zip(grid.rows, table, strict=True):
            for cell, value in zip(row.cells, values, strict=True):
                cell.text = value
    properties = document.core_properties
    properties.title = title
    properties.author = author
    if modified is not None:
        properties.modified = modified
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def make_pptx(
    slides: Sequence[tuple[str | None, Sequence[str], str]],
    *,
    title: str = "",
    author: str = "",
    modified: datetime | None = None,
) -> bytes:
    """A PPTX with one slide per (title or None, body paragraphs, speaker notes or '')."""
    presentation = pptx.Presentation()
    for slide_title, body, notes in slides:
        layout = presentation.slide_layouts[1 if slide_title is not None else 6]
        slide = presentation.slides.add_slide(layout)
        if slide_title is not None:
            slide.shapes.title.text = slide_title
            slide.placeholders[1].text = "\n".join(body)
        else:
            box = slide.shapes.add_textbox(0, 0, 914400, 914400)
            box.text_frame.text = "\n".join(body)
        if notes:
            slide.notes_slide.notes_text_frame.text = notes
    properties = presentation.core_properties
    properties.title = title
    properties.author = author
    if modified is not None:
        properties.modified = modified
    buffer = io.BytesIO()
    presentation.save(buffer)
    return buffer.getvalue()


def make_pdf(
    text_pages: Sequence[Sequence[str]],
    *,
    title: str | None = None,
    author: str | None = None,
    mod_date: str | None = None,
    user_password: str | None = None,
    owner_password: str | None = None,
) -> bytes:
    """A PDF with one page per list of lines; metadata and RC4 encryption added by pypdf.

    `mod_date` is a PDF date string such as "D:20240305120000Z". Encryption happens when
    `user_password` is given ("" gives a file that opens without a password).
    """
    raw = _raw_pdf(text_pages)
    if title is None and author is None and mod_date is None and user_password is None:
        return raw
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(raw)))
    info = {"/Title": title, "/Author": author, "/ModDate": mod_date}
    writer.add_metadata({key: value for key, value in info.items() if value is not None})
    if user_password is not None:
        writer.encrypt(user_password, owner_password, algorithm="RC4-128")
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def _raw_pdf(text_pages: Sequence[Sequence[str]]) -> bytes:
    """A minimal, valid PDF 1.4 built by hand: catalog, page tree, font, one stream a page."""
    page_count = len(text_pages)
    font_id = 3
    page_ids = [4 + 2 * index for index in range(page_count)]
    kids = " ".join(f"{page_id} 0 R" for page_id in page_ids)
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {page_count} >>".encode(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
    ]
    for page_id, lines in zip(page_ids, text_pages, strict=True):
        stream = _content_stream(lines)
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            f"/Resources << /Font << /F1 {font_id} 0 R >> >> "
            f"/Contents {page_id + 1} 0 R >>".encode()
        )
        objects.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream))
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref_at = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref_at,
    )
    return bytes(out)


def _content_stream(lines: Sequence[str]) -> bytes:
    shown = b" T* ".join(b"(%s) Tj" % _pdf_string(line) for line in lines)
    return b"BT /F1 12 Tf 14 TL 72 720 Td " + shown + b" ET"


def _pdf_string(text: str) -> bytes:
    escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
    return escaped.encode("cp1252")


def make_html_page(
    *,
    title: str,
    article: Sequence[str],
    heading: str,
    nav: Sequence[str] = ("Home", "Pricing", "Careers"),
    footer: str = "Copyright 2024 Example Corp. All rights reserved.",
    author: str | None = None,
    published: str | None = None,
) -> bytes:
    """A page with header/nav/footer boilerplate around an <article> of `article` paragraphs."""
    meta = [f'<meta property="og:title" content="{title}">']
    if author is not None:
        meta.append(f'<meta name="author" content="{author}">')
    if published is not None:
        meta.append(f'<meta property="article:published_time" content="{published}">')
    links = "".join(f'<li><a href="/{item.lower()}">{item}</a></li>' for item in nav)
    paragraphs = "".join(f"<p>{text}</p>" for text in article)
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{title} | Example Corp</title>{''.join(meta)}</head><body>"
        f"<header><nav><ul>{links}</ul></nav></header>"
        f"<main><article><h1>{heading}</h1>{paragraphs}</article></main>"
        f"<footer><p>{footer}</p></footer></body></html>"
    ).encode()


def make_csv(rows: Sequence[Sequence[str]], delimiter: str = ",") -> bytes:
    """Rows joined by `delimiter`, quoting cells that need it, CRLF line ends as Excel does."""
    buffer = io.StringIO()
    csv.writer(buffer, delimiter=delimiter).writerows(rows)
    return buffer.getvalue().encode()


def make_zip_bomb_docx(member_mb: int = 64) -> bytes:
    """A DOCX-shaped zip whose word/document.xml is `member_mb` MB of one repeated byte.

    Deflate squeezes it about 1000:1, so the file is tens of kilobytes.
    """
    chunk = b" " * (1024 * 1024)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", _CONTENT_TYPES)
        with archive.open("word/document.xml", "w", force_zip64=True) as member:
            for _ in range(member_mb):
                member.write(chunk)
    return buffer.getvalue()


def make_many_members_docx(count: int = 10_001) -> bytes:
    """A DOCX-shaped zip with `count` tiny members (an inode/CPU bomb rather than a size bomb)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("[Content_Types].xml", _CONTENT_TYPES)
        archive.writestr("word/document.xml", b"<w:document/>")
        for index in range(count):
            archive.writestr(f"word/media/x{index}.bin", b"")
    return buffer.getvalue()


def make_zip(members: dict[str, bytes]) -> bytes:
    """A plain zip archive holding `members`."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def make_ole_file() -> bytes:
    """The first sector of an OLE compound file: what an encrypted .docx or a .doc starts with."""
    header = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 16 + b"\x3e\x00\x03\x00\xfe\xff"
    return header + b"\x00" * (512 - len(header)) + b"EncryptionInfo".ljust(512, b"\x00")


_CONTENT_TYPES = (
    '<?xml version="1.0" encoding="UTF-8"?>'
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="xml" ContentType="application/xml"/></Types>'
)


def make_epub(chapters: Sequence[tuple[str, Sequence[str]]], *, title: str, author: str) -> bytes:
    """An EPUB 3 book: one XHTML file a (heading, paragraphs) chapter, in spine order."""
    manifest = "".join(
        f'<item id="c{n}" href="text/c{n}.xhtml" media-type="application/xhtml+xml"/>'
        for n in range(len(chapters))
    )
    spine = "".join(f'<itemref idref="c{n}"/>' for n in range(len(chapters)))
    members = {
        "mimetype": b"application/epub+zip",
        "META-INF/container.xml": b'<?xml version="1.0"?><container version="1.0" '
        b'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
        b'<rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
        b"</rootfiles></container>",
        "OEBPS/content.opf": (
            '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
            '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/">'
            f"<dc:title>{title}</dc:title><dc:creator>{author}</dc:creator></metadata>"
            f"<manifest>{manifest}</manifest><spine>{spine}</spine></package>"
        ).encode(),
    }
    for n, (heading, paragraphs) in enumerate(chapters):
        body = "".join(f"<p>{p}</p>" for p in paragraphs)
        members[f"OEBPS/text/c{n}.xhtml"] = (
            '<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml">'
            f"<head><title>{heading}</title></head><body><h1>{heading}</h1>{body}</body></html>"
        ).encode()
    return make_zip(members)


def make_odt(blocks: Sequence[tuple[int | None, str]], *, title: str) -> bytes:
    """An OpenDocument text: (outline level or None for a paragraph, text) blocks."""
    office = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
    text_ns = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
    body = "".join(
        f'<text:h text:outline-level="{level}">{text}</text:h>' if level else f"<text:p>{text}</text:p>"
        for level, text in blocks
    )
    return make_zip(
        {
            "mimetype": b"application/vnd.oasis.opendocument.text",
            "content.xml": (
                f'<?xml version="1.0"?><office:document-content xmlns:office="{office}" '
                f'xmlns:text="{text_ns}"><office:body><office:text>{body}</office:text>'
                "</office:body></office:document-content>"
            ).encode(),
            "meta.xml": (
                f'<?xml version="1.0"?><office:document-meta xmlns:office="{office}" '
                'xmlns:dc="http://purl.org/dc/elements/1.1/"><office:meta>'
                f"<dc:title>{title}</dc:title></office:meta></office:document-meta>"
            ).encode(),
        }
    )
