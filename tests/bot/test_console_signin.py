"""Signing in to the console through Sign in with Slack, against the fake Slack's OpenID
Connect endpoints, with the console's real routes on loopback: what a forged callback, a
replayed or foreign nonce, someone of another organisation, a tampered cookie and a used
link get. The console is served as Socket Mode serves it on PORT, beside the probes."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

import aiohttp
import pytest
from aiohttp.test_utils import TestServer
from slack_sdk.web.async_client import AsyncWebClient

from bot.api.app import api_state
from bot.app.services import Services, build_services
from bot.app.settings import Settings
from bot.cli.run import ops_app
from bot.slack.signin import SlackSignIn
from storage.values import Scope
from tests.fakes.slack_server import FakeSlack

TEAM = "T0001"


@dataclass
class Console:
    slack: FakeSlack
    services: Services
    base: str

    def browser(self) -> aiohttp.ClientSession:
        return aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))


@pytest.fixture
async def console(tmp_path: Path) -> AsyncIterator[Console]:
    async with FakeSlack(team_id=TEAM) as slack:
        slack.add_user("U0ADMIN", "Ada", is_admin=True)
        slack.add_user("U0GUEST", "Gus", team_id="T0OTHER")  # another organisation's
        slack.add_user("U0CONN", "Connie")  # not a workspace admin, but in LORE_CONNECTOR_ADMINS
        slack.add_user("U0OWNER", "Olga")  # owns one shared index
        slack.add_user("U0PLAIN", "Pat")  # nothing to administer
        settings = Settings(
            _env_file=None,
            lore_home=tmp_path,
            slack_client_id=slack.installs.client_id,
            slack_client_secret=slack.installs.client_secret,
            slack_api_url=slack.api_url,
            lore_connector_admins="U0CONN",
        )
        services = build_services(settings)

        async def bot_client(team: str) -> AsyncWebClient:
            if team != TEAM:
                raise LookupError(team)
            return AsyncWebClient(token=slack.bot_token, base_url=slack.api_url)

        # The application Socket Mode serves on PORT (probes and the console).
        app = ops_app(api_state(services), SlackSignIn(settings, bot_client))
        server = TestServer(app, host="127.0.0.1")
        await server.start_server()
        try:
            yield Console(slack, services, str(server.make_url("")).rstrip("/"))
        finally:
            await server.close()
            await services.aclose()


async def start(http: aiohttp.ClientSession, console: Console) -> str:
    """The console's redirect to Slack's authorize page."""
    async with http.get(f"{console.base}/console/auth/slack/start", allow_redirects=False) as started:
        assert started.status == 303
        return started.headers["Location"]


async def authorize(http: aiohttp.ClientSession, url: str) -> str:
    """Slack's authorize page: its redirect back to the console."""
    async with http.get(url, allow_redirects=False) as page:
        assert page.status == 302
        return page.headers["Location"]


async def test_signing_in_with_slack_opens_a_session(console: Console) -> None:
    console.slack.openid.will_sign_in("U0ADMIN", TEAM)
    async with console.browser() as http:
        back = await authorize(http, await start(http, console))
        async with http.get(back) as landed:
            assert landed.status == 200 and str(landed.url).endswith("/console/overview")
            page = await landed.text()
        assert "Ada" in page and "admin" in page
        cookie = next(c for c in http.cookie_jar if c.key == "lore_console")
        assert cookie["httponly"] and cookie["samesite"] == "Lax"


async def test_a_callback_that_did_not_start_here_is_refused(console: Console) -> None:
    console.slack.openid.will_sign_in("U0ADMIN", TEAM)
    async with console.browser() as attacker:
        back = await authorize(attacker, await start(attacker, console))  # the attacker's own code
    async with console.browser() as victim, victim.get(back) as landed:  # …sent to someone else
        assert landed.status == 400
        assert "did not start here" in await landed.text()
        assert not [c for c in victim.cookie_jar if c.key == "lore_console"]


