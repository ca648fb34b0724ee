"""The composition root: builds every long-lived object from `Settings`, once.

Nothing else constructs engines, clients or embedders; the CLI, the Slack app, the shell
and the HTTP API all receive a `Services`. What only fetching serves (connectors, indexing
jobs, the crawler's allow-list) is built on first use, so that a command that fetches
nothing, like `lore ask`, does not import the crawler, aiohttp and the connectors.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from bot.app.settings import Settings
from knowledge import (
    AllowList,
    AnswerSpec,
    Catalog,
    DocumentReader,
    Embedder,
    Ingestor,
    Knowledge,
    OpenAIChatModel,
    Retriever,
    VerifiedAnswers,
    build_embedder,
)
from storage.db import Database, open_database
from storage.deployment import deployment, open_namespace
from storage.keyword import KeywordIndex
from storage.repositories.answers import AnswerRepository
from storage.repositories.directory import Directory
from storage.repositories.documents import DocumentRepository
from storage.repositories.events import EventLog
from storage.repositories.indexes import IndexRepository
from storage.repositories.source_access import SourceAccessRepository
from storage.repositories.sources import SourceRepository
from storage.repositories.verified import VerifiedRepository
from storage.scrub import Scrubber
from storage.vectors import ChromaVectorStore, VectorStore, chroma_client

if TYPE_CHECKING:
    from openai import AsyncOpenAI

    from bot.app.actions import Actions, SlackMembers
    from bot.app.audit import Auditor
    from bot.app.forgetting import Forgetting
    from bot.app.gaps import CoverageGaps
    from bot.app.removals import WorkspaceRemovals
    from bot.app.retention import RetentionService
    from bot.app.signin import ConsoleSignIn
    from knowledge import AccessSync, Connections, IndexingJobs, Resolve


@dataclass
class Services:
    settings: Settings
    db: Database
    directory: Directory
    indexes: IndexRepository
    documents: DocumentRepository
    vectors: VectorStore
    embedder: Embedder
    llm: AsyncOpenAI | None
    catalog: Catalog
    ingestor: Ingestor
    retriever: Retriever
    knowledge: Knowledge
    sources: SourceRepository
    answers: AnswerRepository
    deliveries: EventLog
    """Slack deliveries already handled (each event is acted on once, across restarts)."""
    verified: VerifiedAnswers
    """Verified answers, matched first (`knowledge`)."""
    verified_answers: VerifiedRepository
    """Where verified answers are kept, per index."""
    source_access: SourceAccessRepository
    """What connected sources say about people and groups, grants, and when each permission
    and group sync last ran."""
    scrubber: Scrubber
    """Clears deleted text from the local stores' files after removals."""
    slack_members: SlackMembers | None = None
    """Who is in a Slack channel or user group, read with the workspace's token: set by the
    entry point that knows Slack (`bot.slack.memberships`); None where there is no Slack (the
    shell), and then restrictions to Slack groups let nobody through (fail closed)."""
    resolve: Resolve | None = None
    """How fetches and connectors look host names up: None for the system's resolver (tests
    pass one that never uses DNS)."""

    @cached_property
    def allow(self) -> AllowList:
        """The private hosts fetching may reach (`LORE_CRAWL_ALLOW`; none by default)."""
        return AllowList.parse(self.settings.lore_crawl_allow)

    @cached_property
    def jobs(self) -> IndexingJobs:
        """Indexing jobs: crawls and connector syncs, queued in SQL."""
        from knowledge import IndexingJobs
        from storage.repositories.jobs import JobRepository

        return IndexingJobs(JobRepository(self.db), self.sources, self.indexes, self.ingestor, self.allow)

    @cached_property
    def connections(self) -> Connections:
        """Connections to connectors; credentials are sealed with LORE_SECRET_KEY when it is set."""
        from knowledge import ClientLimits, Connections, system_resolve
        from storage.repositories.connections import ConnectionRepository
        from storage.secrets import SecretBox

        key = self.settings.lore_secret_key
        box = SecretBox(key.get_secret_value()) if key is not None else None
        limits = ClientLimits(
            timeout=self.settings.lore_crawl_timeout_seconds,
            max_bytes=self.settings.max_file_bytes,
            requests_per_second={"notion": self.settings.lore_notion_requests_per_second},
        )
        return Connections(
            ConnectionRepository(self.db, box),
            self.allow,
            resolve=self.resolve or system_resolve,
            limits=limits,
        )

    @cached_property
    def access_sync(self) -> AccessSync:
        """Permission and group syncs of connected sources, on their settings' schedules."""
        from datetime import timedelta

        from knowledge import AccessPolicy, AccessSync

        settings = self.settings
        policy = AccessPolicy(
            permissions_every=timedelta(minutes=settings.lore_permission_sync_minutes),
            groups_every=timedelta(minutes=settings.lore_group_sync_minutes),
        )
        return AccessSync(self.connections, self.source_access, self.sources, self.documents, policy)

    @cached_property
    def removals(self) -> WorkspaceRemovals:
        """Workspaces Lore was uninstalled from: their data's removal, after a grace period."""
        from bot.app.removals import WorkspaceRemovals
        from storage.repositories.removals import Removals

        return WorkspaceRemovals(self, Removals(self.db))

    @cached_property
    def audit(self) -> Auditor:
        """The audit log, which the use cases append to."""
        from bot.app.audit import Auditor

        return Auditor(self.db, self.directory)

    @cached_property
    def retention(self) -> RetentionService:
        """How long questions are kept (and forgetting a person)."""
        from bot.app.retention import RetentionService

        return RetentionService(self)

    @cached_property
    def forgetting(self) -> Forgetting:
        """Jobs that forget a person (queued by `lore forget-user` and the console)."""
        from bot.app.forgetting import Forgetting

        return Forgetting(self)

    @cached_property
    def gaps(self) -> CoverageGaps:
        """The coverage-gap job: unresolved questions grouped by meaning."""
        from bot.app.gaps import CoverageGaps

        return CoverageGaps(self)

    @cached_property
    def signin(self) -> ConsoleSignIn:
        """Signing in to the admin console, and its sessions."""
        from bot.app.signin import ConsoleSignIn

        return ConsoleSignIn(self)

    @cached_property
    def actions(self) -> Actions:
        """The use cases every surface calls (they check the permission table)."""
        from bot.app.actions import Actions

        return Actions(self)

    async def aclose(self) -> None:
        self.ingestor.close()
        self.documents.close()
        self.scrubber.close()
        if self.llm is not None:
            await self.llm.close()
        self.db.dispose()


