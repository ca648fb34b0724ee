"""How vector collections are named: one per knowledge index, in the namespace of a
deployment (this database's id, `storage.deployment`), so that deployments sharing a
Chroma server never touch each other's collections.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

PREFIX = "lore"


@dataclass(frozen=True)
class CollectionRef:
    """Which index's vectors, and the model that made them."""

    tenant_id: str
    index_id: int
    model_id: str
    dimension: int

    @property
    def name(self) -> str:
        """The name collections had before deployments were named (`lore-<tenant>-<index>`)."""
        return f"{PREFIX}-{_tenant(self.tenant_id)}-{self.index_id}"

    def name_in(self, deployment: str | None) -> str:
        """The collection's name in `deployment`'s namespace (the bare `name` for None)."""
        if deployment is None:
            return self.name
        return f"{PREFIX}-{deployment}-{_tenant(self.tenant_id)}-{self.index_id}"


def collection_prefix(tenant_id: str, deployment: str | None = None) -> str:
    """What the names of a tenant's collections begin with (an index id follows), in
    `deployment`'s namespace (None: as named before deployments)."""
    tenant = _tenant(tenant_id)
    return f"{PREFIX}-{deployment}-{tenant}-" if deployment else f"{PREFIX}-{tenant}-"


def namespace_marker(deployment: str) -> str:
    """The name of a deployment's marker collection, which every other name of its namespace
    begins with (followed by `-`)."""
    return f"{PREFIX}-{deployment}"


def _tenant(tenant_id: str) -> str:
    return re.sub(r"[^a-zA-Z0-9_-]", "-", tenant_id)[:40] or "t"
