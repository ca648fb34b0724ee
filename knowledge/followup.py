"""Follow-up questions made standalone before retrieval.

In a thread, "and on Windows?" means nothing to a search engine on its own. Without a
model, the previous question's content words (those the follow-up does not already use)
are added to it; with a model, `rewrite` asks it for a short standalone question.
"""

from __future__ import annotations

from collections.abc import Sequence

from knowledge.context import Message
from knowledge.ranking import content_words
from knowledge.tokens import message_text


def previous_question(history: Sequence[Message]) -> str:
    """The last user message of the history ('' when there is none)."""
    for message in reversed(history):
        if message.get("role") == "user":
            return message_text(message).strip()
    return ""


def standalone_question(question: str, history: Sequence[Message]) -> str:
    """The question with the previous question's key words added (unchanged without history)."""
    previous = previous_question(history)
    if not previous:
        return question
    own = set(content_words(question))
    added = [w for w in content_words(previous) if w not in own]
    return f"{question} ({' '.join(added)})" if added else question
