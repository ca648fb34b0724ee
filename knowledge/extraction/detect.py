"""Deciding what a file is: magic bytes first, then the declared MIME type, then the name.

`detect_type` returns one of the supported types from `formats` or raises:
`UnsupportedContent` for anything Lore does not read (images, archives, programs, binary
data), and `UnreadableContent` for an OLE compound file dressed as a .docx/.pptx, which is
what Office makes of a password-protected document (or a renamed old .doc/.ppt).
"""

from __future__ import annotations

import io
import zipfile
from typing import NoReturn

from knowledge.errors import UnreadableContent, UnsupportedContent
from knowledge.extraction import formats
from knowledge.extraction.ooxml import OOXML_ERRORS

# A PDF may have junk before its header; the PDF extractor accepts that, but here only a
# header at offset 0 overrides the name, so a text file that mentions "%PDF-" stays text.
_PDF_MAGIC = b"%PDF-"
_ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_SNIFF_BYTES = 8192  # every signature and a text's first lines lie in the first 8 KB
_BOMS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")

_IMAGES = "and I can't read images yet"
_ARCHIVE = "unpack it and send me the files inside"
_MEDIA = "and I can't read audio or video"
_SIGNATURES: tuple[tuple[int, bytes, str], ...] = (
    (0, b"\x89PNG\r\n\x1a\n", f"it is an image (PNG), {_IMAGES}"),
    (0, b"\xff\xd8\xff", f"it is an image (JPEG), {_IMAGES}"),
    (0, b"GIF87a", f"it is an image (GIF), {_IMAGES}"),
    (0, b"GIF89a", f"it is an image (GIF), {_IMAGES}"),
    (8, b"WEBP", f"it is an image (WebP), {_IMAGES}"),
    (0, b"II*\x00", f"it is an image (TIFF), {_IMAGES}"),
    (0, b"MM\x00*", f"it is an image (TIFF), {_IMAGES}"),
    (4, b"ftypheic", f"it is an image (HEIC), {_IMAGES}"),
    (4, b"ftyp", f"it is a video or audio file, {_MEDIA}"),
    (0, b"ID3\x03", f"it is an audio file (MP3), {_MEDIA}"),
    (0, b"ID3\x04", f"it is an audio file (MP3), {_MEDIA}"),
    (0, b"OggS", f"it is an audio or video file (Ogg), {_MEDIA}"),
    (0, b"fLaC", f"it is an audio file (FLAC), {_MEDIA}"),
    (0, b"\x1f\x8b", f"it is a compressed file (gzip); {_ARCHIVE}"),
    (0, b"7z\xbc\xaf\x27\x1c", f"it is a compressed archive (7-Zip); {_ARCHIVE}"),
    (0, b"Rar!\x1a\x07", f"it is a compressed archive (RAR); {_ARCHIVE}"),
    (0, b"\xfd7zXZ\x00", f"it is a compressed file (xz); {_ARCHIVE}"),
    (0, b"\x28\xb5\x2f\xfd", f"it is a compressed file (zstd); {_ARCHIVE}"),
    (0, b"\x7fELF", "it is a program, not a document"),
    (0, b"\xcf\xfa\xed\xfe", "it is a program, not a document"),
    (0, b"\xca\xfe\xba\xbe", "it is a compiled program, not a document"),
    (0, b"\x00asm", "it is a compiled program, not a document"),
    (0, b"SQLite format 3\x00", "it is a database file; export what you need as CSV"),
    (0, b"{\\rtf", "it is an RTF document, which I can't read yet; save it as .docx or PDF"),
)


def detect_type(data: bytes, name: str, mime_type: str | None = None) -> str:
    """The supported MIME type of `data`, judged by magic bytes, then `mime_type`, then `name`.

    Raises UnsupportedContent for types Lore does not read and UnreadableContent for an
    encrypted or old binary Office file given as .docx/.pptx. Reads no more than the first
    few kilobytes, plus a zip's central directory.
    """
    by_magic = _type_from_magic(data, name, mime_type)
    if by_magic is not None:
        return by_magic
    declared = formats.type_from_mime(mime_type)
    by_name = formats.type_from_name(name)
    if declared is not None and not (declared == formats.TEXT and by_name is not None):
        return declared
    if by_name is not None:
        return by_name
    return _sniff(data, name)


