"""Google Drive from Slack, through signed requests into the real Bolt app against the fake
Google: "connect google drive" posts a button that opens Google Drive's modal (a service
account's key and the user it acts as, or an OAuth client); "add the Handbook folder to the
handbook index" syncs with progress in the thread; an answer cites the Doc it quotes with its
Drive link; the modal checks its fields; no key reaches Slack or a log."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from tests.bot import connector_modals
from tests.bot.conftest import TEAM, SlackBot
from tests.bot.connector_modals import ADMIN, MEMBER, Json, connector_bot, everything_slack_saw, submit
from tests.fakes.google_server import DOMAIN, FakeGoogle, Seeded, seed

ADA = f"ada@{DOMAIN}"


@pytest_asyncio.fixture
async def google() -> AsyncIterator[tuple[FakeGoogle, Seeded]]:
    async with FakeGoogle() as fake:
        yield fake, seed(fake)


@pytest_asyncio.fixture
async def bot(tmp_path: Path) -> AsyncIterator[SlackBot]:
    async with connector_bot(tmp_path / "home", "CENG", "eng") as running:
        yield running


async def open_modal(bot: SlackBot, user: str) -> tuple[str, Json]:
    return await connector_modals.open_modal(bot, user, "CENG", "google-drive", "Google Drive")


async def test_an_admin_connects_a_service_account_syncs_a_folder_and_gets_cited_answers(
    bot: SlackBot, google: tuple[FakeGoogle, Seeded], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    fake, seeded = google
    key = fake.service_account_key()
    asked, view = await open_modal(bot, ADMIN)
    await submit(bot, ADMIN, view, url=fake.drive_url, key=key, act_as=ADA)
    outcome = bot.replies("CENG", asked)[-1].text
    assert outcome.startswith(
        f"Connected Google Drive at *127.0.0.1* as Ada Lovelace ({ADA}) (service account "
        f"lore-reader@acme-lore.iam.gserviceaccount.com acting as {ADA} (private key sealed))."
    ), outcome

    refused = await bot.mention("CENG", MEMBER, "add the Handbook folder to the handbook index")
    assert bot.said("CENG", refused).startswith("Only workspace admins")
    added = await bot.mention("CENG", ADMIN, "add the Handbook folder to the handbook index")
    queued, *_, summary = bot.replies("CENG", added)
    assert queued.text.startswith(
        "I created the shared *handbook* index and enabled it here. Syncing Google Drive"
    )
    assert summary.text.startswith("Done indexing *Google Drive"), summary.text

    question = await bot.mention("CENG", ADMIN, "up to how much is a hotel night reimbursed in Paris?")
    answer = bot.said("CENG", question)
    assert "180 euros" in answer and f"https://docs.google.com/document/d/{seeded.doc}/edit" in answer, answer

    private = json.loads(key)["private_key"].splitlines()[1]
    assert private not in everything_slack_saw(bot).replace("\\n", "\n").split('"key"')[0]
    assert private not in caplog.text


async def test_the_google_drive_modal_checks_its_fields(bot: SlackBot) -> None:
    asked, view = await open_modal(bot, ADMIN)
    _, body = await submit(bot, ADMIN, view)
    assert json.loads(body)["errors"] == {
        "key": "Paste a service account's JSON key, or fill in an OAuth client below."
    }
    _, body = await submit(bot, ADMIN, view, key="{}")
    assert json.loads(body)["errors"] == {"act_as": "Enter the email of the Workspace user it acts as."}
    _, body = await submit(bot, ADMIN, view, key="{}", act_as=ADA, client_id="x")
    assert json.loads(body)["errors"] == {"key": "Give a service account's key or an OAuth client, not both."}
    _, body = await submit(bot, ADMIN, view, client_id="x")
    assert set(json.loads(body)["errors"]) == {"client_secret", "refresh_token"}
    _, body = await submit(bot, ADMIN, view, key='{"type": "authorized_user"}', act_as=ADA)
    assert "errors" not in body, "the modal closes; what is wrong with the key is said in the thread"
    failed = bot.replies("CENG", asked)[-1].text
    assert failed.startswith("I couldn't connect Google Drive: This is not a service account key"), failed
    assert await bot.runtime.services.connections.for_tenant(TEAM) == []
