"""`knowledge`'s public face is pinned: what it exports is a decision, not an accident. It is
all `bot/` may import from `knowledge/` (an import-linter contract)."""

from __future__ import annotations

import importlib

import pytest

import knowledge

PUBLIC = [
    "AccessPolicy", "AccessSync", "GroupReport", "PermissionReport", "grantee_of", "group_similar",
    "AllowList", "Answer", "AnswerSpec", "BudgetError", "CONNECTORS", "CONTEXT_LIST_FIELDS",
    "Catalog", "Citation", "ClientLimits", "Connections", "ConnectorError", "ConnectorSync",
    "ConnectorUnavailable", "Count", "CrawlLimits", "Crawler", "Credentials", "DEFAULT_RATIO",
    "Delta", "DocumentContext", "DocumentFacts", "DocumentReader", "Embedder",
    "EmbedderUnavailable", "EmbeddingMismatch", "EmptyContent", "Fallback", "FallbackStrategy",
    "FetchError", "Fetcher", "FilterError", "Folder", "FolderSpec", "HEDGED", "Hit", "IndexExists",
    "IndexListing", "IndexNotFound", "IndexingJobs", "IngestError", "IngestResult", "Ingestor",
    "JobContext", "JobCounters", "JobRunner", "JobWorker", "Knowledge", "KnowledgeError",
    "KnowledgeSettings", "LLMRejected", "LLMUnavailable", "MAX_RATIO", "MIN_RATIO", "Message",
    "NotAllowed", "NotConfigured", "NotConnected", "Notice", "NoticeKind", "OpenAIChatModel",
    "Outcome", "PassThrough", "QueryType", "QuestionError", "REDIRECTS", "Ranker", "Refused",
    "Request", "Resolve", "ResponseMode", "Retrieval", "RetrievalSpec", "Retriever", "Schedule",
    "Source", "SourceSync", "Strategy", "SyncPolicy", "TiktokenCounter", "TooLarge",
    "UnreadableContent", "UnsupportedContent", "ask_all", "beir_sources", "build_embedder",
    "collection_for", "connector_kind", "distinct_names", "document_fields", "document_names", "evaluate_retrieval",
    "find_documents", "folder_sources", "ingest_corpus", "load_beir", "load_questions", "matches",
    "message_text", "normalise_labels", "score_answers", "system_resolve", "without_surrogates",
    "worker_name",
    # answers at a glance and verified answers (issue 42)
    "Brief", "VISIBLE_LINES", "VerifiedAnswers", "VerifiedMatch", "cut", "display_lines",
]  # fmt: skip


def test_the_public_face_is_pinned() -> None:
    assert sorted(knowledge.__all__) == sorted(PUBLIC) == sorted(knowledge._EXPORTS)


@pytest.mark.parametrize("name", PUBLIC)
def test_every_public_name_resolves_to_its_home(name: str) -> None:
    value = getattr(knowledge, name)
    home = importlib.import_module(knowledge._EXPORTS[name])
    assert getattr(home, name) is value


def test_a_private_name_is_not_exported() -> None:
    with pytest.raises(AttributeError):
        _ = knowledge.chunk_text  # type: ignore[attr-defined]
