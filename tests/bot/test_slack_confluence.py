"""Confluence from Slack, through signed requests into the real Bolt app: "connect confluence"
posts a button, the button opens a modal (views.open with the interaction's trigger_id), the
credentials are typed into the modal only, the outcome lands in the thread; then "add the
ENG space to the confluence index" syncs with progress in place, answers cite the page, and
"status", "refresh" and "stop" work as for sites. Only admins (or the allowlist) may connect,
and no credential ever reaches a Slack message or a log line."""

from __future__ import annotations

import base64
import json
import logging
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from tests.bot.conftest import TEAM, SlackBot
from tests.bot.connector_modals import ADMIN, MEMBER, Json, connector_bot, everything_slack_saw, submit
from tests.fakes.confluence_server import EMAIL, TOKEN, FakeConfluence, Seeded, seed

LISTED = "ULISTED"


@pytest_asyncio.fixture
async def confluence() -> AsyncIterator[tuple[FakeConfluence, Seeded]]:
    async with FakeConfluence() as fake:
        yield fake, seed(fake)


@pytest_asyncio.fixture
async def bot(tmp_path: Path) -> AsyncIterator[SlackBot]:
    async with connector_bot(
        tmp_path / "home", "CWIKI", "wiki", others=[(LISTED, "listed")], lore_connector_admins=LISTED
    ) as running:
        yield running


async def open_modal(bot: SlackBot, user: str) -> tuple[str, Json]:
    """Ask for "connect confluence" and press the button; the thread and the modal opened."""
    asked = await bot.mention("CWIKI", user, "connect confluence")
    [offer] = bot.replies("CWIKI", asked)
    assert "private form" in offer.text and "never into this conversation" in offer.text
    assert await bot.press(user, "CWIKI", offer, "connect_confluence") == 200
    [opened] = bot.calls("views.open")[-1:]
    assert opened.params["trigger_id"].endswith(".trigger")
    view = opened.response["view"]
    assert (
        view["callback_id"] == "connect_confluence"
        and json.loads(view["private_metadata"])["thread_ts"] == asked
    )
    return asked, view


