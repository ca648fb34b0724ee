"""Directives in the system message of /enhanced-chat/completions: keyword lines, the
<config> block, warnings for invalid values, and what is left for the model."""

from __future__ import annotations

from typing import Any

import pytest

from bot.api.directives import read_directives
from knowledge.answering.answer import FallbackStrategy, ResponseMode


def system(text: str) -> list[dict[str, Any]]:
    return [{"role": "system", "content": text}, {"role": "user", "content": "q"}]


def test_keyword_lines_are_read_and_removed() -> None:
    directives, messages = read_directives(
        system(
            "You are a technical support agent.\n"
            "RESPONSE_MODE: HYBRID\n"
            "DOCUMENT_CONTEXT: technical, API_docs\n"
            "content_domains: api_documentation, user_support\n"
            "DOCUMENT_CATEGORIES: user_guide\n"
            "MIN_CONFIDENCE: 0.7\n"
            "FALLBACK_STRATEGY: llm_knowledge\n"
            "Be kind."
        )
    )
    assert directives.response_mode == ResponseMode.HYBRID
    assert directives.document_context == ("technical", "api_docs")
    assert directives.content_domains == ("api_documentation", "user_support")
    assert directives.document_categories == ("user_guide",)
    assert directives.min_confidence == 0.7
    assert directives.fallback_strategy == FallbackStrategy.LLM_KNOWLEDGE
    assert directives.warnings == ()
    assert messages[0]["content"] == "You are a technical support agent.\nBe kind."
    assert directives.context_filter() == {
        "context_type": ["technical", "api_docs"],
        "content_domain": ["api_documentation", "user_support"],
        "document_category": ["user_guide"],
    }


def test_a_config_block_wins_over_keyword_lines() -> None:
    directives, messages = read_directives(
        system(
            "You are helpful.\nRESPONSE_MODE: LLM_ONLY\n<config>\nRESPONSE_MODE: rag only\n"
            "MIN_CONFIDENCE: 0.4\n</config>\nThanks."
        )
    )
    assert directives.response_mode == ResponseMode.RAG_ONLY
    assert directives.min_confidence == 0.4
    assert any("<config> block wins" in w for w in directives.warnings)
    assert messages[0]["content"] == "You are helpful.\n\nThanks."


@pytest.mark.parametrize(
    ("line", "warned"),
    [
        ("RESPONSE_MODE: TELEPATHY", "RESPONSE_MODE"),
        ("MIN_CONFIDENCE: 7", "MIN_CONFIDENCE"),
        ("MIN_CONFIDENCE: high", "MIN_CONFIDENCE"),
        ("FALLBACK_STRATEGY: pray", "FALLBACK_STRATEGY"),
        ("DOCUMENT_CONTEXT: , ,", "DOCUMENT_CONTEXT"),
    ],
)
def test_invalid_values_keep_the_defaults_and_warn(line: str, warned: str) -> None:
    directives, messages = read_directives(system(f"Hi.\n{line}"))
    assert directives.response_mode is None and directives.min_confidence is None
    assert directives.fallback_strategy is None and directives.document_context == ()
    [warning] = directives.warnings
    assert warning.startswith(warned)
    assert messages[0]["content"] == "Hi."


def test_unknown_config_lines_are_warned_and_a_message_of_only_directives_is_dropped() -> None:
    directives, messages = read_directives(system("<config>\nRESPONSE_MODE: HYBRID\nCOLOUR: blue\n</config>"))
    assert directives.response_mode == ResponseMode.HYBRID
    assert any("COLOUR" in w for w in directives.warnings)
    assert messages == [{"role": "user", "content": "q"}]


def test_text_that_only_looks_like_a_directive_is_left_alone() -> None:
    directives, messages = read_directives(system("Note: be brief.\nMODE: fast"))
    assert directives.warnings == ()
    assert messages[0]["content"] == "Note: be brief.\nMODE: fast"
