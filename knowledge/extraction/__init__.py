"""Turning an uploaded file's bytes into Markdown-flavoured text and document metadata.

    extract(data, name, mime_type=..., max_bytes=...) -> Extracted
    detect_type(data, name, mime_type=None) -> str
    SUPPORTED_DESCRIPTION

Failures are `knowledge.errors.IngestError`s: TooLarge, UnsupportedContent,
UnreadableContent, EmptyContent. No other exception leaves `extract` except MemoryError and
KeyboardInterrupt.
"""

from knowledge.extraction.core import DEFAULT_MAX_BYTES, extract
from knowledge.extraction.detect import detect_type
from knowledge.extraction.formats import SUPPORTED_DESCRIPTION
from knowledge.extraction.types import Extracted

__all__ = ["DEFAULT_MAX_BYTES", "SUPPORTED_DESCRIPTION", "Extracted", "detect_type", "extract"]