async def test_an_admin_connects_through_the_modal_then_syncs_a_space(
    bot: SlackBot, confluence: tuple[FakeConfluence, Seeded], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    fake, pages = confluence
    asked, view = await open_modal(bot, ADMIN)

    status, _ = await submit(bot, ADMIN, view, url=fake.base_url, email=EMAIL, token=TOKEN)
    assert status == 200
    outcome = bot.replies("CWIKI", asked)[-1].text
    assert outcome == (
        "Connected Confluence at *127.0.0.1* as Ada Lovelace (ada@example.com, API token …wxyz). "
        "Spaces this account can read: ENG, OPS. Say “add the <KEY> space to the confluence index” to index one."
    )

    added = await bot.mention("CWIKI", ADMIN, "add the ENG space to the confluence index")
    queued, progress, summary = bot.replies("CWIKI", added)
    assert queued.text == (
        "I created the shared *confluence* index and enabled it here. "
        "Syncing the Confluence space *ENG* into the *confluence* index. I'll show progress here."
    )
    assert re.fullmatch(r"Indexing Confluence ENG… 6/6 pages", progress.text), progress.text
    assert summary.text.startswith("Done indexing *Confluence ENG* in ")
    assert "6 pages indexed (6 new, 0 updated, 0 unchanged)" in summary.text

    question = await bot.mention("CWIKI", ADMIN, "how do we deploy the payments API?")
    deploy_url = f"{fake.base_url}/spaces/ENG/pages/{pages.deploy}/Deploy"
    assert f"<{deploy_url}|Deploy>" in bot.said("CWIKI", question)

    status_ts = await bot.mention("CWIKI", ADMIN, "status")
    assert "*Confluence ENG*: succeeded, 6 pages of 6 found" in bot.said("CWIKI", status_ts)
    fake.edit_page(pages.rollback, "<p>Rollbacks now need the release captain.</p>")
    for command in (
        "refresh confluence",
        "stop indexing ENG",
        "refresh confluence never",
        "forget confluence",
    ):
        refused = await bot.mention("CWIKI", MEMBER, command)  # what a connector brings is for admins
        assert bot.said("CWIKI", refused).startswith("Only workspace admins"), command
    refreshed = await bot.mention("CWIKI", ADMIN, "refresh confluence")
    assert "Done indexing *Confluence ENG*" in bot.said("CWIKI", refreshed)
    stopped = await bot.mention("CWIKI", ADMIN, "stop indexing ENG")
    assert bot.said("CWIKI", stopped) == "Nothing is being indexed for *Confluence ENG* right now."
    forgot = await bot.mention("CWIKI", ADMIN, "forget confluence")
    assert (
        bot.said("CWIKI", forgot) == "Forgot *Confluence ENG*: removed its 7 pages and stopped refreshing it."
    )
    assert [c.name for c in await bot.runtime.services.connections.for_tenant(TEAM)] == ["127.0.0.1"]

    basic = base64.b64encode(f"{EMAIL}:{TOKEN}".encode()).decode()
    said = "\n".join(r.text for r in bot.replies("CWIKI", asked) + bot.replies("CWIKI", added))
    for secret in (TOKEN, basic):
        assert secret not in said, "never in a message"
        assert secret not in everything_slack_saw(bot), "never in any Web API call"
        assert secret not in caplog.text, "never in a log line"


async def test_bad_credentials_say_so_and_store_nothing(
    bot: SlackBot, confluence: tuple[FakeConfluence, Seeded]
) -> None:
    fake, _ = confluence
    asked, view = await open_modal(bot, LISTED)
    await submit(bot, LISTED, view, url=fake.base_url, email=EMAIL, token="not-the-token-1234")
    outcome = bot.replies("CWIKI", asked)[-1].text
    assert outcome.startswith(
        "I couldn't connect Confluence: Confluence at 127.0.0.1 refused the credentials (401)"
    )
    assert outcome.endswith("Nothing was saved; say “connect confluence” to try again.")
    assert await bot.runtime.services.connections.for_tenant(TEAM) == []
    added = await bot.mention("CWIKI", LISTED, "add the ENG space to the confluence index")
    assert bot.said("CWIKI", added).startswith("No Confluence is connected yet")


async def test_the_modal_checks_its_fields_before_closing(bot: SlackBot) -> None:
    _, view = await open_modal(bot, ADMIN)
    status, body = await submit(bot, ADMIN, view, url="acme.atlassian.net", email="nope", token="")
    assert status == 200
    assert json.loads(body) == {
        "response_action": "errors",
        "errors": {
            "url": "Enter the address of your Confluence, starting with https://",
            "email": "Enter an email address, or leave it empty for a personal access token.",
            "token": "Paste the API token (or the personal access token).",
        },
    }


async def test_only_admins_and_the_allowlist_may_connect(bot: SlackBot) -> None:
    asked = await bot.mention("CWIKI", MEMBER, "connect confluence")
    [refusal] = bot.replies("CWIKI", asked)
    assert refusal.private and refusal.text.startswith("Only workspace admins")
    offered = await bot.mention("CWIKI", ADMIN, "connect confluence")
    [offer] = bot.replies("CWIKI", offered)
    bot.begin()
    await bot.press(MEMBER, "CWIKI", offer, "connect_confluence")  # someone else presses it
    assert bot.calls("views.open") == []
    [ephemeral] = bot.calls("chat.postEphemeral")
    assert ephemeral.params["user"] == MEMBER and ephemeral.params["text"].startswith("Only workspace admins")
    attach = await bot.mention("CWIKI", MEMBER, "add the ENG space to the confluence index")
    assert bot.said("CWIKI", attach).startswith("Only workspace admins")
