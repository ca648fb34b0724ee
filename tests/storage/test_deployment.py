"""Deployments sharing one Chroma server: each database's vectors in a namespace of its own,
a restored copy refused until it is given its own (or the original is gone), and the
collections of before deployments moved into the namespace at the upgrade. Real
PostgreSQL databases and a real Chroma server, through `build_services`."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from alembic import command
from sqlalchemy import create_engine, make_url
from typer.testing import CliRunner

from bot.app.local import local_dm
from bot.app.services import Services, build_services
from bot.app.settings import Settings
from bot.cli.main import app
from knowledge.indexing.ingest import Source, collection_for
from storage.migrations_runner import alembic_config
from storage.vectors import ChromaVectorStore, CollectionRef, NamespaceTaken, VectorRecord, chroma_client
from tests.support.postgres import create_database, drop_database

pytestmark = [pytest.mark.postgres, pytest.mark.chroma_server]
NOTE = "The release train leaves on Tuesdays; the canary runs for an hour first."


@pytest.fixture
def databases(postgres_admin_url: str) -> Iterator[list[str]]:
    made: list[str] = []
    yield made
    for url in made:
        drop_database(postgres_admin_url, url)


@pytest.fixture
def chroma(chroma_server: tuple[str, int]) -> Iterator[tuple[str, int]]:
    yield chroma_server
    client = chroma_client(host=chroma_server[0], port=chroma_server[1])
    for collection in client.list_collections():
        client.delete_collection(collection.name)


def settings_for(home: Path, url: str, chroma: tuple[str, int]) -> Settings:
    return Settings(
        _env_file=None, lore_home=home, database_url=url, chroma_host=chroma[0], chroma_port=chroma[1]
    )


def new_database(admin_url: str, made: list[str]) -> str:
    url = create_database(admin_url)
    made.append(url)
    return url


async def note_index(services: Services, text: str = NOTE) -> tuple[int, str]:
    """A shared index holding one note; its id and the note's chunk's text."""
    actor = await local_dm(services)
    index = await services.catalog.create_shared(actor.place, "handbook")
    await services.ingestor.add(index, Source(name="train.md", data=text.encode(), mime_type="text/markdown"))
    return index.id, text


async def found(services: Services, index_id: int, question: str) -> list[str]:
    index = services.indexes.get(index_id)
    return [hit.text for hit in (await services.retriever.search([index], question)).hits]


def test_two_deployments_on_one_chroma_server_keep_their_vectors(
    tmp_path: Path, postgres_admin_url: str, databases: list[str], chroma: tuple[str, int]
) -> None:
    """Staging and production: the same tenant and the same index ids, one Chroma server.
    Each searches its own vectors; deleting, repairing and re-adding in one leaves the
    other's alone."""
    staging = build_services(
        settings_for(tmp_path / "s", new_database(postgres_admin_url, databases), chroma)
    )
    production = build_services(
        settings_for(tmp_path / "p", new_database(postgres_admin_url, databases), chroma)
    )
    try:
        s_index, _ = asyncio.run(note_index(staging, "Staging deploys run every hour from the main branch."))
        p_index, _ = asyncio.run(note_index(production))
        assert s_index == p_index  # the same ids: only the namespace tells them apart
        s_ref = collection_for(staging.indexes.get(s_index))
        assert staging.vectors.count(s_ref) >= 1 and production.vectors.count(s_ref) >= 1
        assert any("release train" in t for t in asyncio.run(found(production, p_index, "release train")))

        asyncio.run(staging.ingestor.repair({s_index: staging.indexes.get(s_index)}))
        place = asyncio.run(local_dm(staging)).place
        asyncio.run(staging.catalog.delete(place, staging.indexes.get(s_index)))
        assert staging.vectors.count(s_ref) == 0
        p_ref = collection_for(production.indexes.get(p_index))
        chunks = production.indexes.stats(p_index).chunks
        assert production.vectors.count(p_ref) == chunks
        dense = asyncio.run(
            production.retriever.search([production.indexes.get(p_index)], "when does the train go")
        )
        assert any(hit.similarity is not None for hit in dense.hits)
        assert staging.vectors.deployment != production.vectors.deployment  # type: ignore[attr-defined]
    finally:
        asyncio.run(staging.aclose())
        asyncio.run(production.aclose())


