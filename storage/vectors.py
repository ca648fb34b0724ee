"""The vector store: a narrow protocol and its Chroma implementation.

One Chroma collection per knowledge index (cosine space), named from the deployment (this
database's id, `storage.deployment`), the tenant and the index id, so that deployments
sharing a Chroma server never touch each other's collections. Lore embeds in `knowledge/` and hands Chroma finished vectors; the collection is
still given Lore's own registered embedding function so Chroma never falls back to its
default one (which downloads a model) and a collection reopened in a new process knows
which model built it.
"""

from __future__ import annotations

import os

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")  # before anything imports onnxruntime
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

import contextlib
import logging
import re
import shutil
import sqlite3
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, cast

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

from storage.records import StorageError

log = logging.getLogger(__name__)

MetadataValue = str | int | float | bool
PREFIX = "lore"
MARKER_KEY = "lore_deployment_of"
"""Metadata of a namespace's marker collection: the database that owns the namespace."""
CHROMA_SQLITE = "chroma.sqlite3"
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


class VectorStoreError(StorageError):
    """The vector store failed or refused an operation."""


class NamespaceTaken(VectorStoreError):
    """The deployment's namespace on the Chroma server belongs to another database."""


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
        return f"{PREFIX}-{self._tenant}-{self.index_id}"

    def name_in(self, deployment: str | None) -> str:
        """The collection's name in `deployment`'s namespace (the bare `name` for None)."""
        if deployment is None:
            return self.name
        return f"{PREFIX}-{deployment}-{self._tenant}-{self.index_id}"

    @property
    def _tenant(self) -> str:
        return re.sub(r"[^a-zA-Z0-9_-]", "-", self.tenant_id)[:40] or "t"


def collection_prefix(tenant_id: str, deployment: str | None = None) -> str:
    """What the names of a tenant's collections begin with (an index id follows), in
    `deployment`'s namespace (None: as named before deployments)."""
    tenant = re.sub(r"[^a-zA-Z0-9_-]", "-", tenant_id)[:40] or "t"
    return f"{PREFIX}-{deployment}-{tenant}-" if deployment else f"{PREFIX}-{tenant}-"


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


class Gate:
    """Many users at once, or one alone: the store's calls pass `shared()`, and `compact`'s
    VACUUM holds `alone()`, so no call of this process meets Chroma's file locked (Chroma
    then fails writes with "database is locked")."""

    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._users = 0
        self._alone = False

    @contextmanager
    def shared(self) -> Iterator[None]:
        with self._condition:
            self._condition.wait_for(lambda: not self._alone)
            self._users += 1
        try:
            yield
        finally:
            with self._condition:
                self._users -= 1
                self._condition.notify_all()

    @contextmanager
    def alone(self) -> Iterator[None]:
        with self._condition:
            self._condition.wait_for(lambda: not self._alone)
            self._alone = True
            self._condition.wait_for(lambda: self._users == 0)
        try:
            yield
        finally:
            with self._condition:
                self._alone = False
                self._condition.notify_all()


