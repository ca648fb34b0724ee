"""Index management through the API: create, list, info, delete (owner key only)."""

from __future__ import annotations

import pytest

from tests.api.conftest import LoreApi
from tests.api.test_auth import assert_error

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def test_create_then_get_info(api: LoreApi) -> None:
    created = await api.create_index("Runbooks")
    assert created["name"] == "Runbooks"
    assert created["scope"] == "shared"
    assert (created["documents"], created["chunks"], created["latest_document"]) == (0, 0, None)
    assert created["deletable"] is True
    await api.add_text(
        "Runbooks", "restart.md", "# Restart\n\nRestart the API with `make restart` on the bastion."
    )
    status, info = await api.call("GET", "/v1/indexes/runbooks")  # names match without case
    assert status == 200
    assert info["documents"] == 1 and info["chunks"] >= 1
    assert info["latest_document"]["name"] == "restart.md"
    assert info["last_job"] is None


async def test_info_shows_the_last_indexing_job(api: LoreApi) -> None:
    created = await api.create_index("crawled")
    job = api.services.jobs.repository.create(created["id"], None)
    status, info = await api.call("GET", "/v1/indexes/crawled")
    assert status == 200
    assert info["last_job"]["id"] == job.id
    assert info["last_job"]["state"] == "queued"
    assert info["last_job"]["finished_at"] is None


async def test_list_shows_sizes_and_what_the_key_may_delete(api: LoreApi) -> None:
    await api.create_index("listed")
    status, body = await api.call("GET", "/v1/indexes")
    assert status == 200
    rows = {i["name"]: i for i in body["indexes"]}
    assert rows["listed"]["deletable"] is True
    assert rows["general"]["deletable"] is False
    assert rows["general"]["scope"] == "channel"
    assert rows["general"]["documents"] == 1


async def test_names_are_unique(api: LoreApi) -> None:
    await api.create_index("unique-name")
    status, body = await api.call("POST", "/v1/indexes", json_body={"name": "unique-name"})
    assert status == 409
    assert "already" in assert_error(body, "conflict_error")


@pytest.mark.parametrize(
    ("body", "named"),
    [({}, "name"), ({"name": ""}, "name"), ({"name": "a/b"}, "/"), ({"name": "x" * 81}, "name")],
)
async def test_invalid_names_are_a_400_naming_the_problem(
    api: LoreApi, body: dict[str, str], named: str
) -> None:
    status, answer = await api.call("POST", "/v1/indexes", json_body=body)
    assert status == 400
    assert named in assert_error(answer, "invalid_request_error")


async def test_a_body_that_is_not_json_is_a_400(api: LoreApi) -> None:
    headers = {"Content-Type": "application/json"}
    status, body = await api.call("POST", "/v1/indexes", data=b"{not json", headers=headers)
    assert status == 400
    assert "JSON" in assert_error(body, "invalid_request_error")


async def test_only_the_owner_key_deletes(api: LoreApi) -> None:
    await api.create_index("owned-by-ci")
    status, body = await api.call("DELETE", "/v1/indexes/owned-by-ci", key="ada")
    assert status == 403
    assert "created" in assert_error(body, "permission_error")
    assert (await api.call("DELETE", "/v1/indexes/owned-by-ci"))[0] == 204
    assert (await api.call("GET", "/v1/indexes/owned-by-ci"))[0] == 404


async def test_a_key_for_a_user_owns_what_it_creates_as_that_user(api: LoreApi) -> None:
    await api.create_index("ada-made", key="ada")
    assert (await api.call("DELETE", "/v1/indexes/ada-made", key="service"))[0] == 403
    assert (await api.call("DELETE", "/v1/indexes/ada-made", key="ada"))[0] == 204


async def test_channel_indexes_cannot_be_deleted_through_the_api(api: LoreApi) -> None:
    assert (await api.call("DELETE", "/v1/indexes/general"))[0] == 403


async def test_unknown_index_suggests_a_close_name(api: LoreApi) -> None:
    await api.create_index("handbook")
    status, body = await api.call("GET", "/v1/indexes/handbok")
    assert status == 404
    assert "handbook" in assert_error(body, "not_found_error")
