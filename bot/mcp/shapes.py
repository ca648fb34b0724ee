"""What the MCP tools take and give, as pydantic models: their JSON Schemas are the tools'
`inputSchema` and `outputSchema`, and a call's arguments are validated against them.

Arguments are flat (no nested objects but `filters`), so that every client can fill them in;
unknown arguments are refused rather than ignored, so that a misspelt one is noticed.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

MAX_K = 50
"""Passages one search returns at most: a larger `k` is capped (and the result says so)."""
MAX_PAGE = 100
"""Documents one `list_documents` page holds at most."""
MAX_TEXT_CHARS = 2_000_000
"""Longest text `add_document` takes in one call (a bigger document goes in as a file, with `lore ingest`)."""


def _indexes() -> Any:
    return Field(
        default_factory=list,
        max_length=20,
        description="Names of the indexes to search (see list_indexes). Leave empty to search every "
        "index you may use.",
    )


def _index_to_add() -> Any:
    return Field(
        "personal",
        min_length=1,
        max_length=80,
        description="The index to add to (see list_indexes): your personal index unless you name another.",
    )


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Result(BaseModel):
    notices: list[str] = Field(
        default_factory=list, description="What the caller should know: what was capped, cut or skipped."
    )


class SearchArgs(Args):
    query: str = Field(min_length=1, max_length=4000, description="What to look for, in plain words.")
    indexes: list[str] = _indexes()
    filters: dict[str, Any] = Field(
        default_factory=dict,
        description='Metadata every passage\'s document must have, e.g. {"author": "ada"} or '
        '{"mime_type": {"$in": ["text/markdown", "application/pdf"]}}; "$and" and "$or" combine them.',
    )
    k: int = Field(8, ge=1, description=f"How many passages to return, best first (at most {MAX_K}).")


class Passage(BaseModel):
    index: str = Field(description="The index it was found in.")
    document: str = Field(description="The document's name.")
    document_id: int
    url: str | None = Field(description="Where the document lives, when it has a link.")
    heading: str = Field(description='Its heading path in the document, e.g. "Install > Linux"; "" if none.')
    text: str
    score: float = Field(description="Relevance, higher is better (comparable within one search).")
    resource: str = Field(description="The document's URI, to read its whole text as a resource.")


class SearchResult(Result):
    passages: list[Passage]


class AskArgs(Args):
    question: str = Field(
        min_length=1, max_length=4000, description="The question, as a person would ask it."
    )
    indexes: list[str] = _indexes()


class Cited(BaseModel):
    n: int = Field(description="The number the answer cites it by, as [n].")
    document: str
    index: str
    url: str | None
    section: str | None = Field(description="The heading the quoted passage stands under.")
    text: str = Field(description="The passage the answer rests on.")
    score: float
    resource: str


class Closest(BaseModel):
    document: str
    index: str
    url: str | None
    resource: str


class AskResult(Result):
    answer: str = Field(description="The answer, citing its sources as [n]; or why there is none.")
    abstained: bool = Field(description="True when the documents do not answer the question.")
    confidence: float | None = Field(description="How well the passages found match the question, 0 to 1.")
    citations: list[Cited]
    closest: list[Closest] = Field(
        description="When abstaining: the documents closest to the question (places to look, not an answer)."
    )


class NoArgs(Args):
    pass


class IndexInfo(BaseModel):
    name: str
    scope: str = Field(description="personal, channel or shared")
    documents: int
    chunks: int
    may_add: bool = Field(description="Whether you may add documents to it.")


class IndexList(Result):
    indexes: list[IndexInfo]


class ListDocumentsArgs(Args):
    index: str = Field(min_length=1, max_length=80, description="The index (see list_indexes).")
    limit: int = Field(20, ge=1, le=MAX_PAGE, description="Documents per page.")
    cursor: int | None = Field(None, ge=0, description="`next_cursor` of the previous page, to read on.")


class DocumentInfo(BaseModel):
    id: int
    name: str
    url: str | None
    author: str | None
    added: datetime
    characters: int
    chunks: int
    resource: str


class DocumentPage(Result):
    index: str
    documents: list[DocumentInfo]
    next_cursor: int | None = Field(
        description="Pass it back as `cursor` for the next page; null at the end."
    )


class AddDocumentArgs(Args):
    index: str = _index_to_add()
    text: str | None = Field(
        None,
        min_length=1,
        max_length=MAX_TEXT_CHARS,
        description="The document's text (Markdown or plain). Give either text (with a name) or url.",
    )
    name: str | None = Field(
        None,
        min_length=1,
        max_length=255,
        description="The document's name, with text; adding a text of the same name again replaces it.",
    )
    url: str | None = Field(
        None,
        min_length=1,
        max_length=2048,
        description="An http(s) web page to read and add, instead of text.",
    )


class Added(Result):
    index: str
    document: str
    document_id: int
    outcome: str = Field(description="added, updated (it replaced a document of that name) or unchanged")
    chunks: int
    resource: str


class AddUrlArgs(Args):
    url: str = Field(min_length=1, max_length=2048, description="Where the site (or the part of it) starts.")
    index: str = _index_to_add()
    schedule: str = Field(
        "daily",
        max_length=40,
        description="How often to crawl it again: hourly, daily, weekly, every N hours, or never.",
    )


class Crawl(Result):
    index: str
    source_id: int
    job_id: int
    state: str = Field(
        description="The crawl job's state (queued, running, …): it goes on in the background."
    )
    already_running: bool
