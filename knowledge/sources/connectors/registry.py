"""The connectors Lore knows, by kind. The next connector is a module that declares its
`ConnectorKind` (its client, its label, how its folders are written) and one line here;
connecting, listing, attaching, syncing and every surface go by this registry."""

from __future__ import annotations

from knowledge.sources.connectors.base import ConnectorError, ConnectorKind
from knowledge.sources.connectors.confluence import CONFLUENCE
from knowledge.sources.connectors.github import GITHUB
from knowledge.sources.connectors.notion import NOTION

CONNECTORS: dict[str, ConnectorKind] = {kind.kind: kind for kind in (CONFLUENCE, GITHUB, NOTION)}


def connector_kind(kind: str) -> ConnectorKind:
    """The registered connector called `kind`; `ConnectorError` naming the known ones."""
    found = CONNECTORS.get(kind.strip().lower())
    if found is None:
        raise ConnectorError(f"Lore can't connect {kind} sources yet; it knows {', '.join(CONNECTORS)}")
    return found
