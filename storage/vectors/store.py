"""The vector store's seam: the `VectorStore` protocol the engine uses, the records it adds
and the hits it finds, and its errors. `storage.vectors.chroma_store` implements it on Chroma.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from storage.records import StorageError
from storage.vectors.naming import CollectionRef

MetadataValue = str | int | float | bool


class VectorStoreError(StorageError):
    """The vector store failed or refused an operation."""


class NamespaceTaken(VectorStoreError):
    """The deployment's namespace on the Chroma server belongs to another database."""


@dataclass(frozen=True)
class VectorRecord:
    id: int
    embedding: Sequence[float]
    text: str
    metadata: Mapping[str, MetadataValue]


@dataclass(frozen=True)
class VectorHit:
    id: int
    similarity: float
    """Cosine similarity in [-1, 1]: comparable across collections of the same model."""
    metadata: Mapping[str, MetadataValue]


class VectorStore(Protocol):
    def add(self, ref: CollectionRef, records: Sequence[VectorRecord]) -> None: ...
    def query(
        self,
        ref: CollectionRef,
        embedding: Sequence[float],
        k: int,
        where: Mapping[str, Any] | None = None,
    ) -> list[VectorHit]: ...
    def delete_documents(self, ref: CollectionRef, document_ids: Sequence[int]) -> None: ...
    def delete_ids(self, ref: CollectionRef, ids: Sequence[int]) -> None: ...
    def count(self, ref: CollectionRef) -> int: ...
    def drop(self, ref: CollectionRef) -> None: ...
    def drop_tenant(self, tenant_id: str) -> list[str]: ...
    def collection_name(self, ref: CollectionRef) -> str: ...
    def compact(self) -> None: ...
    def describe(self) -> str: ...
