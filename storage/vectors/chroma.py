"""Chroma itself: the client (embedded, or a Chroma server), the embedding function Lore
registers with it, how Lore's collections are configured, and opening them once each
(`ChromaCollections`, which the vector store builds on).

Lore embeds in `knowledge/` and hands Chroma finished vectors; a collection is still given
Lore's own registered embedding function so Chroma never falls back to its default one
(which downloads a model) and a collection reopened in a new process knows which model
built it.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import chromadb
from chromadb.api import ClientAPI
from chromadb.api.collection_configuration import (
    CreateCollectionConfiguration,
    CreateHNSWConfiguration,
    UpdateCollectionConfiguration,
    UpdateHNSWConfiguration,
)
from chromadb.api.models.Collection import Collection
from chromadb.api.types import Documents, EmbeddingFunction, Embeddings
from chromadb.config import Settings as ChromaSettings
from chromadb.errors import ChromaError, NotFoundError
from chromadb.utils.embedding_functions import register_embedding_function

from storage.vectors.gate import Gate
from storage.vectors.naming import CollectionRef
from storage.vectors.store import MetadataValue, VectorRecord, VectorStoreError

log = logging.getLogger(__name__)

BATCH = 1000
EF_SEARCH = 400
"""How many neighbours the HNSW search explores. Chroma's default, 100, is as many as Lore
asks for (the dense side's 100 candidates): on the docs-QA corpus it missed 1.1% of the true
100 nearest chunks for 62 of 110 questions, and missed different ones in each build of the
index. At 400 it misses one in 10,000, for 0.5 ms more a query at 100k chunks."""
SYNC_THRESHOLD = 1
"""Chroma saves a collection's vector index after this many logged writes, and only then
purges those writes from its log (`embeddings_queue`, which holds every text it was given).
At 1 each write is saved at once, so a deleted passage's text leaves the log with the
delete (by default it stayed until 1,000 more writes came); this costs about a tenth more
time on small writes (`storage.scrub` then clears the file's free space)."""
HNSW = UpdateHNSWConfiguration(ef_search=EF_SEARCH, sync_threshold=SYNC_THRESHOLD, batch_size=SYNC_THRESHOLD)


@register_embedding_function
class PrecomputedEmbeddings(EmbeddingFunction[Documents]):
    """Stands in for an embedder: Lore always passes vectors, never texts, to Chroma."""

    def __init__(self, model_id: str, dimension: int) -> None:
        self.model_id = model_id
        self.dimension = dimension

    def __call__(self, input: Documents) -> Embeddings:
        raise VectorStoreError(
            f"Lore embeds with {self.model_id} itself; pass embeddings, not texts, to Chroma"
        )

    @staticmethod
    def name() -> str:
        return "lore-precomputed"

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> PrecomputedEmbeddings:
        return PrecomputedEmbeddings(str(config["model_id"]), int(config["dimension"]))

    def get_config(self) -> dict[str, Any]:
        return {"model_id": self.model_id, "dimension": self.dimension}

    def default_space(self) -> Any:
        return "cosine"

    def supported_spaces(self) -> list[Any]:
        return ["cosine"]

    def is_legacy(self) -> bool:
        return False


def chroma_client(*, path: Path | None = None, host: str | None = None, port: int = 8000) -> ClientAPI:
    """An embedded client under `path`, or a server client when `host` is given."""
    settings = ChromaSettings(anonymized_telemetry=False, allow_reset=False)
    if host:
        return chromadb.HttpClient(host=host, port=port, settings=settings)
    assert path is not None, "an embedded Chroma needs a path"
    path.mkdir(parents=True, exist_ok=True)
    return chromadb.PersistentClient(path=str(path), settings=settings)


class ChromaCollections:
    """The collections of Lore's indexes on one Chroma client, in one deployment's
    namespace, each opened (and checked, and configured) once per process."""

    def __init__(
        self,
        client: ClientAPI,
        *,
        description: str = "chroma",
        deployment: str | None = None,
        folder: Path | None = None,
        on_delete: Callable[[], None] | None = None,
        gate: Gate | None = None,
    ) -> None:
        """`deployment`: the namespace collection names begin with (None: the names of
        before deployments, `CollectionRef.name`)."""
        self._client = client
        self._gate = gate or Gate()
        """Held shared by every call, so the scrubber's VACUUM never meets one mid-way."""
        self._collections: dict[str, Collection] = {}
        self._description = description
        self.deployment = deployment
        self._folder = folder
        """An embedded store's folder (None for a Chroma server)."""
        self._on_delete = on_delete or (lambda: None)
        """Called after every deletion (`storage.scrub.Scrubber.request`)."""

    def collection_name(self, ref: CollectionRef) -> str:
        """The name of the index's collection in this store (in its deployment's namespace)."""
        return ref.name_in(self.deployment)

    _name = collection_name

    def describe(self) -> str:
        return self._description

    def heartbeat(self) -> int:
        return int(self._client.heartbeat())

    def _write(self, ref: CollectionRef, records: Sequence[VectorRecord]) -> None:
        """Add records to the index's collection (made if it is not there), `BATCH` at a time."""
        with self._gate.shared():
            collection = self._collection(ref)
            for start in range(0, len(records), BATCH):
                batch = records[start : start + BATCH]
                collection.add(
                    ids=[str(r.id) for r in batch],
                    embeddings=cast(Any, [list(r.embedding) for r in batch]),
                    documents=[r.text for r in batch],
                    metadatas=cast(Any, [dict(r.metadata) for r in batch]),
                )

    def _delete_collection(self, name: str) -> None:
        """Forget and delete a collection by name (nothing if it is gone already)."""
        self._collections.pop(name, None)
        with contextlib.suppress(NotFoundError, ValueError):
            self._client.delete_collection(name)

    def _collection(self, ref: CollectionRef) -> Collection:
        """The index's collection, made if it is not there."""
        cached = self._collections.get(self._name(ref))
        if cached is not None:
            return cached
        collection = self._client.get_or_create_collection(
            self._name(ref),
            embedding_function=PrecomputedEmbeddings(ref.model_id, ref.dimension),  # type: ignore[arg-type]
            metadata={"hnsw:space": "cosine", "model_id": ref.model_id, "dimension": ref.dimension},
            configuration=CreateCollectionConfiguration(
                hnsw=CreateHNSWConfiguration(
                    ef_search=EF_SEARCH, sync_threshold=SYNC_THRESHOLD, batch_size=SYNC_THRESHOLD
                )
            ),
        )
        return self._opened(ref, collection)

    def _existing(self, ref: CollectionRef) -> Collection | None:
        """The index's collection, None if there is none."""
        name = self._name(ref)
        if name in self._collections:
            return self._collections[name]
        try:
            collection = self._client.get_collection(
                name,
                embedding_function=PrecomputedEmbeddings(ref.model_id, ref.dimension),  # type: ignore[arg-type]
            )
        except (NotFoundError, ValueError):
            return None
        return self._opened(ref, collection)

    def _opened(self, ref: CollectionRef, collection: Collection) -> Collection:
        """A collection opened for the first time in this process: checked, configured, kept."""
        stored = (collection.metadata or {}).get("model_id")
        if stored is not None and stored != ref.model_id:
            raise VectorStoreError(f"collection {ref.name} holds vectors of {stored}, not {ref.model_id}")
        self._collections[self._name(ref)] = _searching_wide(collection)
        return collection


def metadata_of(metadata: Mapping[str, Any] | None) -> dict[str, MetadataValue]:
    """A vector's metadata as Chroma returned it (None: it has none)."""
    return cast(dict[str, MetadataValue], dict(metadata or {}))


def _searching_wide(collection: Collection) -> Collection:
    """The collection, its search widened to `EF_SEARCH` neighbours and its index saved
    after every write (`SYNC_THRESHOLD`) if it was made before Lore set those at creation
    (the settings are kept with the collection; they apply to a process that has not yet
    used the collection, so they are set as it is first opened). If Chroma refuses (a
    Chroma server's own database can be busy with other writers), the collection is used as
    it is and the next process to open it tries again."""
    hnsw = (collection.configuration or {}).get("hnsw")
    stale = hnsw is not None and (
        (hnsw.get("ef_search") or 0) < EF_SEARCH or (hnsw.get("sync_threshold") or 0) > SYNC_THRESHOLD
    )
    if stale:
        try:
            collection.modify(configuration=UpdateCollectionConfiguration(hnsw=HNSW))
        except ChromaError as exc:
            log.warning("could not configure collection %s: %s", collection.name, exc)
    return collection
