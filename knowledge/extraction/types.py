"""The value every extractor returns, and the date normalisation they share."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime

_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class Extracted:
    """The text of one document and what the document says about itself.

    `text` is Markdown-flavoured plain text: headings are '#'..'######' lines, so a chunker can
    derive heading paths. `doc_timestamp`, when known, is timezone-aware UTC. `metadata` holds
    extra string facts worth keeping (e.g. 'pages', 'slides', 'rows', 'language').
    """

    text: str
    mime_type: str
    title: str | None = None
    author: str | None = None
    doc_timestamp: datetime | None = None
    metadata: dict[str, str] = field(default_factory=dict)


def as_utc(value: object) -> datetime | None:
    """`value` as an aware UTC datetime; naive datetimes are taken to be UTC already.

    Anything that is not a datetime (None, a string a parser left unparsed) gives None.
    """
    if not isinstance(value, datetime):
        return None
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def parse_iso_date(text: str | None) -> datetime | None:
    """An ISO 8601 date or date-time as aware UTC, or None when `text` is not one."""
    if not text:
        return None
    try:
        return as_utc(datetime.fromisoformat(text.strip()))
    except ValueError:
        return None


def clean(value: object) -> str | None:
    """A metadata string stripped of surrounding whitespace, or None when blank or absent."""
    if value is None:
        return None
    text = str(value).strip()
    return text or None


def without_surrogates(text: str) -> str:
    """`text` with each lone surrogate (a JSON escape cut out of an emoji pair, a file name
    in an unknown encoding) replaced by U+FFFD, so it can be encoded as UTF-8; else `text`."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)
    return text