def build_services(settings: Settings, *, migrate: bool = True, resolve: Resolve | None = None) -> Services:
    """Open the database (migrating it), the vector store, the embedder and the LLM client.
    `resolve` is how connectors look host names up (tests pass one that never uses DNS)."""
    settings.lore_home.mkdir(parents=True, exist_ok=True)
    db = open_database(settings.effective_database_url, migrate=migrate, pool=settings.pool)
    llm = build_llm_client(settings)
    scrubber: Scrubber
    indexes, documents = IndexRepository(db), DocumentRepository(db, on_delete=lambda: scrubber.request())
    try:
        vectors = build_vector_store(settings, deployment(db).id, on_delete=lambda: scrubber.request())
        open_namespace(db, vectors, server=settings.chroma_host is not None)
    except BaseException:
        db.dispose()
        raise
    scrubber = Scrubber(db, vectors.compact)
    embedder = build_embedder(settings, llm)
    retriever = Retriever(documents, vectors, KeywordIndex(db), embedder)
    chat = OpenAIChatModel(llm, settings.llm_model) if llm is not None else None
    verified_answers = VerifiedRepository(db)
    verified = VerifiedAnswers(verified_answers, embedder)
    ingestor = Ingestor(
        documents,
        vectors,
        embedder,
        max_bytes=settings.max_file_bytes,
        reader=DocumentReader(settings.extraction_limits),
        max_table_chunks=settings.lore_max_table_chunks,
    )
    return Services(
        settings=settings,
        db=db,
        directory=Directory(db),
        indexes=indexes,
        documents=documents,
        vectors=vectors,
        embedder=embedder,
        llm=llm,
        catalog=Catalog(indexes, vectors, embedder),
        ingestor=ingestor,
        retriever=retriever,
        knowledge=Knowledge(
            retriever,
            chat,
            window=settings.llm_context_window,
            spec=AnswerSpec(llm_rerank=settings.llm_rerank, llm_verify=settings.llm_verify),
            verified=verified,
        ),
        sources=SourceRepository(db),
        answers=AnswerRepository(db),
        deliveries=EventLog(db),
        verified=verified,
        verified_answers=verified_answers,
        source_access=SourceAccessRepository(db),
        scrubber=scrubber,
        resolve=resolve,
    )


def build_vector_store(
    settings: Settings, deployment: str | None = None, *, on_delete: Callable[[], None] | None = None
) -> ChromaVectorStore:
    """The Chroma store `settings` name; its collections in `deployment`'s namespace."""
    if settings.chroma_host:
        where = f"Chroma server at {settings.chroma_host}:{settings.chroma_port}"
        client = chroma_client(host=settings.chroma_host, port=settings.chroma_port)
    else:
        where = f"embedded Chroma at {settings.chroma_path}"
        client = chroma_client(path=settings.chroma_path)
        return ChromaVectorStore(
            client,
            description=where,
            deployment=deployment,
            folder=settings.chroma_path,
            on_delete=on_delete,
        )
    return ChromaVectorStore(client, description=where, deployment=deployment, on_delete=on_delete)


def build_llm_client(settings: Settings) -> AsyncOpenAI | None:
    """An `AsyncOpenAI` client when an endpoint is configured, else None (extractive mode)."""
    if not settings.llm_configured:
        return None
    from openai import AsyncOpenAI

    key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else "unused"
    return AsyncOpenAI(
        api_key=key,
        base_url=settings.openai_base_url,
        timeout=settings.llm_timeout_seconds,
        max_retries=settings.llm_max_retries,
    )
