"""Settings the knowledge engine reads: the embedder, the optional LLM and ingest limits."""

from __future__ import annotations

from pydantic import Field, SecretStr, field_validator

from knowledge.extraction.core import DEFAULT_MAX_CHARS
from knowledge.extraction.sandbox import ExtractionLimits
from storage.settings import StorageSettings

LOCAL_EMBEDDING_MODEL = "local:all-MiniLM-L6-v2"
OPENAI_EMBEDDING_PREFIX = "openai:"


class KnowledgeSettings(StorageSettings):
    """Embedding, LLM and ingest settings, on top of where data is stored."""

    embedding_model: str = Field(
        default=LOCAL_EMBEDDING_MODEL,
        description=f"{LOCAL_EMBEDDING_MODEL} (offline) or openai:<model>, "
        "e.g. openai:text-embedding-3-small",
    )
    openai_api_key: SecretStr | None = Field(default=None, description="Key for the LLM endpoint.")
    openai_base_url: str | None = Field(
        default=None, description="OpenAI-compatible endpoint (OpenAI, Ollama, vLLM …)."
    )
    llm_model: str = Field(default="gpt-4o-mini", description="Chat model name.")
    llm_context_window: int = Field(default=128_000, ge=1024, description="Tokens the chat model accepts.")
    llm_rerank: int = Field(
        default=0,
        ge=0,
        le=20,
        description="With a model: how many of the best passages it reorders before answering "
        "(0: off; 8 is a good start). One more short model call a question.",
    )
    llm_verify: bool = Field(
        default=False,
        description="With a model: it also judges each claim of an answer against the sources the "
        "claim cites, and a claim it finds contradicted or unsupported sends the documents' quotes "
        "instead. One more short model call an answer.",
    )
    llm_timeout_seconds: float = Field(
        default=60.0, gt=0, description="Longest wait for the LLM endpoint, in seconds."
    )
    llm_max_retries: int = Field(
        default=2, ge=0, le=10, description="Retries of a failed LLM request (connection errors, 429, 5xx)."
    )
    lore_max_file_mb: int = Field(
        default=50, ge=1, le=2048, description="Largest file Lore will ingest, in MB."
    )
    lore_max_document_chars: int = Field(
        default=DEFAULT_MAX_CHARS,
        ge=10_000,
        le=1_000_000_000,
        description="Most characters of text Lore takes from one document; one that unpacks to "
        "more is refused.",
    )
    lore_max_table_chunks: int = Field(
        default=1000,
        ge=1,
        le=1_000_000,
        description="Passages one table (CSV, TSV) becomes at most; a larger table puts more rows "
        "in each passage (every row still found by keyword) and says so.",
    )
    lore_extract_timeout_seconds: float = Field(
        default=120, gt=0, le=3600, description="Longest Lore spends reading one document, in seconds."
    )
    lore_extract_memory_mb: int = Field(
        default=1024,
        ge=64,
        le=65536,
        description="Memory reading one document may take, in MB (documents are read in a separate process).",
    )

    lore_crawl_allow: str = Field(
        default="",
        description="Comma-separated hosts and CIDR networks the fetcher may reach even though "
        "they are private (an intranet wiki).",
    )
    lore_crawl_max_pages: int = Field(
        default=200, ge=1, le=100_000, description="Pages one crawl job fetches at most."
    )
    lore_crawl_max_depth: int = Field(
        default=5,
        ge=0,
        le=100,
        description="Links followed from a start page, at most (0: the start pages only).",
    )
    lore_crawl_max_page_mb: int = Field(
        default=10,
        ge=1,
        le=2048,
        description="Largest page a crawl downloads, in MB; larger ones are skipped.",
    )
    lore_crawl_max_minutes: float = Field(
        default=30, gt=0, le=24 * 60, description="Longest a crawl job runs, in minutes."
    )
    lore_crawl_timeout_seconds: float = Field(
        default=20, gt=0, le=600, description="Longest a crawl waits for one page, in seconds."
    )
    lore_crawl_concurrency: int = Field(default=4, ge=1, le=32, description="Pages a crawl fetches at once.")
    lore_crawl_delay_seconds: float = Field(
        default=0.5,
        ge=0,
        le=60,
        description="Pause between two requests to one host, in seconds (a site's longer Crawl-delay wins).",
    )
    lore_crawl_max_redirects: int = Field(
        default=5, ge=0, le=20, description="Redirects followed for one page."
    )
    lore_crawl_contact_url: str = Field(
        default="https://github.com/lore-bot/lore",
        min_length=1,
        description="Where site owners can learn about the crawler; sent in its User-Agent header.",
    )

    lore_confluence_overlap_minutes: float = Field(
        default=60,
        ge=0,
        le=7 * 24 * 60,
        description="An incremental Confluence sync also asks for pages changed this long before "
        "the last one began (edits saved while it ran, clocks apart).",
    )
    lore_confluence_full_sync_days: float = Field(
        default=7,
        ge=0,
        le=365,
        description="Days between complete listings of a Confluence attachment, which remove deleted "
        "and moved-out pages (0: every sync is complete). A GitHub attachment is listed completely at every "
        "sync (ETags keep it cheap); its complete listings also send no ETag.",
    )
    lore_permission_sync_minutes: float = Field(
        default=30,
        gt=0,
        le=24 * 60,
        description="Minutes between permission syncs of a connected source's attachments: who may "
        "read each page, read again without its content. A removed restriction or reader takes "
        "effect at the next one.",
    )
    lore_group_sync_minutes: float = Field(
        default=30,
        gt=0,
        le=24 * 60,
        description="Minutes between group syncs of a connected source: who is in the groups its "
        "pages' restrictions name, and the emails that tie its people to Slack's.",
    )

    lore_notion_requests_per_second: float = Field(
        default=3,
        ge=0,
        le=100,
        description="The average rate a Notion sync keeps to, in requests a second (Notion allows an "
        "integration about three; 0: as fast as answers come). A 429's Retry-After is honoured either way.",
    )

    @field_validator("embedding_model")
    @classmethod
    def _known_embedder(cls, value: str) -> str:
        value = value.strip()
        if value == LOCAL_EMBEDDING_MODEL:
            return value
        if value.startswith(OPENAI_EMBEDDING_PREFIX) and len(value) > len(OPENAI_EMBEDDING_PREFIX):
            return value
        raise ValueError(f"must be {LOCAL_EMBEDDING_MODEL} or openai:<model name>")

    @field_validator("openai_base_url", "openai_api_key", mode="before")
    @classmethod
    def _blank_llm_is_unset(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    @property
    def llm_configured(self) -> bool:
        """True when a chat model endpoint is configured (a key, a base URL, or both)."""
        return self.openai_api_key is not None or self.openai_base_url is not None

    @property
    def max_file_bytes(self) -> int:
        return self.lore_max_file_mb * 1024 * 1024

    @property
    def extraction_limits(self) -> ExtractionLimits:
        """What reading one document may cost; documents are read in worker processes."""
        return ExtractionLimits(
            max_bytes=self.max_file_bytes,
            max_chars=self.lore_max_document_chars,
            seconds=self.lore_extract_timeout_seconds,
            memory_mb=self.lore_extract_memory_mb,
        )
