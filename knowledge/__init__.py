"""Lore's RAG engine, as the layers above use it. It knows nothing of Slack.

The public face is what this module exports: `bot/` imports nothing else from `knowledge/`
(an import-linter contract says so). Everything behind it may move. Names load on first
use, so importing `knowledge` costs nothing until then, and a name whose module pulls in
heavy libraries (the crawler's aiohttp) costs them only where it is used.

The stages behind it, each importing only those below it (another contract):

    evaluation/   measuring Lore (BEIR sets, question sets)
    engine.py     `Knowledge`: one question in, one `Answer` out
    catalog.py    indexes: who may see, add to and change which
    sources/      pulling documents in (fetching, crawling, jobs, connectors)
    answering/    the answer: values, prompt, extractive and generated writers, checks
    judging/      whether what was found answers: second stage, abstention, rerank
    search/       finding passages: hybrid retrieval, filters, the conversation's budget
    indexing/     putting documents in: ingest, chunking, tables, metadata
    backends/     the embedder, the chat model, the tokenisers
    settings.py   what the engine reads from the environment
    extraction/   a file's bytes to text, in a sandbox
    text/         reading pages: markup, quotable units, words
    errors.py     every error a user may see
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_MODULES = {
    "knowledge.engine": ("AnswerSpec", "Knowledge", "Request", "Strategy"),
    "knowledge.catalog": ("Catalog", "IndexExists", "IndexListing", "IndexNotFound", "NotAllowed"),
    "knowledge.errors": (
        "BudgetError",
        "EmbedderUnavailable",
        "EmbeddingMismatch",
        "EmptyContent",
        "IngestError",
        "KnowledgeError",
        "LLMRejected",
        "LLMUnavailable",
        "QuestionError",
        "TooLarge",
        "UnreadableContent",
        "UnsupportedContent",
    ),
    "knowledge.settings": ("KnowledgeSettings",),
    "knowledge.answering.answer": (
        "Answer",
        "Citation",
        "Fallback",
        "FallbackStrategy",
        "ResponseMode",
        "distinct_names",
    ),
    "knowledge.answering.brief": ("VISIBLE_LINES", "Brief", "cut", "display_lines"),
    "knowledge.answering.verified": ("VerifiedAnswers", "VerifiedMatch"),
    "knowledge.judging.ranking": ("Ranker",),
    "knowledge.search.notices": ("HEDGED", "Notice", "NoticeKind"),
    "knowledge.search.context": ("DEFAULT_RATIO", "MAX_RATIO", "MIN_RATIO", "Message"),
    "knowledge.search.filters": ("FilterError", "document_fields", "matches"),
    "knowledge.search.grouping": ("group_similar",),
    "knowledge.search.retrieval": ("Hit", "QueryType", "Retrieval", "RetrievalSpec", "Retriever"),
    "knowledge.indexing.documents": ("document_names", "find_documents"),
    "knowledge.indexing.ingest": ("IngestResult", "Ingestor", "Outcome", "Source", "collection_for"),
    "knowledge.indexing.metadata": (
        "CONTEXT_LIST_FIELDS",
        "DocumentContext",
        "DocumentFacts",
        "normalise_labels",
    ),
    "knowledge.backends.embedding": ("Embedder", "build_embedder"),
    "knowledge.backends.llm": ("Delta", "OpenAIChatModel", "PassThrough"),
    "knowledge.backends.tokens": ("TiktokenCounter", "message_text"),
    "knowledge.extraction.sandbox": ("DocumentReader",),
    "knowledge.extraction.types": ("without_surrogates",),
    "knowledge.evaluation.beir": ("beir_sources", "evaluate_retrieval", "ingest_corpus", "load_beir"),
    "knowledge.evaluation.qa": ("ask_all", "folder_sources", "load_questions", "score_answers"),
    "knowledge.sources.web": ("AllowList", "FetchError", "Refused"),
    "knowledge.sources.fetch": ("REDIRECTS", "Fetcher", "Resolve", "system_resolve"),
    "knowledge.sources.crawl": ("CrawlLimits", "Crawler"),
    "knowledge.sources.jobs": (
        "IndexingJobs",
        "JobContext",
        "JobRunner",
        "JobWorker",
        "Schedule",
        "SourceSync",
        "worker_name",
    ),
    "knowledge.sources.jobs.counters": ("Count", "JobCounters"),
    "knowledge.sources.connectors": (
        "ConnectorError",
        "ConnectorUnavailable",
        "Credentials",
        "Folder",
        "FolderSpec",
        "NotConfigured",
        "NotConnected",
    ),
    "knowledge.sources.connectors.access_sync": (
        "AccessPolicy",
        "AccessSync",
        "GroupReport",
        "PermissionReport",
    ),
    "knowledge.sources.connectors.permissions": ("grantee_of",),
    "knowledge.sources.connectors.registry": ("CONNECTORS", "connector_kind"),
    "knowledge.sources.connectors.service": ("ClientLimits", "Connections"),
    "knowledge.sources.connectors.sync": ("ConnectorSync", "SyncPolicy"),
}
_EXPORTS = {name: module for module, names in _MODULES.items() for name in names}

__all__ = [
    "CONNECTORS",
    "CONTEXT_LIST_FIELDS",
    "DEFAULT_RATIO",
    "HEDGED",
    "MAX_RATIO",
    "MIN_RATIO",
    "REDIRECTS",
    "VISIBLE_LINES",
    "AccessPolicy",
    "AccessSync",
    "AllowList",
    "Answer",
    "AnswerSpec",
    "Brief",
    "BudgetError",
    "Catalog",
    "Citation",
    "ClientLimits",
    "Connections",
    "ConnectorError",
    "ConnectorSync",
    "ConnectorUnavailable",
    "Count",
    "CrawlLimits",
    "Crawler",
    "Credentials",
    "Delta",
    "DocumentContext",
    "DocumentFacts",
    "DocumentReader",
    "Embedder",
    "EmbedderUnavailable",
    "EmbeddingMismatch",
    "EmptyContent",
    "Fallback",
    "FallbackStrategy",
    "FetchError",
    "Fetcher",
    "FilterError",
    "Folder",
    "FolderSpec",
    "GroupReport",
    "Hit",
    "IndexExists",
    "IndexListing",
    "IndexNotFound",
    "IndexingJobs",
    "IngestError",
    "IngestResult",
    "Ingestor",
    "JobContext",
    "JobCounters",
    "JobRunner",
    "JobWorker",
    "Knowledge",
    "KnowledgeError",
    "KnowledgeSettings",
    "LLMRejected",
    "LLMUnavailable",
    "Message",
    "NotAllowed",
    "NotConfigured",
    "NotConnected",
    "Notice",
    "NoticeKind",
    "OpenAIChatModel",
    "Outcome",
    "PassThrough",
    "PermissionReport",
    "QueryType",
    "QuestionError",
    "Ranker",
    "Refused",
    "Request",
    "Resolve",
    "ResponseMode",
    "Retrieval",
    "RetrievalSpec",
    "Retriever",
    "Schedule",
    "Source",
    "SourceSync",
    "Strategy",
    "SyncPolicy",
    "TiktokenCounter",
    "TooLarge",
    "UnreadableContent",
    "UnsupportedContent",
    "VerifiedAnswers",
    "VerifiedMatch",
    "ask_all",
    "beir_sources",
    "build_embedder",
    "collection_for",
    "connector_kind",
    "cut",
    "display_lines",
    "distinct_names",
    "document_fields",
    "document_names",
    "evaluate_retrieval",
    "find_documents",
    "folder_sources",
    "grantee_of",
    "group_similar",
    "ingest_corpus",
    "load_beir",
    "load_questions",
    "matches",
    "message_text",
    "normalise_labels",
    "score_answers",
    "system_resolve",
    "without_surrogates",
    "worker_name",
]

if TYPE_CHECKING:
    from knowledge.answering.answer import (
        Answer,
        Citation,
        Fallback,
        FallbackStrategy,
        ResponseMode,
        distinct_names,
    )
    from knowledge.answering.brief import VISIBLE_LINES, Brief, cut, display_lines
    from knowledge.answering.verified import VerifiedAnswers, VerifiedMatch
    from knowledge.backends.embedding import Embedder, build_embedder
    from knowledge.backends.llm import Delta, OpenAIChatModel, PassThrough
    from knowledge.backends.tokens import TiktokenCounter, message_text
    from knowledge.catalog import Catalog, IndexExists, IndexListing, IndexNotFound, NotAllowed
    from knowledge.engine import AnswerSpec, Knowledge, Request, Strategy
    from knowledge.errors import (
        BudgetError,
        EmbedderUnavailable,
        EmbeddingMismatch,
        EmptyContent,
        IngestError,
        KnowledgeError,
        LLMRejected,
        LLMUnavailable,
        QuestionError,
        TooLarge,
        UnreadableContent,
        UnsupportedContent,
    )
    from knowledge.evaluation.beir import beir_sources, evaluate_retrieval, ingest_corpus, load_beir
    from knowledge.evaluation.qa import ask_all, folder_sources, load_questions, score_answers
    from knowledge.extraction.sandbox import DocumentReader
    from knowledge.extraction.types import without_surrogates
    from knowledge.indexing.documents import document_names, find_documents
    from knowledge.indexing.ingest import Ingestor, IngestResult, Outcome, Source, collection_for
    from knowledge.indexing.metadata import (
        CONTEXT_LIST_FIELDS,
        DocumentContext,
        DocumentFacts,
        normalise_labels,
    )
    from knowledge.judging.ranking import Ranker
    from knowledge.search.context import DEFAULT_RATIO, MAX_RATIO, MIN_RATIO, Message
    from knowledge.search.filters import FilterError, document_fields, matches
    from knowledge.search.grouping import group_similar
    from knowledge.search.notices import HEDGED, Notice, NoticeKind
    from knowledge.search.retrieval import Hit, QueryType, Retrieval, RetrievalSpec, Retriever
    from knowledge.settings import KnowledgeSettings
    from knowledge.sources.connectors import (
        ConnectorError,
        ConnectorUnavailable,
        Credentials,
        Folder,
        FolderSpec,
        NotConfigured,
        NotConnected,
    )
    from knowledge.sources.connectors.access_sync import (
        AccessPolicy,
        AccessSync,
        GroupReport,
        PermissionReport,
    )
    from knowledge.sources.connectors.permissions import grantee_of
    from knowledge.sources.connectors.registry import CONNECTORS, connector_kind
    from knowledge.sources.connectors.service import ClientLimits, Connections
    from knowledge.sources.connectors.sync import ConnectorSync, SyncPolicy
    from knowledge.sources.crawl import Crawler, CrawlLimits
    from knowledge.sources.fetch import REDIRECTS, Fetcher, Resolve, system_resolve
    from knowledge.sources.jobs import (
        IndexingJobs,
        JobContext,
        JobRunner,
        JobWorker,
        Schedule,
        SourceSync,
        worker_name,
    )
    from knowledge.sources.jobs.counters import Count, JobCounters
    from knowledge.sources.web import AllowList, FetchError, Refused


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'knowledge' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
