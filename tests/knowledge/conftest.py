"""A real knowledge stack on tmp_path: SQLite, embedded Chroma, the offline embedder."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from openai import AsyncOpenAI

from knowledge.backends.embedding import LocalEmbedder
from knowledge.backends.llm import ChatModel, OpenAIChatModel
from knowledge.engine import AnswerSpec, Knowledge
from knowledge.indexing.ingest import Ingestor, Source
from knowledge.search.retrieval import Retriever
from storage.db import Database, open_database
from storage.keyword import KeywordIndex
from storage.records import IndexRef
from storage.repositories.directory import Directory
from storage.repositories.documents import DocumentRepository
from storage.repositories.indexes import IndexRepository
from storage.values import Scope
from storage.vectors import ChromaVectorStore, chroma_client
from tests.fakes.openai_server import FakeOpenAI

MB = 1024 * 1024


@pytest.fixture(scope="session")
def embedder() -> LocalEmbedder:
    model = LocalEmbedder()
    model.load()
    return model


@dataclass
class Stack:
    db: Database
    indexes: IndexRepository
    documents: DocumentRepository
    vectors: ChromaVectorStore
    keyword: KeywordIndex
    embedder: LocalEmbedder
    ingestor: Ingestor
    retriever: Retriever

    def knowledge(
        self, chat: ChatModel | None = None, window: int = 16_000, spec: AnswerSpec | None = None
    ) -> Knowledge:
        return Knowledge(self.retriever, chat, window=window, spec=spec)

    def index(self, name: str = "notes", tenant: str = "T1") -> IndexRef:
        Directory(self.db).ensure_tenant(tenant)
        return self.indexes.create(
            tenant,
            name,
            Scope.SHARED,
            embedding_model=self.embedder.model_id,
            embedding_dimension=self.embedder.dimension,
        )

    def fresh(self, index: IndexRef) -> IndexRef:
        """The index as stored now (its content version moves with every change)."""
        return self.indexes.get(index.id)


@pytest.fixture
def stack(tmp_path: Path, embedder: LocalEmbedder) -> Iterator[Stack]:
    db = open_database(f"sqlite:///{tmp_path / 'lore.db'}")
    documents = DocumentRepository(db)
    vectors = ChromaVectorStore(chroma_client(path=tmp_path / "chroma"))
    keyword = KeywordIndex(db)
    yield Stack(
        db=db,
        indexes=IndexRepository(db),
        documents=documents,
        vectors=vectors,
        keyword=keyword,
        embedder=embedder,
        ingestor=Ingestor(documents, vectors, embedder, max_bytes=5 * MB),
        retriever=Retriever(documents, vectors, keyword, embedder),
    )
    documents.close()
    db.dispose()


def md(name: str, text: str, **facts: object) -> Source:
    from knowledge.indexing.metadata import DocumentContext, DocumentFacts

    context = facts.pop("context", None)
    return Source(
        name=name,
        data=text.encode(),
        mime_type="text/markdown",
        facts=DocumentFacts(context=context or DocumentContext(), **facts),  # type: ignore[arg-type]
    )


HANDBOOK = """# Team handbook

## Deployments

We deploy the API every Tuesday at 10:00 UTC using the blue-green pipeline. Rollbacks are done by
switching the load balancer back to the previous colour, which takes about two minutes.

## On-call

The on-call engineer carries the pager for one week, from Monday to Monday. Escalate incidents of
severity one to the engineering manager within fifteen minutes.
"""

RECIPES = """# Kitchen notes

## Sourdough

Feed the starter with equal weights of flour and water the evening before baking. Bake the loaf at
250 degrees Celsius with steam for the first twenty minutes.
"""


async def aiter_list(items: list[Source]) -> AsyncIterator[Source]:
    for item in items:
        yield item


_CLIENTS: list[AsyncOpenAI] = []


@pytest.fixture
async def llm() -> AsyncIterator[FakeOpenAI]:
    """The fake OpenAI-compatible server; the clients `chat_model` made are closed after."""
    async with FakeOpenAI() as server:
        yield server
        while _CLIENTS:
            await _CLIENTS.pop().close()


def chat_model(server: FakeOpenAI, model: str = "gpt-fake") -> OpenAIChatModel:
    """A chat model talking to `server` (no retries: a test's failure shows at once)."""
    client = AsyncOpenAI(base_url=server.base_url, api_key="test", max_retries=0)
    _CLIENTS.append(client)
    return OpenAIChatModel(client, model)
