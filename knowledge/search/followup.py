"""Follow-up questions made standalone before retrieval.

In a thread, "and on Windows?" means nothing to a search engine on its own. Without a
model, the previous question's content words (those the follow-up does not already use)
are added to it; with a model, `rewrite` asks it for a short standalone question.
"""

from __future__ import annotations

from collections.abc import Sequence

from knowledge.backends.llm import ChatModel
from knowledge.backends.tokens import message_text
from knowledge.errors import LLMUnavailable
from knowledge.search.context import Message
from knowledge.text.words import content_words


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


REWRITE_PROMPT = """Rewrite the user's last question as one standalone search query that \
can be understood without the conversation: resolve "it", "that", "and on Windows?" from the \
earlier turns, keep names, identifiers and versions exactly, add nothing else. Reply with \
the query only, in the question's language."""
REWRITE_TOKENS = 60  # a search query, not an answer


async def rewrite(chat: ChatModel, question: str, history: Sequence[Message]) -> str:
    """A short standalone query from the model; without history the question itself, and
    when the model fails or rambles, `standalone_question`."""
    if not previous_question(history):
        return question
    turns = "\n".join(f"{m.get('role')}: {message_text(m).strip()}" for m in history[-4:])
    messages: list[Message] = [
        {"role": "system", "content": REWRITE_PROMPT},
        {"role": "user", "content": f"Conversation:\n{turns}\n\nLast question: {question}"},
    ]
    try:
        completion = await chat.complete(messages, max_tokens=REWRITE_TOKENS)
    except LLMUnavailable:
        return standalone_question(question, history)
    query = completion.text.strip().strip('"').strip()
    if not query or "\n" in query or len(query) > 4 * len(question) + 200:
        return standalone_question(question, history)
    return query