def _type_from_magic(data: bytes, name: str, mime_type: str | None) -> str | None:
    if data.startswith(_PDF_MAGIC):
        return formats.PDF
    if data.startswith(_ZIP_MAGICS):
        return _zip_type(data, name, mime_type)
    if data.startswith(_OLE_MAGIC):
        _refuse_ole(name, mime_type)
    for offset, signature, reason in _SIGNATURES:
        if data.startswith(signature, offset):
            raise UnsupportedContent(name, reason)
    return None


_PACKAGE_TYPES = {  # the 'mimetype' member of EPUB and OpenDocument packages
    formats.EPUB: formats.EPUB,
    formats.ODT: formats.ODT,
    formats.ODP: formats.ODP,
    "application/vnd.oasis.opendocument.text-template": formats.ODT,
    "application/vnd.oasis.opendocument.presentation-template": formats.ODP,
}
_PACKAGE_REFUSALS = {
    "application/vnd.oasis.opendocument.spreadsheet": (
        "it is an OpenDocument spreadsheet, which I can't read yet; save the sheet as CSV"
    ),
    "application/vnd.oasis.opendocument.graphics": "it is an OpenDocument drawing, which I can't read; export it as PDF",
}


def _zip_type(data: bytes, name: str, mime_type: str | None) -> str | None:
    """DOCX, PPTX, EPUB or OpenDocument by the parts inside; None for a damaged zip, so the
    name decides."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = frozenset(archive.namelist())
            package = (
                archive.read("mimetype")[:100].decode("ascii", "replace").strip()
                if "mimetype" in members
                else ""
            )
    except OOXML_ERRORS:
        return None
    if package in _PACKAGE_TYPES:
        return _PACKAGE_TYPES[package]
    if package in _PACKAGE_REFUSALS:
        raise UnsupportedContent(name, _PACKAGE_REFUSALS[package])
    if any(member.endswith((".fdseq", ".fpage")) for member in members):
        raise UnsupportedContent(
            name, "it is an XPS document, which I can't read; print it to PDF and send me that"
        )
    if "word/document.xml" in members:
        return formats.DOCX
    if "ppt/presentation.xml" in members:
        return formats.PPTX
    if "xl/workbook.xml" in members:
        raise UnsupportedContent(
            name, "it is an Excel workbook, which I can't read yet; save the sheet as CSV"
        )
    claimed = formats.type_from_mime(mime_type) or formats.type_from_name(name)
    if claimed in (formats.DOCX, formats.PPTX):
        kind = formats.describe(claimed)
        raise UnreadableContent(name, f"it is not {kind} I can read (the file looks damaged)")
    raise UnsupportedContent(name, f"it is a zip archive; {_ARCHIVE}")


def _refuse_ole(name: str, mime_type: str | None) -> NoReturn:
    extension = formats.extension_of(name)
    claimed = formats.type_from_mime(mime_type)
    if extension in formats.OOXML_EXTENSIONS or claimed in (formats.DOCX, formats.PPTX):
        raise UnreadableContent(
            name,
            "it is encrypted or in the old binary Office format; remove the password "
            "(or save it as .docx/.pptx) and send it again",
        )
    if extension in formats.LEGACY_OFFICE_EXTENSIONS:
        raise UnsupportedContent(
            name,
            f"it is in the old binary Office format (.{extension}); "
            "save it as .docx, .pptx or PDF and send it again",
        )
    raise UnsupportedContent(
        name, "it is an old binary Office or Outlook file; save it as .docx, .pptx or PDF"
    )


def _sniff(data: bytes, name: str) -> str:
    """Text or HTML for text-looking content with an unknown name; binary is refused."""
    head = data[:_SNIFF_BYTES]
    if b"\x00" in head and not head.startswith(_BOMS):
        raise UnsupportedContent(name, _unsupported_reason(name))
    start = head.lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if start.startswith((b"<!doctype html", b"<html")):
        return formats.HTML
    return formats.TEXT


def _unsupported_reason(name: str) -> str:
    """The refusal for binary content that is none of the supported types."""
    extension = formats.extension_of(name)
    if extension:
        return f"I can't read .{extension} files; I read {formats.SUPPORTED}"
    return f"it looks like binary data, not text; I read {formats.SUPPORTED}"