async def test_an_id_token_for_another_nonce_is_refused(console: Console) -> None:
    console.slack.openid.will_sign_in("U0ADMIN", TEAM)
    async with console.browser() as http:
        url = urlsplit(await start(http, console))
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        query["nonce"] = "someone-elses"
        back = await authorize(http, urlunsplit(url._replace(query=urlencode(query))))
        async with http.get(back) as landed:
            assert landed.status == 403
            assert "could not confirm who you are" in await landed.text()
        assert not [c for c in http.cookie_jar if c.key == "lore_console"]


async def test_someone_of_another_organisation_is_refused(console: Console) -> None:
    console.slack.openid.will_sign_in("U0GUEST", TEAM)
    async with console.browser() as http:
        back = await authorize(http, await start(http, console))
        async with http.get(back) as landed:
            assert landed.status == 403
            assert "the console is for workspace admins" in (await landed.text()).lower()


async def test_a_tampered_cookie_and_a_used_link_sign_nobody_in(console: Console) -> None:
    secret = console.services.signin.link()
    async with console.browser() as http:
        async with http.get(f"{console.base}/console/link/{secret}") as signed:
            assert str(signed.url).endswith("/console/overview")
        value = next(c for c in http.cookie_jar if c.key == "lore_console").value
        session, _, mac = value.rpartition(".")
        forged = f"{session}x.{mac}"
    async with (
        aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as other,
        other.get(f"{console.base}/console/audit", headers={"Cookie": f"lore_console={forged}"}) as page,
    ):
        assert str(page.url).endswith("/console/signin")
    async with console.browser() as again, again.get(f"{console.base}/console/link/{secret}") as used:
        assert used.status == 403 and "used already or has expired" in await used.text()


async def signed_in_as(console: Console, http: aiohttp.ClientSession, user: str) -> aiohttp.ClientResponse:
    console.slack.openid.will_sign_in(user, TEAM)
    back = await authorize(http, await start(http, console))
    async with http.get(back) as landed:
        await landed.read()
        return landed


async def test_connector_admins_sign_in_as_admins_and_index_owners_see_their_own(console: Console) -> None:
    async with console.browser() as http:
        landed = await signed_in_as(console, http, "U0CONN")
        assert landed.status == 200 and str(landed.url).endswith("/console/overview")
        async with http.get(f"{console.base}/console/settings") as settings:
            assert settings.status == 200

    services = console.services
    owner = services.directory.ensure_user(TEAM, "U0OWNER", "Olga")
    theirs = services.indexes.create(
        TEAM, "olgas-notes", Scope.SHARED, embedding_model="m", embedding_dimension=3, owner_user_id=owner.id
    )
    other = services.indexes.create(
        TEAM, "payroll-runbook", Scope.SHARED, embedding_model="m", embedding_dimension=3
    )
    async with console.browser() as http:
        landed = await signed_in_as(console, http, "U0OWNER")
        assert landed.status == 200 and str(landed.url).endswith("/console/knowledge")
        async with http.get(f"{console.base}/console/knowledge") as page:
            shown = await page.text()
            assert "olgas-notes" in shown and "payroll-runbook" not in shown
        async with http.get(f"{console.base}/console/knowledge/{theirs.id}") as page:
            assert page.status == 200
        async with http.get(f"{console.base}/console/knowledge/{other.id}") as page:
            assert page.status in (403, 404) and "payroll-runbook" not in await page.text()
        for admin_page in ("overview", "audit", "settings"):
            async with http.get(f"{console.base}/console/{admin_page}") as page:
                assert page.status == 403, admin_page
        async with http.get(f"{console.base}/console/knowledge") as page:
            csrf = re.search(r'name="csrf" value="([^"]+)"', await page.text())
        assert csrf is not None
        for form in ("people/forget", "history/export", "retention/run", f"knowledge/{other.id}/delete"):
            async with http.post(
                f"{console.base}/console/{form}",
                data={"csrf": csrf.group(1), "user": "U0ADMIN", "confirm": "payroll-runbook"},
                headers={"Origin": console.base},
            ) as refused:
                assert refused.status in (403, 404), form
        assert services.indexes.list_for_tenant(TEAM)  # nothing was deleted

    async with console.browser() as http:
        landed = await signed_in_as(console, http, "U0PLAIN")
        assert landed.status == 403 and "the console is for workspace admins" in (await landed.text()).lower()
