"""The fake Confluence's permission endpoints speak Confluence's shapes: a space's read
permission on Cloud (`expand=permissions`) and on Data Center (`/permissions`), a page's
view restriction (on listings and `restriction/byOperation`), groups and their members
(Cloud by id, Data Center by name), people with or without a visible email, and a failure
mode for all of them."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from tests.fakes.confluence_server import EMAIL, TOKEN, FakeConfluence

CLOUD = {"Authorization": "Basic " + base64.b64encode(f"{EMAIL}:{TOKEN}".encode()).decode()}
PAT = "dc-personal-access-token-0123456789"
CENTER = {"Authorization": f"Bearer {PAT}"}


@pytest.fixture
async def fake() -> AsyncIterator[FakeConfluence]:
    async with FakeConfluence(pat=PAT, page_size=2) as confluence:
        confluence.add_user("acc-ada", "ada@example.com", "Ada")
        confluence.add_user("acc-bob", "bob@example.com", "Bob", email_visible=False)
        confluence.add_group("finance", ["acc-ada", "acc-bob", "acc-cy"])
        confluence.add_space(
            "FIN", "Finance", anonymous=False, viewers=["group:confluence-users", "user:acc-bob"]
        )
        confluence.add_space("PUB", "Public")
        yield confluence


async def get(fake: FakeConfluence, path: str, headers: dict[str, str], **params: Any) -> tuple[int, Any]:
    async with (
        aiohttp.ClientSession() as http,
        http.get(fake.base_url + path, params=params, headers=headers) as response,
    ):
        return response.status, await response.json()


async def test_cloud_space_permissions_name_who_may_read_and_whether_anonymous_users_may(
    fake: FakeConfluence,
) -> None:
    status, space = await get(fake, "/rest/api/space/FIN", CLOUD, expand="permissions")
    assert status == 200
    reads = [
        p for p in space["permissions"] if p["operation"] == {"operation": "read", "targetType": "space"}
    ]
    assert [p["anonymousAccess"] for p in reads] == [False]
    assert [g["name"] for g in reads[0]["subjects"]["group"]["results"]] == ["confluence-users"]
    assert [u["accountId"] for u in reads[0]["subjects"]["user"]["results"]] == ["acc-bob"]
    _, public = await get(fake, "/rest/api/space/PUB", CLOUD, expand="permissions")
    assert any(p["anonymousAccess"] for p in public["permissions"] if p["operation"]["operation"] == "read")
    _, bare = await get(fake, "/rest/api/space/PUB", CLOUD)
    assert "permissions" not in bare
    assert (await get(fake, "/rest/api/space/NOPE", CLOUD))[0] == 404


async def test_data_center_space_permissions_are_one_entry_per_subject(fake: FakeConfluence) -> None:
    status, entries = await get(fake, "/rest/api/space/FIN/permissions", CENTER)
    assert status == 200
    reads = [e["subject"] for e in entries if e["operation"]["operationKey"] == "read"]
    assert reads == [{"type": "group", "name": "confluence-users"}, {"type": "user", "userKey": "acc-bob"}]
    _, public = await get(fake, "/rest/api/space/PUB/permissions", CENTER)
    assert {"type": "anonymous"} in [e["subject"] for e in public]


async def test_a_page_view_restriction_on_listings_and_by_operation(fake: FakeConfluence) -> None:
    page = fake.add_page("FIN", "Payroll", "<p>secret</p>")
    fake.restrict(page, "user:acc-ada", "group:finance")
    expand = "restrictions.read.restrictions.user,restrictions.read.restrictions.group"
    _, listing = await get(fake, "/rest/api/content/search", CLOUD, cql=f"id = {page}", expand=expand)
    read = listing["results"][0]["restrictions"]["read"]
    assert read["operation"] == "read"
    assert [u["accountId"] for u in read["restrictions"]["user"]["results"]] == ["acc-ada"]
    assert [(g["name"], g["id"]) for g in read["restrictions"]["group"]["results"]] == [
        ("finance", fake.groups["finance"].id)
    ]
    _, both = await get(fake, f"/rest/api/content/{page}/restriction/byOperation", CLOUD)
    assert set(both) == {"read", "update"}
    _, only = await get(fake, f"/rest/api/content/{page}/restriction/byOperation/read", CENTER)
    assert [u["userKey"] for u in only["restrictions"]["user"]["results"]] == [
        "acc-ada"
    ]  # Data Center's shape
    fake.restrict(page)
    _, lifted = await get(fake, f"/rest/api/content/{page}/restriction/byOperation/read", CLOUD)
    assert lifted["restrictions"]["user"]["results"] == [] and lifted["restrictions"]["group"]["size"] == 0
    assert fake.pages[page].version == 1  # restricting is not an edit


async def test_group_members_by_id_on_cloud_and_by_name_on_data_center(fake: FakeConfluence) -> None:
    _, found = await get(fake, "/rest/api/group/by-name", CLOUD, name="finance")
    assert found == {"type": "group", "name": "finance", "id": fake.groups["finance"].id}
    _, first = await get(fake, f"/rest/api/group/{found['id']}/membersByGroupId", CLOUD)
    assert [m["accountId"] for m in first["results"]] == ["acc-ada", "acc-bob"]
    assert [m["email"] for m in first["results"]] == ["ada@example.com", ""]  # Bob hides his
    assert "next" in first["_links"]  # the third member is on the next page
    _, center = await get(fake, "/rest/api/group/finance/member", CENTER, start=2)
    assert [m["username"] for m in center["results"]] == ["acc-cy"] and "next" not in center["_links"]
    assert (await get(fake, "/rest/api/group/by-name", CLOUD, name="nope"))[0] == 404


async def test_people_by_account_id_or_user_key(fake: FakeConfluence) -> None:
    _, ada = await get(fake, "/rest/api/user", CLOUD, accountId="acc-ada")
    assert (ada["accountId"], ada["email"]) == ("acc-ada", "ada@example.com")
    _, bob = await get(fake, "/rest/api/user", CENTER, key="acc-bob")
    assert bob["userKey"] == "acc-bob" and "email" not in bob
    assert (await get(fake, "/rest/api/user", CLOUD, accountId="acc-nobody"))[0] == 404


async def test_failing_permissions_answers_500_but_listings_still_come(fake: FakeConfluence) -> None:
    page = fake.add_page("FIN", "Payroll", "<p>secret</p>")
    fake.fail_permissions = True
    assert (await get(fake, "/rest/api/space/FIN", CLOUD, expand="permissions"))[0] == 500
    assert (await get(fake, f"/rest/api/content/{page}/restriction/byOperation/read", CLOUD))[0] == 500
    assert (await get(fake, "/rest/api/group/finance/member", CENTER))[0] == 500
    status, listing = await get(
        fake,
        "/rest/api/content/search",
        CLOUD,
        cql=f"id = {page}",
        expand="restrictions.read.restrictions.user",
    )
    assert status == 200 and listing["results"][0]["id"] == page
