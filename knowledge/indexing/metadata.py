"""Document metadata that callers supply: the document-context fields and free-form keys."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

CONTEXT_LIST_FIELDS = ("context_type", "content_domain", "document_category", "relevance_tags")
PRIMARY_FIELDS = ("context_type", "content_domain")
SECONDARY_FIELDS = ("document_category", "relevance_tags")
MetadataValue = str | int | float | bool
SECTION_URLS = "section_urls"
"""A document's metadata key for the links to its parts, by heading (`DocumentFacts.anchors`)."""


def normalise_labels(values: str | Iterable[str] | None) -> tuple[str, ...]:
    """Lower-cased, stripped, de-duplicated labels; empty ones dropped. A string may hold
    several labels separated by commas."""
    if values is None:
        return ()
    items = values.split(",") if isinstance(values, str) else values
    seen: dict[str, None] = {}
    for item in items:
        label = str(item).strip().lower()
        if label:
            seen.setdefault(label, None)
    return tuple(seen)


@dataclass(frozen=True)
class DocumentContext:
    """What a document is about, for hierarchical filtering (see `knowledge.search.filters`)."""

    context_type: tuple[str, ...] = ()
    content_domain: tuple[str, ...] = ()
    document_category: tuple[str, ...] = ()
    relevance_tags: tuple[str, ...] = ()
    description: str = ""

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> DocumentContext:
        labels = {name: normalise_labels(values.get(name)) for name in CONTEXT_LIST_FIELDS}
        return cls(**labels, description=str(values.get("description") or "").strip())

    def as_metadata(self) -> dict[str, Any]:
        """The fields as stored in a document's metadata (lists, and the description)."""
        stored: dict[str, Any] = {name: list(getattr(self, name)) for name in CONTEXT_LIST_FIELDS}
        if self.description:
            stored["description"] = self.description
        return stored


@dataclass(frozen=True)
class DocumentFacts:
    """Caller-supplied facts about a document that override what extraction found."""

    title: str | None = None
    author: str | None = None
    url: str | None = None
    external_id: str | None = None
    context: DocumentContext = field(default_factory=DocumentContext)
    extra: Mapping[str, MetadataValue] = field(default_factory=dict)
    timestamp: datetime | None = None
    """When the document itself last changed (a wiki page's last edit), over what extraction finds."""
    path: tuple[str, ...] = ()
    """Where the document sits, outermost first (a wiki page's ancestors): its passages'
    heading paths start there, so "Runbooks > Deploy > Rollback" is found and cited as such."""
    anchors: Mapping[str, str] = field(default_factory=dict)
    """Links to parts of the document by their heading (an issue's comments, each with its
    own address): a passage under one is cited with its link rather than the document's."""


def section_url(meta: Mapping[str, Any], heading: str) -> str | None:
    """The link a document's metadata gives the part under `heading` (the heading a passage
    stands under, maybe cut short in its prefix), if any."""
    links = meta.get(SECTION_URLS)
    if not heading or not isinstance(links, Mapping):
        return None
    found = links.get(heading)
    if found is None and heading.endswith("…"):
        stem = heading.removesuffix("…").rstrip()
        matching = [url for name, url in links.items() if str(name).startswith(stem)]
        found = matching[0] if len(matching) == 1 else None
    return str(found) if isinstance(found, str) and found else None
