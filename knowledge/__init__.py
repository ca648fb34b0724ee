"""Lore's RAG engine, as the layers above use it. It knows nothing of Slack.

The public face is what this module exports; everything else is an implementation detail
that may move. Names load on first use, so importing `knowledge` costs nothing until then.

    Knowledge, Request, Strategy        answer a question over indexes (knowledge.engine)
    Answer, Citation, ResponseMode, Fallback, Delta
    Ingestor, Source, IngestResult, Outcome, DocumentFacts
    Catalog, IndexNotFound, NotAllowed, IndexExists
    Retriever, Hit, Embedder, build_embedder, KnowledgeSettings
    KnowledgeError, IngestError         every error a user may see (knowledge.errors)
    Fetcher, AllowList, FetchError, Refused, IndexingJobs, Schedule, Connections,
    Credentials, FolderSpec             pulling documents in (knowledge.sources)
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "Knowledge": "knowledge.engine",
    "Request": "knowledge.engine",
    "Strategy": "knowledge.engine",
    "Answer": "knowledge.answering.answer",
    "Citation": "knowledge.answering.answer",
    "ResponseMode": "knowledge.answering.answer",
    "Fallback": "knowledge.answering.answer",
    "Delta": "knowledge.backends.llm",
    "Ingestor": "knowledge.indexing.ingest",
    "Source": "knowledge.indexing.ingest",
    "IngestResult": "knowledge.indexing.ingest",
    "Outcome": "knowledge.indexing.ingest",
    "DocumentFacts": "knowledge.indexing.metadata",
    "Catalog": "knowledge.catalog",
    "IndexNotFound": "knowledge.catalog",
    "NotAllowed": "knowledge.catalog",
    "IndexExists": "knowledge.catalog",
    "Retriever": "knowledge.search.retrieval",
    "Hit": "knowledge.search.retrieval",
    "Embedder": "knowledge.backends.embedding",
    "build_embedder": "knowledge.backends.embedding",
    "KnowledgeSettings": "knowledge.settings",
    "KnowledgeError": "knowledge.errors",
    "IngestError": "knowledge.errors",
    "Fetcher": "knowledge.sources.fetch",
    "AllowList": "knowledge.sources.web",
    "FetchError": "knowledge.sources.web",
    "Refused": "knowledge.sources.web",
    "IndexingJobs": "knowledge.sources.jobs",
    "Schedule": "knowledge.sources.jobs",
    "Connections": "knowledge.sources.connectors.service",
    "Credentials": "knowledge.sources.connectors",
    "FolderSpec": "knowledge.sources.connectors",
}

__all__ = [
    "AllowList",
    "Answer",
    "Catalog",
    "Citation",
    "Connections",
    "Credentials",
    "Delta",
    "DocumentFacts",
    "Embedder",
    "Fallback",
    "FetchError",
    "Fetcher",
    "FolderSpec",
    "Hit",
    "IndexExists",
    "IndexNotFound",
    "IndexingJobs",
    "IngestError",
    "IngestResult",
    "Ingestor",
    "Knowledge",
    "KnowledgeError",
    "KnowledgeSettings",
    "NotAllowed",
    "Outcome",
    "Refused",
    "Request",
    "ResponseMode",
    "Retriever",
    "Schedule",
    "Source",
    "Strategy",
    "build_embedder",
]

if TYPE_CHECKING:
    from knowledge.answering.answer import Answer, Citation, Fallback, ResponseMode
    from knowledge.backends.embedding import Embedder, build_embedder
    from knowledge.backends.llm import Delta
    from knowledge.catalog import Catalog, IndexExists, IndexNotFound, NotAllowed
    from knowledge.engine import Knowledge, Request, Strategy
    from knowledge.errors import IngestError, KnowledgeError
    from knowledge.indexing.ingest import Ingestor, IngestResult, Outcome, Source
    from knowledge.indexing.metadata import DocumentFacts
    from knowledge.search.retrieval import Hit, Retriever
    from knowledge.settings import KnowledgeSettings
    from knowledge.sources.connectors import Credentials, FolderSpec
    from knowledge.sources.connectors.service import Connections
    from knowledge.sources.fetch import Fetcher
    from knowledge.sources.jobs import IndexingJobs, Schedule
    from knowledge.sources.web import AllowList, FetchError, Refused


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'knowledge' has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value
