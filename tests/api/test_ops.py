"""Operations: /healthz, /readyz, /metrics and the OpenAPI document."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.api.app import ROUTES
from bot.api.openapi import openapi_path
from tests.api.conftest import LoreApi, running_api
from tests.fakes.openai_server import HttpError

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def test_ready_when_every_component_works(api: LoreApi) -> None:
    status, body = await api.call("GET", "/readyz", key=None)
    assert status == 200, body
    assert body["ready"] is True
    assert set(body["checks"]) == {"database", "vector_store", "embedder"}
    assert all(check == {"ok": True, "detail": "ok"} for check in body["checks"].values())


async def test_not_ready_when_the_embedder_fails(tmp_path: Path) -> None:
    remote = {"embedding_model": "openai:text-embedding-3-small"}
    async with running_api(tmp_path, llm=True, seed=False, **remote) as api:
        assert api.llm is not None
        api.llm.enqueue_embeddings(HttpError(500))
        status, body = await api.call("GET", "/readyz", key=None)
        assert status == 503
        assert body["ready"] is False
        assert body["checks"]["embedder"]["ok"] is False
        assert body["checks"]["database"]["ok"] is True
        status, body = await api.call("GET", "/readyz", key=None)  # the embedder works again
        assert status == 200 and body["checks"]["embedder"]["ok"] is True


async def test_metrics_count_requests_answers_and_ingests(api: LoreApi) -> None:
    await api.create_index("metered")
    await api.add_text("metered", "m.md", "# Metered\n\nThe meter reads forty-two.")
    body = {"messages": [{"role": "user", "content": "What does the meter read?"}], "index_name": "metered"}
    assert (await api.call("POST", "/v1/chat/completions", json_body=body))[0] == 200
    await api.call("GET", "/v1/indexes", key="revoked")
    status, text = await api.call("GET", "/metrics", key=None)
    assert status == 200
    assert 'lore_http_requests_total{method="POST",route="/v1/indexes",status="201"} 1' in text
    assert 'lore_http_requests_total{method="GET",route="/v1/indexes",status="401"} 1' in text
    assert re.search(
        r'lore_http_request_duration_seconds_bucket\{route="/v1/chat/completions",le="\+Inf"\} 1', text
    )
    assert re.search(r'lore_answers_total\{endpoint="chat",fallback="no_llm",mode="HYBRID"\} 1', text)
    assert 'lore_ingested_documents_total{outcome="added"} 1' in text
    assert "# TYPE lore_http_request_duration_seconds histogram" in text


async def test_metrics_count_jobs_by_state(api: LoreApi) -> None:
    created = await api.create_index("jobs-gauge")
    repository = api.services.jobs.repository
    before = repository.count_by_state().get("queued", 0)
    repository.create(created["id"], None)
    status, text = await api.call("GET", "/metrics", key=None)
    assert status == 200
    assert "# TYPE lore_indexing_jobs gauge" in text
    assert f'lore_indexing_jobs{{state="queued"}} {before + 1}' in text


async def test_the_openapi_document_describes_every_route(api: LoreApi) -> None:
    status, document = await api.call("GET", "/openapi.json", key=None)
    assert status == 200
    assert document["openapi"] == "3.1.0"
    served = {
        (route.method, route.resource.canonical)
        for route in api.server.app.router.routes()
        if route.resource is not None and route.method != "HEAD"
    }
    described = {(method.upper(), path) for path, ops in document["paths"].items() for method in ops}
    assert served == described
    assert {(r.method, openapi_path(r.path)) for r in ROUTES} == described
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            assert operation["responses"]["default"]["content"]["application/json"]["schema"][
                "$ref"
            ].endswith("ErrorBody"), (method, path)
    chat = document["paths"]["/v1/chat/completions"]["post"]
    assert "text/event-stream" in chat["responses"]["200"]["content"]
    assert document["paths"]["/healthz"]["get"]["security"] == []
    assert "security" not in chat  # the document's default: bearer
