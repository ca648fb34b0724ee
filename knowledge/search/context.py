"""Context selection: the question from a conversation, the token budget, and which hits fit.

The question is the run of user messages after the last assistant message; everything
before it is history. The context budget is
`min(max_tokens or window, window - question tokens - 150) × ratio`, and hits are taken
greedily by relevance, skipping any that does not fit, until the budget is spent.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from knowledge.backends.tokens import TiktokenCounter, message_text
from knowledge.errors import BudgetError, QuestionError
from knowledge.indexing.documents import document_names
from knowledge.search.retrieval import Hit

log = logging.getLogger(__name__)

Message = dict[str, Any]
RESERVED_TOKENS = 150  # the prompt's own instructions and the messages' framing
# The window's share for passages (the rest is the answer's), and its bounds.
MIN_RATIO, MAX_RATIO, DEFAULT_RATIO = 0.2, 0.8, 0.5
# The pool searched: 100 passages at least, one per 500 tokens of a larger window.
MIN_CANDIDATES, TOKENS_PER_CANDIDATE = 100, 500


@dataclass(frozen=True)
class Conversation:
    question: str
    history: list[Message]


@dataclass(frozen=True)
class Budget:
    prompt_tokens: int
    max_tokens: int | None
    """The caller's max_tokens, lowered to the space left in the window if it exceeded it."""
    context_tokens: int
    candidates: int


def split_conversation(messages: Sequence[Message]) -> Conversation:
    """The question since the last answer, and the history before it."""
    last_assistant = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
    question_parts: list[str] = []
    end = last_assistant + 1
    for message in messages[last_assistant + 1 :]:
        if message.get("role") != "user":
            if question_parts:
                break
            end += 1
            continue
        question_parts.append(message_text(message).strip())
    question = "\n\n".join(part for part in question_parts if part)
    if not question:
        raise QuestionError("there must be a question since my last answer")
    history = [m for m in messages[:end] if m.get("role") in ("user", "assistant")]
    return Conversation(question, list(history))


def plan_budget(
    messages: Sequence[Message],
    question: str,
    *,
    window: int,
    max_tokens: int | None = None,
    ratio: float = DEFAULT_RATIO,
    counter: TiktokenCounter | None = None,
) -> Budget:
    """How many tokens retrieved context may use; raises `BudgetError` when nothing fits."""
    if not MIN_RATIO <= ratio <= MAX_RATIO:
        raise BudgetError(f"context_token_ratio must be between {MIN_RATIO} and {MAX_RATIO}, not {ratio}")
    counter = counter or TiktokenCounter()
    prompt_tokens = counter.count_messages(list(messages))
    if prompt_tokens > window:
        raise BudgetError(
            f"the conversation is {prompt_tokens} tokens, longer than the model's "
            f"{window}-token window; start a new thread or shorten the question"
        )
    space_left = window - prompt_tokens
    if max_tokens is not None and max_tokens > space_left:
        log.info("max_tokens %d lowered to the %d tokens left in the window", max_tokens, space_left)
        max_tokens = space_left
    available = min(max_tokens or window, window - counter.count(question) - RESERVED_TOKENS)
    context_tokens = max(0, int(available * ratio))
    return Budget(
        prompt_tokens=prompt_tokens,
        max_tokens=max_tokens,
        context_tokens=context_tokens,
        candidates=max(MIN_CANDIDATES, context_tokens // TOKENS_PER_CANDIDATE),
    )


def select_hits(hits: Sequence[Hit], budget_tokens: int, counter: TiktokenCounter | None = None) -> list[Hit]:
    """Hits in relevance order, each taken if its source block still fits the budget."""
    counter = counter or TiktokenCounter()
    chosen: list[Hit] = []
    spent = 0
    # Names told apart among every candidate are never shorter than among those chosen.
    for hit, name in zip(hits, _names(hits), strict=True):
        cost = counter.count(source_block(len(chosen) + 1, hit, name))
        if spent + cost <= budget_tokens:
            chosen.append(hit)
            spent += cost
    return chosen


def source_block(number: int, hit: Hit, name: str | None = None) -> str:
    """How a hit is shown to the model: numbered, titled by its heading and named by its
    document (`name`, told apart from its namesakes by `source_blocks`), in a block of its
    own whose delimiters its text cannot forge (they are escaped inside it)."""
    name = name or hit.document.name
    title = hit.heading or name
    document = f' document="{_attribute(name)}"' if name != title else ""
    url = f' url="{escape_source(hit.document.url).replace(chr(34), "%22")}"' if hit.document.url else ""
    return f'<source n="{number}" title="{_attribute(title)}"{document}{url}>\n{escape_source(hit.text)}\n</source>'


def source_blocks(hits: Sequence[Hit]) -> list[str]:
    """Each hit's source block, numbered from 1, its document named as the user sees it
    among these sources: "billing/docs/index.md" beside "payroll/docs/index.md"."""
    return [
        source_block(n, hit, name)
        for n, (hit, name) in enumerate(zip(hits, _names(hits), strict=True), start=1)
    ]


def _names(hits: Sequence[Hit]) -> list[str]:
    return document_names([hit.document for hit in hits])


def _attribute(text: str) -> str:
    return escape_source(text).replace('"', "'")


_DELIMITER = re.compile(r"<(\s*/?\s*sources?)\b", re.IGNORECASE)


def escape_source(text: str) -> str:
    """Document text that cannot open or close a source block."""
    return _DELIMITER.sub(r"&lt;\1", text)
