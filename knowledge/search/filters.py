"""Metadata filters on documents: equality, `$in`, `$and`/`$or`, and the hierarchical
document-context filter.

A filter is a mapping like `{"author": "ada", "mime_type": {"$in": [...]},
"$or": [{...}, {...}]}`. Fields are the standard metadata (name, url, author, mime_type,
source_kind …) and any caller metadata; on list-valued fields (the context labels)
equality means "contains".

The context filter (`ContextFilter`) asks that a document match at least one *primary*
label (context_type or content_domain); documents matching more *secondary* labels
(document_category, relevance_tags) rank higher. If no document matches a primary label,
any document matching a secondary label qualifies.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from knowledge.indexing.metadata import PRIMARY_FIELDS, SECONDARY_FIELDS, normalise_labels
from storage.records import DocumentRef

Filter = Mapping[str, Any]
MAX_DEPTH = 16
"""`$and` / `$or` inside one another, at most (deeper is a `FilterError`, not a RecursionError)."""


class FilterError(ValueError):
    """The filter is malformed; the message says where."""


def document_fields(document: DocumentRef) -> dict[str, Any]:
    """Everything a filter may test on a document."""
    return {
        **document.meta,
        "name": document.name,
        "url": document.url,
        "author": document.author,
        "mime_type": document.mime_type,
        "source_kind": str(document.source_kind),
        "doc_id": document.id,
    }


def matches(fields: Mapping[str, Any], condition: Filter, depth: int = 0) -> bool:
    """True when the document's fields satisfy the filter (`FilterError` if it is malformed
    or nests `$and`/`$or` more than `MAX_DEPTH` deep)."""
    if depth >= MAX_DEPTH:
        raise FilterError(f"$and and $or nest at most {MAX_DEPTH} levels deep")
    for key, expected in condition.items():
        if key == "$and":
            if not all(matches(fields, part, depth + 1) for part in _parts(key, expected)):
                return False
        elif key == "$or":
            if not any(matches(fields, part, depth + 1) for part in _parts(key, expected)):
                return False
        elif not _field_matches(fields.get(key), expected, key):
            return False
    return True


@dataclass(frozen=True)
class ContextFilter:
    primary: Mapping[str, tuple[str, ...]]
    secondary: Mapping[str, tuple[str, ...]]

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> ContextFilter:
        return cls(
            primary={f: normalise_labels(values.get(f)) for f in PRIMARY_FIELDS if values.get(f)},
            secondary={f: normalise_labels(values.get(f)) for f in SECONDARY_FIELDS if values.get(f)},
        )

    @property
    def empty(self) -> bool:
        return not self.primary and not self.secondary

    def select(self, documents: Iterable[DocumentRef]) -> dict[int, int]:
        """Qualifying document ids, each with its count of secondary labels matched."""
        docs = list(documents)
        if self.primary:
            chosen = {d.id: _overlap(d, self.secondary) for d in docs if _overlap(d, self.primary)}
            if chosen:
                return chosen
        return {d.id: n for d in docs if (n := _overlap(d, self.secondary))}


def _overlap(document: DocumentRef, wanted: Mapping[str, tuple[str, ...]]) -> int:
    total = 0
    for name, labels in wanted.items():
        have = set(normalise_labels(document.meta.get(name) or ()))
        total += len(have.intersection(labels))
    return total


def _parts(key: str, value: Any) -> list[Filter]:
    if not isinstance(value, list) or not all(isinstance(p, Mapping) for p in value):
        raise FilterError(f"{key} takes a list of filters")
    return value


def _field_matches(actual: Any, expected: Any, key: str) -> bool:
    if isinstance(expected, Mapping):
        if set(expected) - {"$in", "$eq", "$ne", "$nin"}:
            raise FilterError(f"{key}: unknown operator in {sorted(expected)}")
        if "$eq" in expected and not _equal(actual, expected["$eq"]):
            return False
        if "$ne" in expected and _equal(actual, expected["$ne"]):
            return False
        if "$in" in expected and not any(_equal(actual, v) for v in _list(key, expected["$in"])):
            return False
        return not ("$nin" in expected and any(_equal(actual, v) for v in _list(key, expected["$nin"])))
    return _equal(actual, expected)


def _equal(actual: Any, expected: Any) -> bool:
    if isinstance(actual, list | tuple):
        return any(_equal(item, expected) for item in actual)
    if isinstance(actual, str) and isinstance(expected, str):
        return actual.lower() == expected.lower()
    return bool(actual == expected)


def _list(key: str, value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise FilterError(f"{key}: $in and $nin take a list")
    return value
