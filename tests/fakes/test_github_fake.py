"""The fake GitHub speaks GitHub's wire format: checked here with a plain HTTP client, apart
from Lore's connector (REST shapes, Link pagination, ETags and 304s that cost nothing,
rate-limit headers and both kinds of limits, git trees and blobs, a GitHub App's JWT
exchange, and GraphQL discussions validated against a schema as GitHub validates them)."""

from __future__ import annotations

import base64
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import aiohttp
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.fakes.github_server import APP_ID, INSTALLATION_ID, TOKEN, FakeGitHub, Seeded, blob_sha, seed

AUTH = {"Authorization": f"Bearer {TOKEN}", "Accept": "application/vnd.github+json"}
KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
PEM = KEY.private_bytes(
    serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
).decode()


@pytest.fixture
async def github() -> AsyncIterator[tuple[FakeGitHub, Seeded, aiohttp.ClientSession]]:
    async with FakeGitHub(app_key=KEY.public_key()) as fake, aiohttp.ClientSession() as http:
        yield fake, seed(fake), http


async def get(http: aiohttp.ClientSession, url: str, **headers: str) -> tuple[int, Any, Any]:
    async with http.get(url, headers={**AUTH, **headers}) as response:
        body = await response.json() if response.status != 304 else None
        return response.status, body, response.headers


async def test_credentials_are_required_and_rate_limits_are_counted(github: Any) -> None:
    fake, _, http = github
    async with http.get(f"{fake.base_url}/user") as response:
        assert response.status == 401 and (await response.json())["message"] == "Bad credentials"
    status, user, headers = await get(http, f"{fake.base_url}/user")
    assert status == 200 and user["login"] == "ada"
    assert headers["X-RateLimit-Limit"] == "5000" and headers["X-RateLimit-Resource"] == "core"
    _, _, again = await get(http, f"{fake.base_url}/user")
    assert int(again["X-RateLimit-Remaining"]) == int(headers["X-RateLimit-Remaining"]) - 1


async def test_a_matching_etag_gets_a_304_that_costs_nothing(github: Any) -> None:
    fake, _, http = github
    url = f"{fake.base_url}/repos/acme/payments"
    status, repo, headers = await get(http, url)
    assert status == 200 and repo["full_name"] == "acme/payments" and repo["visibility"] == "private"
    assert headers["ETag"].startswith('W/"')
    status, body, again = await get(http, url, **{"If-None-Match": headers["ETag"]})
    assert (status, body) == (304, None)
    assert again["X-RateLimit-Remaining"] == headers["X-RateLimit-Remaining"], "a 304 is free"
    fake.repo("acme/payments").description = "Payments, renamed"
    status, _, _ = await get(http, url, **{"If-None-Match": headers["ETag"]})
    assert status == 200, "a change changes the ETag"


async def test_issues_page_through_link_headers_with_pull_requests_among_them(github: Any) -> None:
    fake, seeded, http = github
    url = f"{fake.base_url}/repos/acme/payments/issues?state=all&sort=created&direction=asc&per_page=2"
    status, first, headers = await get(http, url)
    assert status == 200 and [i["number"] for i in first] == [seeded.timeout_issue, seeded.pull]
    assert 'rel="next"' in headers["Link"] and 'rel="last"' in headers["Link"]
    following = headers["Link"].split(";")[0].strip("<>")
    _, second, last = await get(http, following)
    assert [i["number"] for i in second] == [seeded.closed_issue] and 'rel="next"' not in last["Link"]
    assert "pull_request" in first[1] and "pull_request" not in first[0]
    assert first[0]["comments"] == 2 and first[0]["html_url"].endswith("/acme/payments/issues/1")
    _, open_only, _ = await get(http, f"{fake.base_url}/repos/acme/payments/issues?per_page=100")
    assert seeded.closed_issue not in [i["number"] for i in open_only], "state defaults to open"


async def test_a_comment_edit_moves_the_comment_not_its_issue(github: Any) -> None:
    fake, seeded, http = github
    before = fake.repo("acme/payments").issues[seeded.timeout_issue].updated
    fake.edit_comment("acme/payments", seeded.timeout_issue, seeded.timeout_comment, "45 s, now 60 s")
    assert fake.repo("acme/payments").issues[seeded.timeout_issue].updated == before
    url = f"{fake.base_url}/repos/acme/payments/issues/comments?since=2025-01-01T00:00:00Z&sort=updated"
    _, comments, _ = await get(http, url)
    assert [c["body"] for c in comments] == ["45 s, now 60 s"]
    assert comments[0]["html_url"].endswith(f"/issues/1#issuecomment-{seeded.timeout_comment}")


