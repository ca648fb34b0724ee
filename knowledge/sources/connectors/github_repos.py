"""What Lore keeps of a GitHub repository between syncs, and small readers of GitHub's JSON
shared by the listing (`github_listing.py`) and the reading of items (`github_items.py`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from knowledge.sources.connectors.base import ConnectorError

Json = dict[str, Any]


class NotFound(ConnectorError):
    """GitHub answered 404 (or GraphQL NOT_FOUND): no such thing, or not for these credentials."""


def dig(data: Any, *path: str) -> Any:
    for key in path:
        data = data.get(key) if isinstance(data, dict) else None
    return data


def login(user: Any) -> str:
    return str(dig(user, "login") or "ghost")


@dataclass(frozen=True)
class Repo:
    """A repository as Lore keeps it between syncs."""

    full_name: str
    id: int
    visibility: str
    default_branch: str
    html_url: str
    description: str = ""
    has_issues: bool = True
    has_discussions: bool = False
    empty: bool = False
    organization: bool = False
    """Its owner is an organisation (its people may have verified emails there)."""

    @property
    def owner(self) -> str:
        return self.full_name.split("/", 1)[0]

    @classmethod
    def from_json(cls, data: Any) -> Repo:
        private = bool(dig(data, "private"))
        return cls(
            full_name=str(dig(data, "full_name") or ""),
            id=int(dig(data, "id") or 0),
            visibility=str(dig(data, "visibility") or ("private" if private else "public")),
            default_branch=str(dig(data, "default_branch") or ""),
            html_url=str(dig(data, "html_url") or ""),
            description=str(dig(data, "description") or ""),
            has_issues=bool(dig(data, "has_issues") if "has_issues" in data else True),
            has_discussions=bool(dig(data, "has_discussions")),
            empty=dig(data, "size") == 0,
            organization=dig(data, "owner", "type") == "Organization",
        )

    def as_mapping(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> Repo:
        return cls(**{k: values[k] for k in cls.__dataclass_fields__ if k in values})

    def facts(self, item_type: str, **more: str | int | bool) -> dict[str, str | int | bool]:
        """What each document of this repository carries: where it is from, who may read it."""
        return {
            "repository": self.full_name,
            "repository_id": self.id,
            "visibility": self.visibility,
            "owner": self.owner,
            "item_type": item_type,
            **more,
        }
