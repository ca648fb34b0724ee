"""API keys and what each key may see: through real HTTP on loopback."""

from __future__ import annotations

import json

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from bot.api.errors import error_boundary
from storage.repositories.api_keys import ApiKeyRepository
from tests.api.conftest import TENANT, LoreApi

pytestmark = pytest.mark.asyncio(loop_scope="module")


def assert_error(body: object, kind: str) -> str:
    """The stable error shape; returns the message."""
    assert isinstance(body, dict) and set(body) == {"error"}, body
    assert set(body["error"]) == {"type", "message"}, body
    assert body["error"]["type"] == kind
    return str(body["error"]["message"])


async def test_a_request_without_a_key_is_refused_saying_how_to_get_one(api: LoreApi) -> None:
    async with api.http.get(api.base_url + "/v1/indexes") as response:
        assert response.status == 401
        assert response.headers["WWW-Authenticate"].startswith("Bearer")
        message = assert_error(await response.json(), "authentication_error")
    assert "lore api-key create" in message


@pytest.mark.parametrize("header", ["Basic dXNlcjpwYXNz", "Bearer", "Bearer lore_not-a-real-key", "lore_x"])
async def test_malformed_or_unknown_keys_are_refused(api: LoreApi, header: str) -> None:
    status, body = await api.call("GET", "/v1/indexes", key=None, headers={"Authorization": header})
    assert status == 401
    assert_error(body, "authentication_error")


async def test_a_revoked_key_is_refused(api: LoreApi) -> None:
    status, body = await api.call("GET", "/v1/indexes", key="revoked")
    assert status == 401
    assert "revoked" in assert_error(body, "authentication_error")


async def test_revoking_takes_effect_at_once(api: LoreApi) -> None:
    keys = ApiKeyRepository(api.services.db)
    issued = keys.create(TENANT, "short-lived")
    assert (await api.call("GET", "/v1/models", key=issued.secret))[0] == 200
    keys.revoke("short-lived", tenant_id=TENANT)
    assert (await api.call("GET", "/v1/models", key=issued.secret))[0] == 401


async def test_use_is_recorded_without_a_write_per_request(api: LoreApi) -> None:
    keys = ApiKeyRepository(api.services.db)
    issued = keys.create(TENANT, "counted")
    assert issued.key.last_used_at is None
    for _ in range(3):
        assert (await api.call("GET", "/v1/models", key=issued.secret))[0] == 200
    used = keys.get(issued.key.id)
    assert used.last_used_at is not None
    assert used.last_used_at >= used.created_at


async def test_health_needs_no_key(api: LoreApi) -> None:
    assert await api.call("GET", "/healthz", key=None) == (200, {"status": "ok"})


async def visible(api: LoreApi, key: str) -> set[str]:
    status, body = await api.call("GET", "/v1/indexes", key=key)
    assert status == 200, body
    return {i["name"] for i in body["indexes"]}


async def test_a_service_key_sees_shared_and_public_channel_indexes_only(api: LoreApi) -> None:
    await api.create_index("auth-shared")
    names = await visible(api, "service")
    assert {"auth-shared", "general"} <= names
    assert "personal" not in names
    assert "secret-plans" not in names


async def test_a_key_created_for_a_user_also_sees_that_users_personal_index(api: LoreApi) -> None:
    names = await visible(api, "ada")
    assert {"personal", "general"} <= names
    assert "secret-plans" not in names


async def test_nothing_crosses_tenants(api: LoreApi) -> None:
    await api.create_index("tenant-one-only")
    assert not {"tenant-one-only", "general", "personal"} & await visible(api, "other_tenant")
    status, body = await api.call("GET", "/v1/indexes/tenant-one-only", key="other_tenant")
    assert status == 404
    assert_error(body, "not_found_error")


@pytest.mark.parametrize(("key", "index", "status"), [
    ("service", "personal", 404),
    ("service", "secret-plans", 404),
    ("ada", "secret-plans", 404),
    ("ada", "personal", 200),
    ("service", "general", 200),
])  # fmt: skip
async def test_index_info_follows_the_access_policy(api: LoreApi, key: str, index: str, status: int) -> None:
    assert (await api.call("GET", f"/v1/indexes/{index}", key=key))[0] == status


async def test_private_indexes_are_not_searchable_through_a_service_key(api: LoreApi) -> None:
    query = {"query": "what is the secret plan for the product name?"}
    status, body = await api.call("POST", "/v1/indexes/secret-plans/query", json_body=query)
    assert status == 404
    assert_error(body, "not_found_error")
    status, body = await api.call(
        "POST", "/v1/indexes/personal/query", json_body={"query": "office key"}, key="ada"
    )
    assert status == 200
    assert "blue plant pot" in body["matches"][0]["text"]


async def test_documents_go_into_a_channel_index_only_from_its_channel(api: LoreApi) -> None:
    body = {"text": "x", "context_type": "a", "content_domain": "b", "document_category": "c"}
    status, answer = await api.call("POST", "/v1/indexes/general/documents/text", json_body=body)
    assert status == 403
    assert "channel" in assert_error(answer, "permission_error")


async def test_unknown_routes_and_methods_answer_in_the_error_shape(api: LoreApi) -> None:
    status, body = await api.call("GET", "/v1/nothing-here")
    assert status == 404
    assert "/openapi.json" in assert_error(body, "not_found_error")
    status, body = await api.call("PUT", "/v1/indexes")
    assert status == 405
    assert_error(body, "method_not_allowed")


async def test_an_unexpected_failure_is_a_500_without_details() -> None:
    async def broken(_request: web.Request) -> web.Response:
        raise RuntimeError("database password is hunter2")

    app = web.Application(middlewares=[error_boundary])
    app.router.add_get("/broken", broken)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    try:
        async with aiohttp.ClientSession() as http, http.get(server.make_url("/broken")) as response:
            assert response.status == 500
            text = await response.text()
    finally:
        await server.close()
    assert "hunter2" not in text and "Traceback" not in text and "RuntimeError" not in text
    assert "log" in assert_error(json.loads(text), "internal_error")
