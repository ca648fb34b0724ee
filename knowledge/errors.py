"""The knowledge engine's errors. Each message is fit to show a user and says what to do next.

KnowledgeError
├── IngestError                  a document could not be added
│   ├── UnsupportedContent       unknown or binary type
│   ├── UnreadableContent        corrupt, encrypted, a decompression bomb
│   │   └── GarbledContent       its text comes out as unreadable characters
│   ├── EmptyContent             no text in it
│   ├── TooLarge                 over the size limit
│   │   └── ExtractionLimit      it holds too much text, or reading it takes too long or
│   │                            too much memory
│   └── IngestFailed             something unexpected broke on this one document (logged)
├── QuestionError                nothing to answer (no question since the last answer)
├── BudgetError                  the prompt does not fit the model's context window
├── EmbeddingMismatch            the index was built with another embedding model
├── EmbedderUnavailable          the embedder failed
├── LLMUnavailable               the chat model failed after retries
└── LLMRejected                  the chat model refused a request passed through to it (4xx)
"""

from __future__ import annotations

UNEXPECTED = (
    "something went wrong on my side while adding it (the details are in Lore's log); "
    "the other documents were not affected. Try it again later, or send it in another format"
)


class KnowledgeError(Exception):
    """Base of every error the knowledge engine raises on purpose."""


class IngestError(KnowledgeError):
    """A document could not be added; `name` is the document's name."""

    def __init__(self, name: str, reason: str) -> None:
        super().__init__(f"I couldn't read {name}: {reason}")
        self.name = name
        self.reason = reason

    def __reduce__(self) -> tuple[type[IngestError], tuple[str, str]]:
        """Pickled as (name, reason), so the error crosses a process boundary intact."""
        return type(self), (self.name, self.reason)


class UnsupportedContent(IngestError):
    pass


class UnreadableContent(IngestError):
    pass


class GarbledContent(UnreadableContent):
    """Text came out, but as characters no language is written in (a PDF whose fonts do not
    say which letters they draw); indexing it would only add noise."""


class EmptyContent(IngestError):
    pass


class TooLarge(IngestError):
    pass


class ExtractionLimit(TooLarge):
    """The file is small enough but would cost too much: too many characters of text, or its
    reading ran past the time or memory Lore gives one document."""


class IngestFailed(IngestError):
    """An unexpected error (a bug, a parser crash) on this one document; its traceback is in
    the log and the other documents of the batch go on."""

    def __init__(self, name: str, reason: str = "") -> None:
        super().__init__(name, reason or UNEXPECTED)


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
