"""Small readers of Notion's JSON and the values shared by the listing (`notion_listing.py`),
the reading of pages (`notion_pages.py`) and the client (`notion_api.py`), kept free of the
HTTP client so that the registry can list the kind without importing aiohttp."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from knowledge.sources.connectors.base import ConnectorError

Json = dict[str, Any]
PARENTS = {"page_id": "page", "block_id": "block", "database_id": "database", "data_source_id": "data_source"}


class NotFound(ConnectorError):
    """Notion answered 404 (`object_not_found`): no such thing, or not shared with the integration."""


@dataclass
class Listing:
    """What a paginated listing said about itself once followed: whether Notion listed everything."""

    complete: bool = True


def normal_id(value: str) -> str:
    """A Notion id in its dashed, lower-case form (ids may be written without dashes)."""
    plain = value.replace("-", "").lower()
    if len(plain) != 32:
        return value.lower()
    return f"{plain[:8]}-{plain[8:12]}-{plain[12:16]}-{plain[16:20]}-{plain[20:]}"


def parent_of(data: Mapping[str, Any]) -> tuple[str, str]:
    """(kind, id) of what `data["parent"]` names: a page, block, database or data source;
    ("", "") for the workspace."""
    parent = data.get("parent")
    if not isinstance(parent, dict):
        return "", ""
    kind = str(parent.get("type") or "")
    if kind not in PARENTS or not parent.get(kind):
        return "", ""
    return PARENTS[kind], normal_id(str(parent[kind]))


def is_gone(data: Mapping[str, Any]) -> bool:
    """Trashed (`in_trash`; `archived` before 2026-03-11) or archived (`is_archived`)."""
    return bool(data.get("in_trash") or data.get("archived") or data.get("is_archived"))