def test_a_restored_copy_is_refused_until_it_is_forked_or_rebound(
    tmp_path: Path, postgres_admin_url: str, databases: list[str], chroma: tuple[str, int]
) -> None:
    original_url = new_database(postgres_admin_url, databases)
    original = build_services(settings_for(tmp_path / "o", original_url, chroma))
    try:
        index_id, _ = asyncio.run(note_index(original))
        ref = collection_for(original.indexes.get(index_id))
        vectors = original.vectors.count(ref)
    finally:
        asyncio.run(original.aclose())
    copy_url = copy_database(postgres_admin_url, original_url, databases)
    copy_settings = settings_for(tmp_path / "c", copy_url, chroma)

    with pytest.raises(NamespaceTaken, match="lore db fork"):
        build_services(copy_settings)
    result = CliRunner().invoke(app, ["doctor"], env=env_of(copy_settings))
    assert "belong to another database" in result.output

    forked = CliRunner().invoke(app, ["db", "fork"], env=env_of(copy_settings))
    assert forked.exit_code == 0, forked.output
    assert f"{vectors} vectors copied" in forked.output
    copy = build_services(copy_settings)
    original = build_services(settings_for(tmp_path / "o", original_url, chroma))
    try:
        asyncio.run(copy.catalog.delete(asyncio.run(local_dm(copy)).place, copy.indexes.get(index_id)))
        assert original.vectors.count(ref) == vectors  # the copy's delete left the original's
        assert any("release train" in t for t in asyncio.run(found(original, index_id, "release train")))
    finally:
        asyncio.run(copy.aclose())
        asyncio.run(original.aclose())

    # A move: the original is gone, the restored copy takes its vectors over.
    moved_url = copy_database(postgres_admin_url, original_url, databases)
    drop_database(postgres_admin_url, original_url)
    moved_settings = settings_for(tmp_path / "m", moved_url, chroma)
    with pytest.raises(NamespaceTaken):
        build_services(moved_settings)
    rebound = CliRunner().invoke(app, ["db", "rebind"], env=env_of(moved_settings))
    assert rebound.exit_code == 0, rebound.output
    moved = build_services(moved_settings)
    try:
        assert moved.vectors.count(ref) == vectors
    finally:
        asyncio.run(moved.aclose())


def test_collections_of_before_deployments_are_moved_in_at_the_upgrade(
    tmp_path: Path, postgres_admin_url: str, databases: list[str], chroma: tuple[str, int]
) -> None:
    """A database at 0009 whose index's vectors are in `lore-<tenant>-<index>`: after the
    upgrade the index searches them in its namespace; a collection of that name holding
    another database's vectors is left alone."""
    ours_url = new_database(postgres_admin_url, databases)
    engine = create_engine(ours_url)
    command.upgrade(alembic_config(engine), "0009")
    engine.dispose()
    before = ChromaVectorStore(chroma_client(host=chroma[0], port=chroma[1]))  # named as before
    services = build_services(settings_for(tmp_path / "h", ours_url, chroma))
    try:
        # Build it as 0009 did: the collection under its old name, then the flag as it was.
        index_id, _ = asyncio.run(note_index(services))
        index = services.indexes.get(index_id)
        ref = collection_for(index)
        records = chunk_vectors(services, index_id)
        services.vectors.drop(ref)
        before.add(ref, records)
        stranger = CollectionRef(
            index.tenant_id, index_id + 1, index.embedding_model, index.embedding_dimension
        )
        before.add(
            stranger, [VectorRecord(99_999, records[0].embedding, "not ours", {"document_id": 12_345})]
        )
        other = asyncio.run(services.catalog.create_shared(asyncio.run(local_dm(services)).place, "other"))
        assert other.id == stranger.index_id
        with services.db.engine.begin() as connection:
            connection.exec_driver_sql("UPDATE deployment SET legacy_collections_adopted = false")
    finally:
        asyncio.run(services.aclose())

    upgraded = build_services(settings_for(tmp_path / "h", ours_url, chroma))
    before = ChromaVectorStore(chroma_client(host=chroma[0], port=chroma[1]))
    try:
        assert upgraded.vectors.count(ref) == len(records)
        assert before.count(ref) == 0  # moved, not copied
        assert before.count(stranger) == 1 and upgraded.vectors.count(stranger) == 0
        hits = asyncio.run(
            upgraded.retriever.search([upgraded.indexes.get(index_id)], "when does the train go")
        )
        assert any(hit.similarity is not None and "release train" in hit.text for hit in hits.hits)
    finally:
        asyncio.run(upgraded.aclose())


def chunk_vectors(services: Services, index_id: int) -> list[VectorRecord]:
    """The index's vectors as the store holds them (ids, vectors, texts, metadata)."""
    index = services.indexes.get(index_id)
    client = services.vectors._client  # type: ignore[attr-defined]
    name = collection_for(index).name_in(services.vectors.deployment)  # type: ignore[attr-defined]
    got = client.get_collection(name, embedding_function=None).get(
        include=["embeddings", "documents", "metadatas"]
    )
    return [
        VectorRecord(int(i), list(e), d, dict(m))
        for i, e, d, m in zip(got["ids"], got["embeddings"], got["documents"], got["metadatas"], strict=True)
    ]


def copy_database(admin_url: str, url: str, made: list[str]) -> str:
    """A restored copy of the database at `url` (PostgreSQL's `CREATE DATABASE … TEMPLATE`)."""
    copy = make_url(create_database(admin_url))
    drop_database(admin_url, copy.render_as_string(hide_password=False))
    admin = make_url(admin_url)
    with psycopg.connect(
        host=admin.host, port=admin.port, user=admin.username, dbname="postgres", autocommit=True
    ) as c:
        c.execute(f'CREATE DATABASE "{copy.database}" TEMPLATE "{make_url(url).database}"')
    made.append(copy.render_as_string(hide_password=False))
    return made[-1]


def env_of(settings: Settings) -> dict[str, str]:
    return {
        "LORE_HOME": str(settings.lore_home),
        "DATABASE_URL": settings.database_url or "",
        "CHROMA_HOST": settings.chroma_host or "",
        "CHROMA_PORT": str(settings.chroma_port),
    }
