"""The shared fixtures give what they promise: a migrated, empty database of each dialect,
and a working, empty Chroma in each mode."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import inspect, text

from storage.db import Database

EXPECTED_DIALECT = {"sqlite": "sqlite", "postgres": "postgresql"}


def test_database_answers_in_its_dialect(database: Database, request: pytest.FixtureRequest) -> None:
    kind = request.node.callspec.params["database_url"]
    assert database.dialect == EXPECTED_DIALECT[kind]
    assert database.ping().startswith("SQLite" if kind == "sqlite" else "PostgreSQL")


def test_database_is_migrated_and_empty(database: Database) -> None:
    tables = set(inspect(database.engine).get_table_names())
    assert {"knowledge_index", "alembic_version"} <= tables
    with database.session() as session:
        assert session.execute(text("select count(*) from knowledge_index")).scalar() == 0


def test_database_url_names_a_fresh_database(database_url: str, request: pytest.FixtureRequest) -> None:
    kind = request.node.callspec.params["database_url"]
    assert database_url.startswith("sqlite:////" if kind == "sqlite" else "postgresql+psycopg://")


def test_chroma_stores_and_finds_vectors(chroma_client: Any) -> None:
    collection = chroma_client.create_collection(
        "smoke", metadata={"hnsw:space": "cosine"}, embedding_function=None
    )
    collection.add(
        ids=["x", "y", "z"],
        embeddings=[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
        documents=["east", "north", "up"],
    )
    found = collection.query(query_embeddings=[[0.1, 0.9, 0.0]], n_results=3)
    assert found["ids"] == [["y", "x", "z"]]
    assert found["documents"] is not None and found["documents"][0][0] == "north"
    assert collection.count() == 3


def test_chroma_starts_empty(chroma_client: Any) -> None:
    """Runs after the test above in each mode: nothing it made is left."""
    assert chroma_client.list_collections() == []
