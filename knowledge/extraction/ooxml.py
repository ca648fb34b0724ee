"""What Word and PowerPoint files share: the zip container's bomb checks, the errors their
parsers raise on damaged files, and the core properties (title, author, dates).

The bomb checks read only the central directory. Its declared sizes can be trusted as a
bound: zipfile stops a member's output at its declared size and fails the CRC if the data
says otherwise. python-docx and python-pptx parse XML with entity resolution off.
"""

from __future__ import annotations

import io
import struct
import zipfile
import zlib
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import lxml.etree  # type: ignore[import-untyped, unused-ignore]

from knowledge.errors import UnreadableContent
from knowledge.extraction.types import as_utc, clean

MB = 1024 * 1024
# Zip-bomb bounds, far above any real document's: members, the whole's and a member's inflation
# (a member under MEMBER_FLOOR is never refused; the whole may reach TOTAL_HARD_CAP however small).
MAX_MEMBERS = 10_000
TOTAL_RATIO = 20
TOTAL_HARD_CAP = 200 * MB
MEMBER_RATIO = 100
MEMBER_FLOOR = 10 * MB

_BOMB = "it expands to far more than its size (a zip bomb?)"

OOXML_ERRORS = (
    zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, NotImplementedError, RuntimeError,
    lxml.etree.LxmlError, KeyError, ValueError, TypeError, AttributeError, IndexError,
    OSError, EOFError, struct.error,
)  # fmt: skip
"""What python-docx and python-pptx raise, unwrapped, on a damaged package (zipfile raises
zlib.error for corrupt deflate data, NotImplementedError for unknown compression methods and
RuntimeError for encrypted members)."""


def check_zip(data: bytes, name: str, kind: str) -> None:
    """Raise UnreadableContent when `data` is not a readable zip or would expand too far.

    `kind` names the expected document for the damaged-file message ('a Word document').
    """
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = archive.infolist()
    except OOXML_ERRORS as exc:
        reason = f"it is not {kind} I can read (the file looks damaged)"
        raise UnreadableContent(name, reason) from exc
    check_expansion(members, len(data), name)


def check_expansion(members: Sequence[zipfile.ZipInfo], size: int, name: str) -> None:
    """Refuse a zip of `size` bytes whose `members` are too many or expand too far.

    Too far means: the total exceeds both 20x the file's size and 200 MB, or one member
    over 10 MB is compressed more than 100:1.
    """
    if len(members) > MAX_MEMBERS:
        reason = f"it holds {len(members):,} files, far more than a document needs (a zip bomb?)"
        raise UnreadableContent(name, reason)
    total = sum(member.file_size for member in members)
    if total > max(TOTAL_RATIO * size, TOTAL_HARD_CAP):
        raise UnreadableContent(name, _BOMB)
    for member in members:
        ratio_limit = MEMBER_RATIO * max(member.compress_size, 1)
        if member.file_size > MEMBER_FLOOR and member.file_size > ratio_limit:
            raise UnreadableContent(name, _BOMB)


def core_properties(properties: Any) -> tuple[str | None, str | None, datetime | None]:
    """Title, author and modified (else created) time from a docx/pptx CoreProperties.

    An unparseable date counts as absent rather than making the document unreadable.
    """
    try:
        stamp = properties.modified or properties.created
    except (ValueError, TypeError):
        stamp = None
    return clean(properties.title), clean(properties.author), as_utc(stamp)
