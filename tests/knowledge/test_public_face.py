"""`knowledge`'s public face is pinned: what it exports is a decision, not an accident."""

from __future__ import annotations

import importlib

import pytest

import knowledge

PUBLIC = [
    "AllowList", "Answer", "Catalog", "Citation", "Connections", "Credentials", "Delta",
    "DocumentFacts", "Embedder", "Fallback", "FetchError", "Fetcher", "FolderSpec", "Hit",
    "IndexExists", "IndexNotFound", "IndexingJobs", "IngestError", "IngestResult", "Ingestor",
    "Knowledge", "KnowledgeError", "KnowledgeSettings", "NotAllowed", "Outcome", "Refused",
    "Request", "ResponseMode", "Retriever", "Schedule", "Source", "Strategy", "build_embedder",
]  # fmt: skip


def test_the_public_face_is_pinned() -> None:
    assert knowledge.__all__ == sorted(PUBLIC) == sorted(knowledge._EXPORTS)


@pytest.mark.parametrize("name", PUBLIC)
def test_every_public_name_resolves_to_its_home(name: str) -> None:
    value = getattr(knowledge, name)
    home = importlib.import_module(knowledge._EXPORTS[name])
    assert getattr(home, name) is value


def test_a_private_name_is_not_exported() -> None:
    with pytest.raises(AttributeError):
        _ = knowledge.chunk_text  # type: ignore[attr-defined]
