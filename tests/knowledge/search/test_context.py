"""The question, the token budget, and greedy context selection."""

from __future__ import annotations

import logging

import pytest

from knowledge.errors import BudgetError, QuestionError
from knowledge.search.context import plan_budget, split_conversation


def test_the_question_is_the_user_turns_since_the_last_answer() -> None:
    conversation = split_conversation(
        [
            {"role": "system", "content": "be nice"},
            {"role": "user", "content": "first"},
            {"role": "assistant", "content": "answer"},
            {"role": "user", "content": "part one"},
            {"role": "user", "content": [{"type": "text", "text": "part two"}]},
        ]
    )
    assert conversation.question == "part one\n\npart two"
    assert [m["content"] for m in conversation.history] == ["first", "answer"]


def test_no_question_since_the_last_answer_is_an_error() -> None:
    with pytest.raises(QuestionError, match="there must be a question since my last answer"):
        split_conversation([{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}])
    with pytest.raises(QuestionError):
        split_conversation([])


def test_budget_follows_the_formula(caplog: pytest.LogCaptureFixture) -> None:
    messages = [{"role": "user", "content": "How do rollbacks work?"}]
    budget = plan_budget(messages, "How do rollbacks work?", window=8000, ratio=0.5)
    assert budget.context_tokens == int((8000 - 5 - 150) * 0.5)
    assert budget.candidates == max(100, budget.context_tokens // 500)
    small = plan_budget(messages, "How do rollbacks work?", window=8000, max_tokens=1000, ratio=0.25)
    assert small.context_tokens == 250 and small.max_tokens == 1000
    with caplog.at_level(logging.INFO, logger="knowledge.search.context"):
        lowered = plan_budget(messages, "How do rollbacks work?", window=8000, max_tokens=50_000)
    assert lowered.max_tokens == 8000 - lowered.prompt_tokens and "lowered" in caplog.text
    big = plan_budget(messages, "q", window=1_000_000, ratio=0.8)
    assert big.candidates == big.context_tokens // 500 > 100


@pytest.mark.parametrize("ratio", [0.1, 0.9])
def test_ratio_outside_the_range_is_refused(ratio: float) -> None:
    with pytest.raises(BudgetError, match=r"between 0\.2 and 0\.8"):
        plan_budget([{"role": "user", "content": "q"}], "q", window=4000, ratio=ratio)


def test_a_prompt_longer_than_the_window_is_refused() -> None:
    with pytest.raises(BudgetError, match="longer than the model's 2000-token window"):
        plan_budget([{"role": "user", "content": "word " * 3000}], "q", window=2000)