async def test_trees_list_blobs_with_git_shas_and_say_when_truncated(github: Any) -> None:
    fake, _, http = github
    status, tree, _ = await get(http, f"{fake.base_url}/repos/acme/payments/git/trees/main?recursive=1")
    paths = {e["path"]: e for e in tree["tree"]}
    assert status == 200 and not tree["truncated"]
    assert paths["docs"]["type"] == "tree" and paths["docs/deploy.md"]["type"] == "blob"
    assert blob_sha(b"hello\n") == "ce013625030ba8dba906f756967f9e9ca394464a", "git's own blob SHA"
    _, blob, _ = await get(http, paths["docs/deploy.md"]["url"])
    assert blob["encoding"] == "base64" and base64.b64decode(blob["content"]).startswith(b"# Deploying")
    assert fake.blobs_served == ["docs/deploy.md"]
    _, top, _ = await get(http, f"{fake.base_url}/repos/acme/payments/git/trees/main")
    assert "docs/deploy.md" not in {e["path"] for e in top["tree"]}, "not recursive: one level"
    fake.truncate_over = 3
    _, cut, _ = await get(http, f"{fake.base_url}/repos/acme/payments/git/trees/main?recursive=1")
    assert cut["truncated"] and len(cut["tree"]) == 3


async def test_secondary_and_primary_limits_answer_as_github_does(github: Any) -> None:
    fake, _, http = github
    fake.secondary_limit(1, retry_after="7")
    fake.secondary_limit(1, status=429)
    fake.primary_limit(1, reset_in=30)
    status, body, headers = await get(http, f"{fake.base_url}/user")
    assert status == 403 and "secondary rate limit" in body["message"] and headers["Retry-After"] == "7"
    status, body, _ = await get(http, f"{fake.base_url}/user")
    assert status == 429 and "secondary rate limit" in body["message"]
    status, body, headers = await get(http, f"{fake.base_url}/user")
    assert status == 403 and body["message"].startswith("API rate limit exceeded")
    assert headers["X-RateLimit-Remaining"] == "0" and int(headers["X-RateLimit-Reset"]) > time.time()
    assert (await get(http, f"{fake.base_url}/user"))[0] == 200


async def test_a_github_app_exchanges_its_jwt_for_an_installation_token(github: Any) -> None:
    fake, _, http = github
    now = int(time.time())
    app_jwt = jwt.encode({"iat": now - 60, "exp": now + 540, "iss": APP_ID}, PEM, algorithm="RS256")
    as_app = {"Authorization": f"Bearer {app_jwt}"}
    url = f"{fake.base_url}/app/installations/{INSTALLATION_ID}/access_tokens"
    async with http.post(url, headers=as_app) as response:
        assert response.status == 201
        minted = await response.json()
    assert minted["token"].startswith("ghs_") and minted["expires_at"].endswith("Z")
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    forged = jwt.encode({"iat": now - 60, "exp": now + 540, "iss": APP_ID}, other, algorithm="RS256")
    async with http.post(url, headers={"Authorization": f"Bearer {forged}"}) as response:
        assert response.status == 401
    too_long = jwt.encode({"iat": now, "exp": now + 3600, "iss": APP_ID}, PEM, algorithm="RS256")
    async with http.post(url, headers={"Authorization": f"Bearer {too_long}"}) as response:
        assert response.status == 401, "GitHub refuses a JWT that lasts over ten minutes"
    token = {"Authorization": f"Bearer {minted['token']}"}
    status, repos, _ = await get(http, f"{fake.base_url}/installation/repositories", **token)
    assert (
        status == 200
        and repos["total_count"] == 2
        and repos["repositories"][0]["full_name"] == "acme/payments"
    )
    assert (await get(http, f"{fake.base_url}/user", **token))[0] == 403, "an installation is no user"
    fake.revoke_installation_tokens()
    assert (await get(http, f"{fake.base_url}/installation/repositories", **token))[0] == 401


LIST = """query($owner: String!, $name: String!, $after: String) {
  repository(owner: $owner, name: $name) {
    discussions(first: 1, after: $after, orderBy: {field: UPDATED_AT, direction: DESC}) {
      pageInfo { hasNextPage endCursor }
      nodes { number title answer { id } comments(first: 10) { totalCount } }
    }
  }
}"""


async def graphql(http: aiohttp.ClientSession, fake: FakeGitHub, query: str, **variables: Any) -> Any:
    async with http.post(
        fake.base_url.removesuffix("/v3") + "/graphql",
        json={"query": query, "variables": variables},
        headers=AUTH,
    ) as response:
        assert response.status == 200 and response.headers["X-RateLimit-Resource"] == "graphql"
        return await response.json()


