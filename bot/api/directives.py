"""Directives for `/enhanced-chat/completions`, read from the system message.

Either keyword lines anywhere in a system (or developer) message:

    RESPONSE_MODE: HYBRID
    DOCUMENT_CONTEXT: technical, api_docs
    CONTENT_DOMAINS: api_documentation
    DOCUMENT_CATEGORIES: user_guide
    MIN_CONFIDENCE: 0.7
    FALLBACK_STRATEGY: llm_knowledge

or the same keys inside a `<config>…</config>` block. When a block is present it wins: the
keyword lines outside it are ignored (and a warning says so). Invalid values keep the
default and become warnings. Directive lines and the block are removed from the message
before it reaches the model.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from knowledge import FallbackStrategy, ResponseMode, normalise_labels

KEYS = (
    "RESPONSE_MODE",
    "DOCUMENT_CONTEXT",
    "CONTENT_DOMAINS",
    "DOCUMENT_CATEGORIES",
    "MIN_CONFIDENCE",
    "FALLBACK_STRATEGY",
)
LINE = re.compile(rf"^[ \t]*({'|'.join(KEYS)})[ \t]*:[ \t]*(.*?)[ \t]*$", re.IGNORECASE | re.MULTILINE)
WHOLE_LINE = re.compile(LINE.pattern + r"\n?", LINE.flags)
BLOCK = re.compile(r"<config>(.*?)</config>", re.IGNORECASE | re.DOTALL)
BLOCK_LINE = re.compile(r"^[ \t]*([A-Za-z_]+)[ \t]*:[ \t]*(.*?)[ \t]*$")
SYSTEM_ROLES = ("system", "developer")


@dataclass(frozen=True)
class Directives:
    response_mode: ResponseMode | None = None
    document_context: tuple[str, ...] = ()
    content_domains: tuple[str, ...] = ()
    document_categories: tuple[str, ...] = ()
    min_confidence: float | None = None
    fallback_strategy: FallbackStrategy | None = None
    warnings: tuple[str, ...] = field(default_factory=tuple)

    def context_filter(self) -> dict[str, list[str]]:
        """The hierarchical document-context filter these directives ask for."""
        wanted = {
            "context_type": self.document_context,
            "content_domain": self.content_domains,
            "document_category": self.document_categories,
        }
        return {name: list(values) for name, values in wanted.items() if values}


def read_directives(messages: Sequence[dict[str, Any]]) -> tuple[Directives, list[dict[str, Any]]]:
    """The directives in the system messages, and the messages with them removed (a system
    message left empty is dropped)."""
    directives = Directives()
    cleaned: list[dict[str, Any]] = []
    for message in messages:
        content = message.get("content")
        if message.get("role") not in SYSTEM_ROLES or not isinstance(content, str):
            cleaned.append(message)
            continue
        directives, rest = _read(content, directives)
        if rest:
            cleaned.append({**message, "content": rest})
    return directives, cleaned


def _read(text: str, directives: Directives) -> tuple[Directives, str]:
    blocks = BLOCK.findall(text)
    outside = BLOCK.sub("", text)
    lines = [(m.group(1), m.group(2)) for m in LINE.finditer(outside)]
    rest = _tidy(WHOLE_LINE.sub("", outside))
    warnings = list(directives.warnings)
    if blocks:
        if lines:
            ignored = ", ".join(key.upper() for key, _ in lines)
            warnings.append(f"{ignored} outside <config> ignored: the <config> block wins.")
        lines = []
        for block in blocks:
            for raw in block.splitlines():
                if not raw.strip():
                    continue
                found = BLOCK_LINE.match(raw)
                if found is None or found.group(1).upper() not in KEYS:
                    warnings.append(f"Unknown line in <config> ignored: {raw.strip()[:80]!r}.")
                    continue
                lines.append((found.group(1), found.group(2)))
    for key, value in lines:
        directives = _apply(directives, key.upper(), value, warnings)
    return replace(directives, warnings=tuple(warnings)), rest


def _apply(directives: Directives, key: str, value: str, warnings: list[str]) -> Directives:
    if key in ("DOCUMENT_CONTEXT", "CONTENT_DOMAINS", "DOCUMENT_CATEGORIES"):
        labels = normalise_labels(value)
        if not labels:
            warnings.append(f"{key} has no values; ignored.")
            return directives
        if key == "DOCUMENT_CONTEXT":
            return replace(directives, document_context=labels)
        if key == "CONTENT_DOMAINS":
            return replace(directives, content_domains=labels)
        return replace(directives, document_categories=labels)
    try:
        if key == "RESPONSE_MODE":
            return replace(directives, response_mode=ResponseMode.parse(value))
        if key == "FALLBACK_STRATEGY":
            return replace(directives, fallback_strategy=FallbackStrategy.parse(value))
        return replace(directives, min_confidence=_confidence(value))
    except ValueError as exc:
        warnings.append(f"{key}: {exc}; the default is kept.")
        return directives


def _confidence(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise ValueError(f"{value!r} is not a number between 0 and 1") from None
    if not 0.0 <= number <= 1.0:
        raise ValueError(f"{value} is not between 0 and 1")
    return number


def _tidy(text: str) -> str:
    """The message without the blank lines the removed directives leave behind."""
    return re.sub(r"\n{3,}", "\n\n", text).strip()
