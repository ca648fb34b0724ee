"""Google Drive from Slack, through signed requests into the real Bolt app against the fake
Google: "connect google drive" posts a button that opens Google Drive's modal (a service
account's key and the user it acts as, or an OAuth client); "add the Handbook folder to the
handbook index" syncs with progress in the thread; an answer cites the Doc it quotes with its
Drive link, in private to whom Drive lets open it, never in a channel; a file shared with one
person reaches them alone, until the share is taken back; the modal checks its fields; no key
reaches Slack or a log."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from cryptography.fernet import Fernet

from tests.bot import connector_modals
from tests.bot.conftest import TEAM, SlackBot, running_bot
from tests.bot.connector_modals import ADMIN, MEMBER, Json, everything_slack_saw, submit
from tests.fakes.google_server import DOMAIN, FakeGoogle, Seeded, seed

OTHER, UNCONFIRMED = "UOTHER", "UUNCONFIRMED"
ADA, BOB = f"ada@{DOMAIN}", f"bob@{DOMAIN}"


@pytest_asyncio.fixture
async def google() -> AsyncIterator[tuple[FakeGoogle, Seeded]]:
    async with FakeGoogle() as fake:
        yield fake, seed(fake)


@pytest_asyncio.fixture
async def bot(tmp_path: Path) -> AsyncIterator[SlackBot]:
    async with running_bot(
        tmp_path / "home",
        lore_crawl_allow="127.0.0.1",
        lore_secret_key=Fernet.generate_key().decode(),
        lore_progress_seconds=0.05,
    ) as running:
        running.slack.add_channel("CENG", "eng")
        running.slack.add_user(ADMIN, "admin", is_admin=True, email=ADA)
        running.slack.add_user(MEMBER, "bob", email=BOB)
        running.slack.add_user(OTHER, "cy", email=f"cy@{DOMAIN}")
        running.slack.add_user(UNCONFIRMED, "dan", email=f"dan@{DOMAIN}", email_confirmed=False)
        running.begin()
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
    assert "180 euros" not in bot.said("CENG", question), "shared with acme.com: not in a channel"
    synced = await bot.dm(ADMIN, "refresh permissions")
    assert "Synced who may read" in bot.said(f"D{ADMIN}", synced)
    await bot.dm(ADMIN, "enable the handbook index")
    question = await bot.dm(ADMIN, "up to how much is a hotel night reimbursed in Paris?")
    answer = bot.said(f"D{ADMIN}", question)
    assert "180 euros" in answer and f"https://docs.google.com/document/d/{seeded.doc}/edit" in answer, answer

    private = json.loads(key)["private_key"].splitlines()[1]
    assert private not in everything_slack_saw(bot).replace("\\n", "\n").split('"key"')[0]
    assert private not in caplog.text


SALARY = "which band are senior engineers paid in?"


async def test_a_file_shared_with_one_person_reaches_them_alone_in_private_until_taken_back(
    bot: SlackBot, google: tuple[FakeGoogle, Seeded]
) -> None:
    """Salary bands is shared (by Ada, its owner) with Bob only."""
    fake, seeded = google
    asked, view = await open_modal(bot, ADMIN)
    await submit(bot, ADMIN, view, url=fake.drive_url, key=fake.service_account_key(), act_as=ADA)
    assert bot.replies("CENG", asked)[-1].text.startswith("Connected Google Drive")
    added = await bot.mention("CENG", ADMIN, "add the Handbook folder to the handbook index")
    assert bot.replies("CENG", added)[-1].text.startswith("Done indexing *Google Drive")
    synced = await bot.dm(ADMIN, "refresh permissions")
    assert "Synced who may read" in bot.said(f"D{ADMIN}", synced)

    async def answer(user: str, channel: str | None = None) -> str:
        if channel is not None:
            return bot.said(channel, await bot.mention(channel, user, SALARY))
        await bot.dm(user, "enable the handbook index")
        return bot.said(f"D{user}", await bot.dm(user, SALARY))

    private = await answer(MEMBER)
    assert "E5" in private and f"https://docs.google.com/document/d/{seeded.private_doc}/edit" in private
    assert "E5" not in await answer(MEMBER, "CENG"), "not in a channel, even asked by Bob"
    assert "E5" not in await answer(OTHER), "Cy: not shared with him"
    assert "E5" not in await answer(UNCONFIRMED)
    # the deck is shared with anyone with the link: acme.com, by confirmed email only
    deck = "where are laptops collected?"
    assert "IT desk" in bot.said(f"D{OTHER}", await bot.dm(OTHER, deck))
    assert "IT desk" not in bot.said(f"D{UNCONFIRMED}", await bot.dm(UNCONFIRMED, deck))
    assert "IT desk" not in bot.said("CENG", await bot.mention("CENG", OTHER, deck))

    fake.unshare(seeded.private_doc, BOB)  # taken back in Drive: gone at the next sync
    refreshed = await bot.mention("CENG", ADMIN, "refresh Handbook")
    assert "Done indexing *Google Drive" in bot.said("CENG", refreshed)
    assert "E5" not in await answer(MEMBER)


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
