"""`VectorStore` on Chroma: one collection per knowledge index (cosine space), vectors
added, searched and deleted by chunk or by document, and an embedded store's file given
back what deletions left in it.
"""

from __future__ import annotations

import re
import shutil
import sqlite3
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from chromadb.api.types import QueryResult

from storage.vectors.chroma import metadata_of
from storage.vectors.namespaces import DeploymentNamespaces
from storage.vectors.naming import CollectionRef, collection_prefix
from storage.vectors.store import VectorHit, VectorRecord

CHROMA_SQLITE = "chroma.sqlite3"


class ChromaVectorStore(DeploymentNamespaces):
    """`VectorStore` on Chroma. Methods are blocking; async callers use a thread."""

    def add(self, ref: CollectionRef, records: Sequence[VectorRecord]) -> None:
        self._write(ref, records)

    def query(
        self,
        ref: CollectionRef,
        embedding: Sequence[float],
        k: int,
        where: Mapping[str, Any] | None = None,
    ) -> list[VectorHit]:
        with self._gate.shared():
            collection = self._existing(ref)
            if collection is None or k <= 0:
                return []
            result = collection.query(
                query_embeddings=cast(Any, [list(embedding)]),
                n_results=k,
                where=cast(Any, dict(where)) if where else None,
                include=["metadatas", "distances"],
            )
            return _hits(result)

    def delete_documents(self, ref: CollectionRef, document_ids: Sequence[int]) -> None:
        with self._gate.shared():
            collection = self._existing(ref)
            if collection is not None and document_ids:
                collection.delete(where=cast(Any, {"document_id": {"$in": [int(d) for d in document_ids]}}))
                self._on_delete()

    def delete_ids(self, ref: CollectionRef, ids: Sequence[int]) -> None:
        with self._gate.shared():
            collection = self._existing(ref)
            if collection is not None and ids:
                collection.delete(ids=[str(i) for i in ids])
                self._on_delete()

    def count(self, ref: CollectionRef) -> int:
        with self._gate.shared():
            collection = self._existing(ref)
            return 0 if collection is None else int(collection.count())

    def drop(self, ref: CollectionRef) -> None:
        with self._gate.shared():
            self._delete_collection(self._name(ref))
            self._on_delete()

    def drop_tenant(self, tenant_id: str) -> list[str]:
        """Drop every collection of the tenant, its indexes' and any left behind; their names."""
        with self._gate.shared():
            own = re.compile(re.escape(collection_prefix(tenant_id, self.deployment)) + r"\d+")
            names = [c.name for c in self._client.list_collections() if own.fullmatch(c.name)]
            for name in names:
                self._delete_collection(name)
            self._on_delete()
            return names

    def compact(self) -> None:
        """An embedded store: give back what deletions left on disk. Chroma keeps deleted
        texts (a dropped collection's, deleted records' once its log is purged:
        `SYNC_THRESHOLD`) in the free pages of its SQLite file, and a dropped collection's
        vector segment in its folder; the file is vacuumed and folders no segment names are
        removed. A Chroma server keeps its own files (see the production guide)."""
        if self._folder is None:
            return
        database = self._folder / CHROMA_SQLITE
        if not database.exists():
            return
        with self._gate.alone():  # no call of this process meets the file locked
            segments = _vacuum(database)
        for folder in self._folder.iterdir():
            if folder.is_dir() and _is_uuid(folder.name) and folder.name not in segments:
                shutil.rmtree(folder, ignore_errors=True)


def _hits(result: QueryResult) -> list[VectorHit]:
    """The hits of a one-embedding query, cosine distance turned into similarity."""
    ids = result["ids"][0]
    distances = (result["distances"] or [[]])[0]
    metadatas = (result["metadatas"] or [[]])[0]
    return [
        VectorHit(id=int(i), similarity=1.0 - float(d), metadata=metadata_of(m))
        for i, d, m in zip(ids, distances, metadatas, strict=True)
    ]


def _vacuum(database: Path) -> set[str]:
    """Vacuum Chroma's SQLite file; the ids of the segments it names."""
    connection = sqlite3.connect(database, timeout=30, isolation_level=None)
    try:
        segments = {str(row[0]) for row in connection.execute("SELECT id FROM segments")}
        connection.execute("VACUUM")
    finally:
        connection.close()
    return segments


def _is_uuid(name: str) -> bool:
    try:
        uuid.UUID(name)
    except ValueError:
        return False
    return True
