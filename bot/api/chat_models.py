"""The chat completion request as Lore reads it, the responses it sends, and when a request
is passed through to the model unchanged instead of answered over indexes."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from knowledge import MAX_RATIO, MIN_RATIO

RAG_ROLES = frozenset({"system", "developer", "user", "assistant"})
LORE_FIELDS = ("index_name", "index_names", "context_token_ratio")
"""Lore's additions to OpenAI's request, removed before a request is passed through."""


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="allow")

    role: str = Field(min_length=1, max_length=64)
    content: str | list[dict[str, Any]] | None = None
    name: str | None = None


class ChatCompletionBody(BaseModel):
    """OpenAI's chat completion request, plus `index_name`/`index_names` and
    `context_token_ratio`. Other OpenAI fields are accepted and passed through."""

    model_config = ConfigDict(extra="allow")

    model: str | None = Field(None, description="Defaults to the configured model.")
    messages: list[ChatMessage] = Field(min_length=1)
    index_name: str | None = Field(None, min_length=1, description="An index to answer from.")
    index_names: list[str] | None = Field(None, description="Several indexes to answer from.")
    context_token_ratio: float | None = Field(
        None,
        ge=MIN_RATIO,
        le=MAX_RATIO,
        description="Share of the space left in the window that retrieved passages may use (default 0.5).",
    )
    n: int | None = Field(None, description="Only 1 is supported.")
    max_tokens: int | None = Field(None, ge=1)
    max_completion_tokens: int | None = Field(None, ge=1)
    stream: bool | None = False
    tools: list[Any] | None = None
    functions: list[Any] | None = None

    @field_validator("n")
    @classmethod
    def _one_choice(cls, value: int | None) -> int | None:
        if value is not None and value != 1:
            raise ValueError(f"only n=1 is supported, not {value}")
        return value

    @field_validator("index_names")
    @classmethod
    def _named(cls, value: list[str] | None) -> list[str] | None:
        if value is not None and any(not name.strip() for name in value):
            raise ValueError("index names must not be empty")
        return value

    def indexes(self) -> list[str]:
        """Every index named, once each, in order."""
        names = [self.index_name] if self.index_name else []
        names += self.index_names or []
        return list(dict.fromkeys(names))

    @property
    def answer_tokens(self) -> int | None:
        return self.max_completion_tokens or self.max_tokens


def bypass_reason(body: ChatCompletionBody) -> str | None:
    """Why the request goes to the model unchanged, or None to answer it over indexes."""
    if not body.indexes():
        return "no index named"
    if body.tools is not None or body.functions is not None:
        return "tools or functions"
    for message in body.messages:
        if message.role not in RAG_ROLES:
            return f"a {message.role!r} message"
        parts = message.content if message.role == "user" and isinstance(message.content, list) else []
        if any(part.get("type") != "text" for part in parts):
            return "non-text content"
    return None


class SourceNode(BaseModel):
    doc_id: int
    text: str
    score: float
    metadata: dict[str, Any]


class AssistantMessage(BaseModel):
    role: str = "assistant"
    content: str | None
    refusal: str | None = None


class Choice(BaseModel):
    index: int
    message: AssistantMessage
    finish_reason: str | None
    logprobs: None = None


class ChatCompletionOut(BaseModel):
    """A standard chat completion, plus the passages it was answered from (null when the
    request was passed through)."""

    model_config = ConfigDict(extra="allow")

    id: str
    object: str = "chat.completion"
    created: int
    model: str
    choices: list[Choice]
    source_nodes: list[SourceNode] | None


class EnhancedCompletionOut(ChatCompletionOut):
    response_mode: str | None = Field(description="The response mode used; null when passed through.")
    fallback_used: bool
    fallback_reason: str | None
    warnings: list[str]


class ModelOut(BaseModel):
    id: str
    object: str = "model"
    created: int
    owned_by: str


class ModelList(BaseModel):
    object: str = "list"
    data: list[ModelOut]