async def test_graphql_lists_and_reads_discussions_as_github_validates_them(github: Any) -> None:
    fake, seeded, http = github
    fake.add_discussion("acme/payments", "Second", "Another one").updated = datetime.now(UTC)
    first = await graphql(http, fake, LIST, owner="acme", name="payments")
    listing = first["data"]["repository"]["discussions"]
    assert [n["title"] for n in listing["nodes"]] == ["Second"] and listing["pageInfo"]["hasNextPage"]
    after = listing["pageInfo"]["endCursor"]
    second = await graphql(http, fake, LIST, owner="acme", name="payments", after=after)
    [node] = second["data"]["repository"]["discussions"]["nodes"]
    assert node["number"] == seeded.discussion and node["answer"] and node["comments"]["totalCount"] == 2
    one = f"""{{ repository(owner: "acme", name: "payments") {{ discussion(number: {seeded.discussion}) {{
        comments(first: 10) {{ nodes {{ isAnswer url body replies(first: 5) {{ nodes {{ body }} }} }} }} }} }} }}"""
    comments = (await graphql(http, fake, one))["data"]["repository"]["discussion"]["comments"]["nodes"]
    answer = next(c for c in comments if c["isAnswer"])
    assert "payments-cli secrets rotate" in answer["body"] and answer["replies"]["nodes"] == [
        {"body": "Worked for me."}
    ]
    assert answer["url"].endswith(f"/discussions/{seeded.discussion}#discussioncomment-{seeded.answer}")
    unpaged = '{ repository(owner: "acme", name: "payments") { discussions { totalCount } } }'
    refused = await graphql(http, fake, unpaged)
    assert "must provide a `first` or `last`" in refused["errors"][0]["message"]
    invalid = await graphql(http, fake, '{ repository(owner: "acme", name: "payments") { stars } }')
    assert "Cannot query field 'stars'" in invalid["errors"][0]["message"], "validated against the schema"
    missing = await graphql(http, fake, '{ repository(owner: "acme", name: "nope") { name } }')
    assert missing["errors"][0]["type"] == "NOT_FOUND" and missing["data"]["repository"] is None


async def test_graphql_answers_verified_organisation_emails(github: Any) -> None:
    fake, _, http = github
    fake.verified_emails[("acme", "grace")] = ["grace@acme.example"]
    query = '{ user(login: "grace") { organizationVerifiedDomainEmails(login: "acme") } }'
    answered = await graphql(http, fake, query)
    assert answered["data"]["user"]["organizationVerifiedDomainEmails"] == ["grace@acme.example"]
    other = '{ user(login: "grace") { organizationVerifiedDomainEmails(login: "globex") } }'
    assert (await graphql(http, fake, other))["data"]["user"]["organizationVerifiedDomainEmails"] == []


async def test_who_may_read_a_repository_by_affiliation_teams_and_their_members(github: Any) -> None:
    fake, seeded, http = github
    fake.add_team("acme", "payments-team", ["grace", "heidi"])
    fake.add_team("acme", "ops", ["ivan"])
    fake.share(
        seeded.repo,
        users={"ada": "admin", "mallory": "read", "grace": "read"},
        teams={"payments-team": "write"},
    )
    base = f"{fake.base_url}/repos/{seeded.repo}"
    _, everyone, _ = await get(http, f"{base}/collaborators?per_page=2")
    status, rest, headers = await get(http, f"{base}/collaborators?per_page=2&page=2")
    assert status == 200 and 'rel="prev"' in headers["Link"]
    people = {p["login"]: p for p in everyone + rest}
    assert set(people) == {"ada", "grace", "heidi", "mallory"}, "all: through teams too"
    assert people["grace"]["role_name"] == "write", "the best of a direct and a team role"
    assert people["mallory"]["permissions"] == {
        "pull": True, "triage": False, "push": False, "maintain": False, "admin": False
    }  # fmt: skip
    assert people["ada"]["type"] == "User" and people["ada"]["site_admin"] is False
    _, direct, _ = await get(http, f"{base}/collaborators?affiliation=direct")
    assert {p["login"] for p in direct} == {"ada", "grace", "mallory"}
    _, outside, _ = await get(http, f"{base}/collaborators?affiliation=outside")
    assert {p["login"] for p in outside} == {"ada", "mallory"}, "grace is a member of acme"
    status, refused, _ = await get(http, f"{base}/collaborators?affiliation=friends")
    assert status == 422 and refused["message"] == "Validation Failed"
    _, teams, _ = await get(http, f"{base}/teams")
    assert [(t["slug"], t["permission"]) for t in teams] == [("payments-team", "push")]
    _, members, _ = await get(http, f"{fake.base_url}/orgs/acme/teams/payments-team/members")
    assert [m["login"] for m in members] == ["grace", "heidi"]
    status, _, _ = await get(http, f"{fake.base_url}/orgs/acme/teams/nope/members")
    assert status == 404
    fake.unshare(seeded.repo, users=["mallory"], teams=["payments-team"])
    _, after, _ = await get(http, f"{base}/collaborators")
    assert {p["login"] for p in after} == {"ada", "grace"}
