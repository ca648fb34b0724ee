"""A deployment's namespace on a Chroma server: claimed by one database (its marker
collection), handed to another (`lore db rebind`), copied into a new one (`lore db fork`),
dropped, and the collections named before deployments moved into it (`storage.deployment`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Self, cast

from chromadb.api.models.Collection import Collection
from chromadb.api.types import GetResult
from chromadb.errors import ChromaError, NotFoundError

from storage.vectors.chroma import BATCH, ChromaCollections, metadata_of
from storage.vectors.naming import CollectionRef, namespace_marker
from storage.vectors.store import NamespaceTaken, VectorRecord

log = logging.getLogger(__name__)

MARKER_KEY = "lore_deployment_of"
"""Metadata of a namespace's marker collection: the database that owns the namespace."""
SAMPLE = 50
"""Vectors of a collection named before deployments looked at to tell whose it is."""


class DeploymentNamespaces(ChromaCollections):
    """What `storage.deployment` does with a deployment's collections as a whole."""

    def claim_namespace(self, database: str) -> None:
        """Make sure the namespace is this database's: its marker collection names the
        database that first used it. Raises `NamespaceTaken` when that is another database
        (a restored copy of it, or its move elsewhere); `rebind` settles the second case."""
        owner = (self._marker(database).metadata or {}).get(MARKER_KEY)
        if owner != database:
            raise NamespaceTaken(
                f"the Chroma server's collections of deployment {self.deployment} belong to another "
                f"database ({owner}), not to this one ({database}): this database is a restored copy "
                "or was moved. If the other database is gone (a move), run `lore db rebind` to make "
                "them this database's; if both are to run, give this one its own vectors with "
                "`lore db fork`. Lore will not share vectors between two databases."
            )

    def rebind(self, database: str) -> None:
        """Make the namespace's marker name `database` as its owner."""
        self._marker(database).modify(metadata={MARKER_KEY: database})

    def drop_namespace(self) -> int:
        """Delete every collection of this deployment, and its marker (a throw-away
        deployment's end); how many."""
        marker = self._marker_name
        mine = [
            c.name
            for c in self._client.list_collections()
            if c.name == marker or c.name.startswith(marker + "-")
        ]
        for name in mine:
            self._delete_collection(name)
        self._collections.clear()
        return len(mine)

    def in_namespace(self, deployment: str) -> Self:
        """The same Chroma, in another deployment's namespace."""
        return type(self)(
            self._client, description=self._description, deployment=deployment, folder=self._folder
        )

    def copy_from(
        self, source: ChromaCollections, ref: CollectionRef, keep: Callable[[list[int], list[int]], set[int]]
    ) -> int:
        """Copy the index's vectors from `source` (another namespace) into this store, those
        whose ids `keep(ids, document_ids)` returns; how many were copied."""
        collection = source._existing(ref)
        if collection is None:
            return 0
        copied = 0
        for offset in range(0, int(collection.count()), BATCH):
            page = collection.get(
                limit=BATCH, offset=offset, include=["embeddings", "documents", "metadatas"]
            )
            wanted = keep([int(i) for i in page["ids"]], _document_ids(page))
            rows = [record for record in _records(page) if record.id in wanted]
            self._write(ref, rows)
            copied += len(rows)
        return copied

    def rename_legacy(self, ref: CollectionRef, belongs: Callable[[list[int], list[int]], bool]) -> str:
        """Move the index's collection named as before deployments (`ref.name`) into this
        deployment's namespace, if `belongs(ids, document_ids)` says a sample of its vectors
        are this database's chunks. Returns what happened: `renamed`, `none` (no such
        collection, or already moved), `foreign` (left alone: another database's)."""
        assert self.deployment is not None, "renaming needs a deployment"
        try:
            legacy = self._client.get_collection(ref.name, embedding_function=None)
        except (NotFoundError, ValueError):
            return "none"
        sample = legacy.get(limit=SAMPLE, include=["metadatas"])
        ids = [int(i) for i in sample["ids"]]
        if ids and not belongs(ids, _document_ids(sample)):
            return "foreign"
        try:
            legacy.modify(name=self._name(ref))
        except (ChromaError, ValueError) as exc:  # another process renamed it first
            log.info("collection %s not renamed: %s", ref.name, exc)
            return "none"
        self._collections.pop(self._name(ref), None)
        return "renamed"

    @property
    def _marker_name(self) -> str:
        assert self.deployment is not None, "a namespace needs a deployment"
        return namespace_marker(self.deployment)

    def _marker(self, database: str) -> Collection:
        """The namespace's marker collection (made naming `database` if there is none)."""
        return self._client.get_or_create_collection(
            self._marker_name, embedding_function=None, metadata={MARKER_KEY: database}
        )


def _document_ids(page: GetResult) -> list[int]:
    """The document id of each vector of a page (-1 where it has none)."""
    return [int(cast(Any, m or {}).get("document_id", -1)) for m in page["metadatas"] or []]


def _records(page: GetResult) -> list[VectorRecord]:
    return [
        VectorRecord(int(i), list(e), d or "", metadata_of(m))
        for i, e, d, m in zip(
            page["ids"],
            cast(Any, page["embeddings"]),
            page["documents"] or [],
            page["metadatas"] or [],
            strict=True,
        )
    ]