class ChromaVectorStore:
    """`VectorStore` on Chroma. Methods are blocking; async callers use a thread."""

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

    def claim_namespace(self, database: str) -> None:
        """Make sure the namespace is this database's: its marker collection names the
        database that first used it. Raises `NamespaceTaken` when that is another database
        (a restored copy of it, or its move elsewhere); `rebind` settles the second case."""
        assert self.deployment is not None, "a namespace needs a deployment"
        marker = self._client.get_or_create_collection(
            self._marker_name, embedding_function=None, metadata={MARKER_KEY: database}
        )
        owner = (marker.metadata or {}).get(MARKER_KEY)
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
        assert self.deployment is not None, "a namespace needs a deployment"
        marker = self._client.get_or_create_collection(
            self._marker_name, embedding_function=None, metadata={MARKER_KEY: database}
        )
        marker.modify(metadata={MARKER_KEY: database})

    def drop_namespace(self) -> int:
        """Delete every collection of this deployment, and its marker (a throw-away
        deployment's end); how many."""
        assert self.deployment is not None, "a namespace needs a deployment"
        mine = [
            c.name
            for c in self._client.list_collections()
            if c.name == self._marker_name or c.name.startswith(self._marker_name + "-")
        ]
        for name in mine:
            with contextlib.suppress(NotFoundError, ValueError):
                self._client.delete_collection(name)
        self._collections.clear()
        return len(mine)

    def in_namespace(self, deployment: str) -> ChromaVectorStore:
        """The same Chroma, in another deployment's namespace."""
        return ChromaVectorStore(
            self._client, description=self._description, deployment=deployment, folder=self._folder
        )

    def copy_from(
        self, source: ChromaVectorStore, ref: CollectionRef, keep: Callable[[list[int], list[int]], set[int]]
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
            documents = [int(cast(Any, m or {}).get("document_id", -1)) for m in page["metadatas"] or []]
            wanted = keep([int(i) for i in page["ids"]], documents)
            rows = [
                VectorRecord(int(i), list(e), d or "", cast(dict[str, MetadataValue], dict(m or {})))
                for i, e, d, m in zip(
                    page["ids"],
                    cast(Any, page["embeddings"]),
                    page["documents"] or [],
                    page["metadatas"] or [],
                    strict=True,
                )
                if int(i) in wanted
            ]
            self.add(ref, rows)
            copied += len(rows)
        return copied

    @property
    def _marker_name(self) -> str:
        return f"{PREFIX}-{self.deployment}"

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
        sample = legacy.get(limit=50, include=["metadatas"])
        ids = [int(i) for i in sample["ids"]]
        documents = [int(cast(Any, m or {}).get("document_id", -1)) for m in sample["metadatas"] or []]
        if ids and not belongs(ids, documents):
            return "foreign"
        try:
            legacy.modify(name=self._name(ref))
        except (ChromaError, ValueError) as exc:  # another process renamed it first
            log.info("collection %s not renamed: %s", ref.name, exc)
            return "none"
        self._collections.pop(self._name(ref), None)
        return "renamed"

    def describe(self) -> str:
        return self._description

    def heartbeat(self) -> int:
        return int(self._client.heartbeat())

    def add(self, ref: CollectionRef, records: Sequence[VectorRecord]) -> None:
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
            ids = result["ids"][0]
            distances = (result["distances"] or [[]])[0]
            metadatas = (result["metadatas"] or [[]])[0]
            return [
                VectorHit(
                    id=int(i),
                    similarity=1.0 - float(d),
                    metadata=cast(dict[str, MetadataValue], dict(m or {})),
                )
                for i, d, m in zip(ids, distances, metadatas, strict=True)
            ]

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
            self._collections.pop(self._name(ref), None)
            with contextlib.suppress(NotFoundError, ValueError):
                self._client.delete_collection(self._name(ref))
            self._on_delete()

    def drop_tenant(self, tenant_id: str) -> list[str]:
        """Drop every collection of the tenant, its indexes' and any left behind; their names."""
        with self._gate.shared():
            own = re.compile(re.escape(collection_prefix(tenant_id, self.deployment)) + r"\d+")
            names = [c.name for c in self._client.list_collections() if own.fullmatch(c.name)]
            for name in names:
                self._collections.pop(name, None)
                with contextlib.suppress(NotFoundError, ValueError):
                    self._client.delete_collection(name)
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
            connection = sqlite3.connect(database, timeout=30, isolation_level=None)
            try:
                segments = {str(row[0]) for row in connection.execute("SELECT id FROM segments")}
                connection.execute("VACUUM")
            finally:
                connection.close()
        for folder in self._folder.iterdir():
            if folder.is_dir() and _is_uuid(folder.name) and folder.name not in segments:
                shutil.rmtree(folder, ignore_errors=True)

    def _collection(self, ref: CollectionRef) -> Collection:
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
        self._check_model(collection, ref)
        self._collections[self._name(ref)] = _searching_wide(collection)
        return collection

    def _existing(self, ref: CollectionRef) -> Collection | None:
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
        self._check_model(collection, ref)
        self._collections[self._name(ref)] = _searching_wide(collection)
        return collection

    @staticmethod
    def _check_model(collection: Collection, ref: CollectionRef) -> None:
        stored = (collection.metadata or {}).get("model_id")
        if stored is not None and stored != ref.model_id:
            raise VectorStoreError(f"collection {ref.name} holds vectors of {stored}, not {ref.model_id}")


def _is_uuid(name: str) -> bool:
    try:
        uuid.UUID(name)
    except ValueError:
        return False
    return True


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
