"""The vector store: a narrow protocol (`store`) and its Chroma implementation.

One Chroma collection per knowledge index (`naming`), opened once each (`chroma`), in the
namespace of a deployment (`namespaces`); `chroma_store.ChromaVectorStore` adds, searches
and deletes vectors, and `gate` keeps an embedded store's calls out of its compaction's way.
Everything is imported from here.
"""

from __future__ import annotations

import os

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")  # before anything imports onnxruntime
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from storage.vectors.chroma import (
    BATCH,
    EF_SEARCH,
    SYNC_THRESHOLD,
    PrecomputedEmbeddings,
    chroma_client,
)
from storage.vectors.chroma_store import ChromaVectorStore
from storage.vectors.gate import Gate
from storage.vectors.namespaces import MARKER_KEY
from storage.vectors.naming import PREFIX, CollectionRef, collection_prefix
from storage.vectors.store import (
    MetadataValue,
    NamespaceTaken,
    VectorHit,
    VectorRecord,
    VectorStore,
    VectorStoreError,
)

__all__ = [
    "BATCH",
    "EF_SEARCH",
    "MARKER_KEY",
    "PREFIX",
    "SYNC_THRESHOLD",
    "ChromaVectorStore",
    "CollectionRef",
    "Gate",
    "MetadataValue",
    "NamespaceTaken",
    "PrecomputedEmbeddings",
    "VectorHit",
    "VectorRecord",
    "VectorStore",
    "VectorStoreError",
    "chroma_client",
    "collection_prefix",
]
