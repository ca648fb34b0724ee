"""The fake Slack's OAuth v2 install flow and the tokens it grants, as slack_sdk uses them."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from urllib.parse import parse_qs, urlencode, urlsplit

import aiohttp
import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from .slack_server import FakeSlack

REDIRECT = "https://lore.example.com/slack/oauth_redirect"


@pytest.fixture
async def slack() -> AsyncIterator[FakeSlack]:
    async with FakeSlack(bot_token="xoxb-test", team_id="T0001", bot_user_id="UBOT") as server:
        yield server


async def approve(slack: FakeSlack, **query: str) -> dict[str, str]:
    """Visit the authorize page as a browser would; the redirect's query."""
    query = {"client_id": slack.installs.client_id, "scope": "chat:write", "state": "s1", **query}
    async with (
        aiohttp.ClientSession() as http,
        http.get(f"{slack.base_url}/oauth/v2/authorize?{urlencode(query)}", allow_redirects=False) as page,
    ):
        assert page.status == 302
        location = page.headers["Location"]
    assert location.startswith(query.get("redirect_uri") or REDIRECT)
    return {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}


def app_client(slack: FakeSlack) -> AsyncWebClient:
    return AsyncWebClient(base_url=slack.api_url)


async def exchange(slack: FakeSlack, code: str, **more: str) -> dict[str, object]:
    installs = slack.installs
    answer = await app_client(slack).oauth_v2_access(
        client_id=installs.client_id, client_secret=installs.client_secret, code=code, **more
    )
    return dict(answer.data)  # type: ignore[arg-type]


async def test_an_install_into_another_workspace_grants_its_own_token(slack: FakeSlack) -> None:
    slack.installs.redirect_url = REDIRECT
    slack.installs.will_install("T0002", name="Second")

    redirected = await approve(slack)
    assert redirected["state"] == "s1"
    answer = await exchange(slack, redirected["code"])

    assert answer["token_type"] == "bot" and answer["is_enterprise_install"] is False
    assert answer["team"] == {"id": "T0002", "name": "Second"} and answer["enterprise"] is None
    assert answer["authed_user"] == {"id": "UINSTALLER"} and answer["scope"] == "chat:write"
    token = str(answer["access_token"])
    assert token.startswith("xoxb-") and "refresh_token" not in answer
    auth = await AsyncWebClient(token=token, base_url=slack.api_url).auth_test()
    assert (auth["team_id"], auth["team"], auth["user_id"]) == ("T0002", "Second", answer["bot_user_id"])
    posted = await AsyncWebClient(token=token, base_url=slack.api_url).chat_postMessage(
        channel="C2", text="hi"
    )
    assert posted["message"]["user"] == answer["bot_user_id"]
    # The first workspace's token is untouched.
    assert (await AsyncWebClient(token="xoxb-test", base_url=slack.api_url).auth_test())["team_id"] == "T0001"


async def test_codes_credentials_and_redirects_are_checked(slack: FakeSlack) -> None:
    redirected = await approve(slack, redirect_uri=REDIRECT)
    installs = slack.installs
    with pytest.raises(SlackApiError, match="bad_redirect_uri"):
        await exchange(slack, redirected["code"])
    with pytest.raises(SlackApiError, match="bad_client_secret"):
        await app_client(slack).oauth_v2_access(
            client_id=installs.client_id,
            client_secret="wrong",
            code=redirected["code"],
            redirect_uri=REDIRECT,
        )
    with pytest.raises(SlackApiError, match="invalid_client_id"):
        await app_client(slack).oauth_v2_access(
            client_id="other", client_secret=installs.client_secret, code=redirected["code"]
        )
    await exchange(slack, redirected["code"], redirect_uri=REDIRECT)
    with pytest.raises(SlackApiError, match="invalid_code"):  # a code is used once
        await exchange(slack, redirected["code"], redirect_uri=REDIRECT)
    with pytest.raises(SlackApiError, match="invalid_code"):
        await exchange(slack, "made-up")


async def test_a_denied_install_redirects_with_an_error(slack: FakeSlack) -> None:
    slack.installs.will_install("T0002", deny=True)
    assert await approve(slack, redirect_uri=REDIRECT) == {"error": "access_denied", "state": "s1"}


async def test_an_org_wide_install_names_the_organisation(slack: FakeSlack) -> None:
    slack.installs.will_install(None, name="Acme Grid", enterprise_id="E0001", org_wide=True)
    answer = await exchange(
        slack, (await approve(slack, redirect_uri=REDIRECT))["code"], redirect_uri=REDIRECT
    )

    assert answer["team"] is None and answer["is_enterprise_install"] is True
    assert answer["enterprise"] == {"id": "E0001", "name": "Acme Grid"}
    auth = await AsyncWebClient(token=str(answer["access_token"]), base_url=slack.api_url).auth_test()
    assert auth["team_id"] == "E0001" and auth["enterprise_id"] == "E0001" and auth["is_enterprise_install"]


async def test_rotating_tokens_expire_and_are_refreshed_once(slack: FakeSlack) -> None:
    slack.installs.token_rotation = True
    slack.installs.will_install("T0002")
    answer = await exchange(
        slack, (await approve(slack, redirect_uri=REDIRECT))["code"], redirect_uri=REDIRECT
    )
    token, refresh = str(answer["access_token"]), str(answer["refresh_token"])
    assert token.startswith("xoxe.xoxb-") and refresh.startswith("xoxe-1-")
    assert answer["expires_in"] == slack.installs.token_seconds

    installs = slack.installs
    renewed = await app_client(slack).oauth_v2_access(
        client_id=installs.client_id, client_secret=installs.client_secret,
        grant_type="refresh_token", refresh_token=refresh,
    )  # fmt: skip
    assert renewed["token_type"] == "bot" and renewed["access_token"] != token
    assert renewed["team"]["id"] == "T0002" and renewed["refresh_token"] != refresh
    with pytest.raises(SlackApiError, match="invalid_refresh_token"):
        await app_client(slack).oauth_v2_access(
            client_id=installs.client_id, client_secret=installs.client_secret,
            grant_type="refresh_token", refresh_token=refresh,
        )  # fmt: skip
    # Both tokens work until they expire; then Slack says so.
    client = AsyncWebClient(token=str(renewed["access_token"]), base_url=slack.api_url)
    assert (await client.auth_test())["team_id"] == "T0002"
    grant = installs.grants[str(renewed["access_token"])]
    installs.grants[str(renewed["access_token"])] = type(grant)(
        **{**grant.__dict__, "expires_at": time.time() - 1}
    )
    with pytest.raises(SlackApiError, match="token_expired"):
        await client.auth_test()


async def test_revoked_tokens_stop_working(slack: FakeSlack) -> None:
    slack.installs.will_install("T0002")
    answer = await exchange(
        slack, (await approve(slack, redirect_uri=REDIRECT))["code"], redirect_uri=REDIRECT
    )
    token = str(answer["access_token"])

    assert slack.installs.revoke(team_id="T0002") == [token]
    with pytest.raises(SlackApiError, match="invalid_auth"):
        await AsyncWebClient(token=token, base_url=slack.api_url).auth_test()
    assert (await AsyncWebClient(token="xoxb-test", base_url=slack.api_url).auth_test())["ok"]
