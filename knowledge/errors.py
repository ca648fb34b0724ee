"""The knowledge engine's errors. Each message is fit to show a user and says what to do next.

KnowledgeError
├── IngestError                  a document could not be added
│   ├── UnsupportedContent       unknown or binary type
│   ├── UnreadableContent        corrupt, encrypted, a decompression bomb
│   ├── EmptyContent             no text in it
│   └── TooLarge                 over the size limit
├── QuestionError                nothing to answer (no question since the last answer)
├── BudgetError                  the prompt does not fit the model's context window
├── EmbeddingMismatch            the index was built with another embedding model
├── EmbedderUnavailable          the embedder failed
├── LLMUnavailable               the chat model failed after retries
└── LLMRejected                  the chat model refused a request passed through to it (4xx)
"""

from __future__ import annotations


class KnowledgeError(Exception):
    """Base of every error the knowledge engine raises on purpose."""


class IngestError(KnowledgeError):
    """A document could not be added; `name` is the document's name."""

    def __init__(self, name: str, reason: str) -> None:
        super().__init__(f"I couldn't read {name}: {reason}")
        self.name = name
        self.reason = reason


class UnsupportedContent(IngestError):
    pass


class UnreadableContent(IngestError):
    pass


class EmptyContent(IngestError):
    pass


class TooLarge(IngestError):
    pass


class QuestionError(KnowledgeError):
    pass


class BudgetError(KnowledgeError):
    pass


class EmbeddingMismatch(KnowledgeError):
    pass


class EmbedderUnavailable(KnowledgeError):
    pass


class LLMUnavailable(KnowledgeError):
    pass


class LLMRejected(KnowledgeError):
    """The model's server refused a request passed through unchanged; `status` is its HTTP
    status (400, 404, 429 …) and the message its own explanation."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
