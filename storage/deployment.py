"""This database's deployment: the id that names its vectors on a Chroma server, and the
checks that keep two databases from sharing them.

Staging and production (or any two Lores) may share one Chroma server: each database draws
a deployment id when it is first migrated, and its collections are named
`lore-<deployment>-<tenant>-<index>`, so neither ever reads, repairs or drops the other's.
A restored copy of a database carries the same id, so on a Chroma server the namespace also
holds a marker naming the database that owns it (`database_identity`); a process whose
database is not that one refuses to start (`NamespaceTaken`), telling what to do.

Collections made before deployments were named (`lore-<tenant>-<index>`) are renamed into
the namespace at the first start after the upgrade, once a sample of their vectors shows
they are this database's chunks; another database's are left alone.
"""

from __future__ import annotations

import functools
import logging
import secrets
import socket
from dataclasses import dataclass

from sqlalchemy import bindparam, text
from sqlmodel import select, update

from storage.db import Database
from storage.models import Deployment
from storage.repositories._rows import insert_ignoring_conflict
from storage.repositories.indexes import IndexRepository
from storage.values import utcnow
from storage.vectors import ChromaVectorStore, CollectionRef

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class DeploymentRef:
    id: str
    legacy_collections_adopted: bool


def new_deployment_id() -> str:
    return secrets.token_hex(6)


def deployment(db: Database) -> DeploymentRef:
    """This database's deployment (drawn now if the database has none yet)."""
    with db.session() as session:
        row = session.exec(select(Deployment)).first()
        if row is None:
            values = {"id": new_deployment_id(), "legacy_collections_adopted": True, "created_at": utcnow()}
            insert_ignoring_conflict(session, Deployment, values)
            row = session.exec(select(Deployment)).one()
        return DeploymentRef(row.id, row.legacy_collections_adopted)


def replace_deployment(db: Database) -> DeploymentRef:
    """Give this database a new deployment id (a copy that is to run beside its original)."""
    with db.session() as session:
        session.exec(update(Deployment).values(id=new_deployment_id()))
    return deployment(db)


def fork(db: Database, store: ChromaVectorStore) -> tuple[str, int]:
    """Give this database (a copy of another) a deployment of its own, and copy into its
    namespace the vectors of its chunks from the namespace it shared (`store`'s); the new
    id, and how many vectors were copied. `store` is left as it is."""
    old = store.deployment
    new = replace_deployment(db).id
    target = store.in_namespace(new)
    copied = 0
    for index in IndexRepository(db).list_all():
        ref = CollectionRef(index.tenant_id, index.id, index.embedding_model, index.embedding_dimension)
        copied += target.copy_from(store, ref, functools.partial(_same_chunks, db, index.id))
    target.rebind(database_identity(db))
    log.warning("deployment %s is now %s: %d vectors copied", old, new, copied)
    return new, copied


def _same_chunks(db: Database, index_id: int, ids: list[int], documents: list[int]) -> set[int]:
    """The ids among `ids` that are chunks of that index here, of the same document."""
    found = _chunks(db, index_id, ids)
    return {i for i, d in zip(ids, documents, strict=True) if found.get(i) == d}


def database_identity(db: Database) -> str:
    """Which database this is, as a copy of it would not be: PostgreSQL's cluster id and the
    database's own oid and name (a dump restored elsewhere, or under another name, differs;
    the same database reached through another host name or PgBouncer does not); for SQLite,
    the machine and the file."""
    with db.engine.connect() as connection:
        if db.dialect == "sqlite":
            files = connection.execute(text("PRAGMA database_list")).all()
            return f"sqlite:{socket.gethostname()}:{files[0][2] if files else '?'}"[:250]
        name, oid = connection.execute(
            text("SELECT current_database(), oid FROM pg_database WHERE datname = current_database()")
        ).one()
        return f"postgresql:{_cluster(connection)}:{oid}:{name}"[:250]


def _cluster(connection: object) -> str:
    """The cluster's system identifier (readable by any role), else its address."""
    run = connection.execute  # type: ignore[attr-defined]
    try:
        return str(run(text("SELECT system_identifier FROM pg_control_system()")).scalar_one())
    except Exception:  # a server that hides it: the address it answers on will do
        return str(
            run(
                text("SELECT coalesce(host(inet_server_addr()), 'local') || ':' || inet_server_port()")
            ).scalar_one()
        )


def open_namespace(db: Database, store: ChromaVectorStore, *, server: bool) -> None:
    """Check that the store's namespace is this database's (on a Chroma server), then move
    collections named before deployments into it, once."""
    found = deployment(db)
    if server:
        store.claim_namespace(database_identity(db))
    if not found.legacy_collections_adopted:
        adopt_legacy_collections(db, store)


def adopt_legacy_collections(db: Database, store: ChromaVectorStore) -> dict[str, int]:
    """Rename every index's collection of before deployments into the namespace, when its
    vectors are this database's; note that it is done. How many were renamed, left alone."""
    outcomes = {"renamed": 0, "none": 0, "foreign": 0}
    for index in IndexRepository(db).list_all():
        ref = CollectionRef(index.tenant_id, index.id, index.embedding_model, index.embedding_dimension)
        outcome = store.rename_legacy(ref, functools.partial(_ours, db, index.id))
        outcomes[outcome] += 1
        if outcome == "foreign":
            log.warning(
                "collection %s holds another database's vectors: left alone; the %s index has no "
                "vectors here, so add its documents again for dense search",
                ref.name,
                index.name,
            )
    with db.session() as session:
        session.exec(update(Deployment).values(legacy_collections_adopted=True))
    if outcomes["renamed"]:
        log.warning("moved %d collections into deployment %s", outcomes["renamed"], store.deployment)
    return outcomes


def _ours(db: Database, index_id: int, ids: list[int], documents: list[int]) -> bool:
    """Whether every sampled vector is a chunk of that index here, of the same document."""
    return len(_same_chunks(db, index_id, ids, documents)) == len(ids)


def _chunks(db: Database, index_id: int, ids: list[int]) -> dict[int, int]:
    """Chunk id to document id, for those of `ids` that are chunks of the index."""
    statement = text("SELECT id, document_id FROM chunk WHERE index_id = :index AND id IN :ids").bindparams(
        bindparam("ids", expanding=True)
    )
    with db.engine.connect() as connection:
        rows = connection.execute(statement, {"index": index_id, "ids": ids}).all()
    return {int(chunk): int(document) for chunk, document in rows}
