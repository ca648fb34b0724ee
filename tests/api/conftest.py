"""Lore's HTTP API on loopback: the real aiohttp app on 127.0.0.1, SQLite and embedded
Chroma under tmp_path, and the fake OpenAI-compatible server as the model when asked for.

    async def test_something(api: LoreApi) -> None:
        status, body = await api.call("GET", "/v1/indexes")

Module-scoped fixtures (`offline_api`, `llm_api`) keep one runtime per test module, since
loading the embedder takes a second; `api` and `gpt` hand each test the same server with a
fresh window on the fake model's requests. Tests keep apart by using their own index names.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import pytest_asyncio
from aiohttp.test_utils import TestServer
from cryptography.fernet import Fernet

from bot.api import build_api
from bot.api.state import API_STATE
from bot.app.settings import Settings
from bot.chat.runtime import Runtime, open_runtime
from bot.cli.mcp import mount_mcp
from storage.records import IndexRef
from storage.repositories.api_keys import ApiKeyRepository
from storage.repositories.directory import Directory
from tests.fakes.openai_server import FakeOpenAI, RecordedRequest, Reply

os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

TENANT = "T0001"
OTHER_TENANT = "T0002"
DEFAULT_REPLY = Reply("This is a fake reply.")
WINDOW = 4096
"""The fake model's context window: small, so budgets and limits are easy to reach."""
Json = dict[str, Any]


def api_settings(home: Path, llm: FakeOpenAI | None = None, **extra: Any) -> Settings:
    values: dict[str, Any] = {
        "lore_home": home,
        "database_url": None,
        "chroma_host": None,
        "slack_bot_token": None,
        "openai_api_key": "test" if llm else None,
        "openai_base_url": llm.base_url if llm else None,
        "llm_model": "gpt-fake",
        "llm_max_retries": 0,
        "lore_jobs_in_process": False,
        "lore_secret_key": Fernet.generate_key().decode(),
    }
    return Settings(_env_file=None, **{**values, **extra})


async def no_dns(host: str) -> list[str]:
    """The API servers' name lookups: none. What a test (or the fuzzer) sends is never
    looked up, so no request leaves this machine; literal loopback addresses still work."""
    raise OSError(f"API tests look up no host names ({host})")


@dataclass
class Keys:
    """Secrets of the keys every test server starts with."""

    service: str
    """A tenant key acting as its own service user."""
    ada: str
    """A key created for the user `UADA`, who has a personal index."""
    other_tenant: str
    revoked: str


@dataclass
class LoreApi:
    runtime: Runtime
    server: TestServer
    http: aiohttp.ClientSession
    keys: Keys
    llm: FakeOpenAI | None
    seen: int = 0
    indexes: dict[str, IndexRef] = field(default_factory=dict)

    @property
    def base_url(self) -> str:
        return str(self.server.make_url("")).rstrip("/")

    @property
    def services(self) -> Any:
        return self.runtime.services

    def begin(self) -> None:
        """Forget the fake model's requests so far: `chat_requests` shows this test's only."""
        self.seen = len(self.llm.chat_requests) if self.llm else 0

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        assert self.llm is not None
        return self.llm.chat_requests[self.seen :]

    async def call(
        self,
        method: str,
        path: str,
        *,
        key: str | None = "service",
        json_body: Any = None,
        data: Any = None,
        headers: Mapping[str, str] | None = None,
        params: Mapping[str, str] | None = None,
    ) -> tuple[int, Any]:
        """One request; the status and the decoded JSON body (text if not JSON, None if empty)."""
        sent = dict(headers or {})
        if key is not None:
            sent["Authorization"] = f"Bearer {getattr(self.keys, key, key)}"
        async with self.http.request(
            method, self.base_url + path, json=json_body, data=data, headers=sent, params=params
        ) as response:
            raw = await response.read()
            if not raw:
                return response.status, None
            if response.content_type == "application/json":
                return response.status, json.loads(raw)
            return response.status, raw.decode()

    async def add_text(self, index: str, name: str, text: str, **fields: Any) -> Json:
        body = {
            "name": name,
            "text": text,
            "context_type": "technical",
            "content_domain": "engineering",
            "document_category": "handbook",
            **fields,
        }
        status, answer = await self.call("POST", f"/v1/indexes/{index}/documents/text", json_body=body)
        assert status in (200, 201), answer
        return dict(answer)

    async def create_index(self, name: str, key: str = "service") -> Json:
        status, body = await self.call("POST", "/v1/indexes", json_body={"name": name}, key=key)
        assert status == 201, body
        return dict(body)


def _seed(runtime: Runtime) -> Keys:
    """Keys, users and channel indexes every test server starts with."""
    db = runtime.services.db
    directory, keys = Directory(db), ApiKeyRepository(db)
    for tenant in (TENANT, OTHER_TENANT):
        directory.ensure_tenant(tenant)
    ada = directory.ensure_user(TENANT, "UADA", "ada")
    revoked = keys.create(TENANT, "revoked")
    keys.revoke(str(revoked.key.id))
    return Keys(
        service=keys.create(TENANT, "ci").secret,
        ada=keys.create(TENANT, "ada's laptop", user_id=ada.id).secret,
        other_tenant=keys.create(OTHER_TENANT, "elsewhere").secret,
        revoked=revoked.secret,
    )


async def _seed_indexes(api: LoreApi) -> None:
    """Ada's personal index, a public and a private channel index, each with one document."""
    services = api.services
    directory = services.directory
    ada = directory.ensure_user(TENANT, "UADA", "ada")
    public = directory.ensure_channel(TENANT, "CPUB", "general", is_private=False)
    private = directory.ensure_channel(TENANT, "CPRIV", "secret-plans", is_private=True)
    api.indexes["personal"] = await services.catalog.personal_index(ada)
    api.indexes["general"] = await services.catalog.channel_index(public)
    api.indexes["secret-plans"] = await services.catalog.channel_index(private)
    from knowledge.indexing.ingest import Source

    notes = {
        "personal": "Ada's private note: the spare office key is under the blue plant pot.",
        "general": "The general channel agreed that standup moves to 9:45 on Mondays.",
        "secret-plans": "The secret plan is to rename the product to Nimbus in March.",
    }
    for name, text in notes.items():
        source = Source(name=f"{name}.md", data=text.encode(), mime_type="text/markdown")
        await services.ingestor.add(api.indexes[name], source)


@asynccontextmanager
async def running_api(
    home: Path, *, llm: bool = False, seed: bool = True, mcp: bool = False, **settings: Any
) -> AsyncIterator[LoreApi]:
    """The API (and with `mcp`, MCP at /mcp beside it, as `lore serve` mounts it)."""
    async with AsyncExitStack() as stack:
        fake = await stack.enter_async_context(FakeOpenAI()) if llm else None
        config = api_settings(home, fake, **settings)
        runtime = await stack.enter_async_context(open_runtime(config, resolve=no_dns))
        keys = _seed(runtime)
        app = build_api(runtime.services)
        if mcp:
            mount_mcp(app, runtime, app[API_STATE])
        server = TestServer(app, host="127.0.0.1")
        await server.start_server()
        stack.push_async_callback(server.close)
        http = await stack.enter_async_context(aiohttp.ClientSession())
        api = LoreApi(runtime, server, http, keys, fake)
        if seed:
            await _seed_indexes(api)
        yield api


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def offline_api(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[LoreApi]:
    """The API without a language model (extractive answers), shared by a test module."""
    async with running_api(tmp_path_factory.mktemp("lore-api-offline")) as api:
        yield api


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def llm_api(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[LoreApi]:
    """The API with the fake OpenAI server as its model, shared by a test module."""
    home = tmp_path_factory.mktemp("lore-api-llm")
    async with running_api(home, llm=True, llm_context_window=WINDOW) as api:
        yield api


@pytest.fixture
def api(offline_api: LoreApi) -> LoreApi:
    return offline_api


@pytest.fixture
def gpt(llm_api: LoreApi) -> LoreApi:
    llm_api.begin()
    assert llm_api.llm is not None
    llm_api.llm.default_reply = DEFAULT_REPLY
    return llm_api
