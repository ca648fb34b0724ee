"""GitHub from Slack, through signed requests into the real Bolt app against the fake GitHub:
"connect github" posts a button that opens GitHub's modal (a token, or a GitHub App); "add the
acme/payments repository to the eng index" syncs with progress in the thread; an answer cites
the issue comment it quotes; "refresh", "stop indexing" and "forget" work as for sites and
only for admins; the modal checks its fields; no secret reaches Slack or a log."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from bot.app.audit import AuditFilter
from tests.bot import connector_modals
from tests.bot.conftest import TEAM, SlackBot
from tests.bot.connector_modals import ADMIN, MEMBER, Json, connector_bot, everything_slack_saw, submit
from tests.fakes.github_server import APP_ID, INSTALLATION_ID, TOKEN, FakeGitHub, Seeded, seed

KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
PEM = KEY.private_bytes(
    serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
).decode()


@pytest_asyncio.fixture
async def github() -> AsyncIterator[tuple[FakeGitHub, Seeded]]:
    async with FakeGitHub(app_key=KEY.public_key()) as fake:
        seeded = seed(fake)
        fake.share(seeded.repo, users={"ada": "admin"})  # acme/payments is private
        fake.verified_emails[("acme", "ada")] = ["ada@acme.example"]  # the admin, on GitHub
        yield fake, seeded


@pytest_asyncio.fixture
async def bot(tmp_path: Path) -> AsyncIterator[SlackBot]:
    async with connector_bot(tmp_path / "home", "CENG", "eng", admin_email="ada@acme.example") as running:
        yield running


async def open_modal(bot: SlackBot, user: str) -> tuple[str, Json]:
    return await connector_modals.open_modal(bot, user, "CENG", "github", "GitHub")


async def test_an_admin_connects_a_token_syncs_a_repository_and_gets_cited_answers(
    bot: SlackBot, github: tuple[FakeGitHub, Seeded], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    fake, seeded = github
    asked, view = await open_modal(bot, ADMIN)
    await submit(bot, ADMIN, view, url=fake.base_url, token=TOKEN)
    assert bot.replies("CENG", asked)[-1].text == (
        "Connected GitHub at *127.0.0.1* as ada (personal access token …wxyz). Repositories this account can "
        "read: acme/payments, acme/website, acme. Say “add the <owner/name> repository to the <name> index” "
        "to index one."
    )
    listed = await bot.mention("CENG", ADMIN, "list github repositories")
    assert "• *acme/payments* — Payments service" in bot.said("CENG", listed)

    added = await bot.mention("CENG", ADMIN, "add the acme/payments repository to the code index")
    queued, _, summary = bot.replies("CENG", added)
    assert queued.text == (
        "I created the shared *code* index and enabled it here. "
        "Syncing GitHub *acme/payments* into the *code* index. I'll show progress here."
    )
    assert summary.text.startswith("Done indexing *GitHub acme/payments* in ")

    question = await bot.mention("CENG", ADMIN, "what is the refund worker's timeout?")
    assert "45 seconds" not in bot.said("CENG", question), "acme/payments is private: not in a channel"
    # In private, the admin reads it: GitHub lets ada (their verified acme email) read it.
    synced = await bot.dm(ADMIN, "refresh permissions")
    assert "Synced who may read" in bot.said(f"D{ADMIN}", synced)
    await bot.dm(ADMIN, "enable the code index")
    asked = await bot.dm(ADMIN, "what is the refund worker's timeout?")
    comment = f"{fake.web_url}/acme/payments/issues/1#issuecomment-{seeded.timeout_comment}"
    answer = bot.said(f"D{ADMIN}", asked)
    assert "45 seconds" in answer and f"<{comment}|" in answer, answer

    for command in ("refresh acme/payments", "stop indexing acme/payments", "forget acme/payments"):
        refused = await bot.mention("CENG", MEMBER, command)
        assert bot.said("CENG", refused).startswith("Only workspace admins"), command
    refreshed = await bot.mention("CENG", ADMIN, "refresh acme/payments")
    assert "Done indexing *GitHub acme/payments*" in bot.said("CENG", refreshed)
    stopped = await bot.mention("CENG", ADMIN, "stop indexing acme/payments")
    assert bot.said("CENG", stopped) == "Nothing is being indexed for *GitHub acme/payments* right now."
    forgot = await bot.mention("CENG", ADMIN, "forget acme/payments")
    assert bot.said("CENG", forgot).startswith("Forgot *GitHub acme/payments*: removed its 8 pages")

    for secret in (TOKEN, TOKEN[-10:]):
        assert secret not in everything_slack_saw(bot) and secret not in caplog.text


async def test_a_github_app_connects_through_the_modal(
    bot: SlackBot, github: tuple[FakeGitHub, Seeded]
) -> None:
    fake, _ = github
    asked, view = await open_modal(bot, ADMIN)
    await submit(
        bot, ADMIN, view, url=fake.base_url, app_id=APP_ID, installation_id=INSTALLATION_ID, private_key=PEM
    )
    outcome = bot.replies("CENG", asked)[-1].text
    assert outcome.startswith(
        f"Connected GitHub at *127.0.0.1* as Lore Reader (installed on acme) (GitHub App {APP_ID}, "
        f"installation {INSTALLATION_ID} (private key sealed))."
    ), outcome
    assert PEM.splitlines()[1] not in everything_slack_saw(bot).replace("\\n", "\n").split("private_key")[0]


async def test_the_github_modal_checks_its_fields(bot: SlackBot) -> None:
    asked, view = await open_modal(bot, ADMIN)
    _, body = await submit(bot, ADMIN, view, url="github.example.com", token="")
    assert json.loads(body)["errors"] == {
        "url": "Enter the API address of your GitHub Enterprise Server, or leave it empty for github.com.",
        "token": "Paste a personal access token, or fill in a GitHub App below.",
    }
    _, body = await submit(bot, ADMIN, view, app_id="42")
    assert set(json.loads(body)["errors"]) == {"installation_id", "private_key"}
    _, body = await submit(bot, ADMIN, view, token="x", app_id="42")
    assert json.loads(body)["errors"] == {"token": "Give a token or a GitHub App, not both."}
    _, body = await submit(bot, ADMIN, view, app_id="42", installation_id="7", private_key="not a key")
    assert "errors" not in body, "the modal closes; what is wrong with the key is said in the thread"
    failed = bot.replies("CENG", asked)[-1].text
    assert failed.startswith("I couldn't connect GitHub: The private key is not a PEM file"), failed
    assert await bot.runtime.services.connections.for_tenant(TEAM) == []


async def test_an_admin_maps_someone_to_a_github_login_and_they_read_the_private_repository_in_private(
    bot: SlackBot, github: tuple[FakeGitHub, Seeded]
) -> None:
    """Issue 39: `map @someone to github LOGIN` takes effect on their next question, without a
    permission sync; only workspace admins may map; it is audited, listed and taken back."""
    fake, seeded = github
    fake.share(seeded.repo, users={"grace": "read"})  # GitHub gives grace no verified email
    _, view = await open_modal(bot, ADMIN)
    await submit(bot, ADMIN, view, url=fake.base_url, token=TOKEN)
    added = await bot.mention("CENG", ADMIN, "add the acme/payments repository to the code index")
    assert "Done indexing" in bot.said("CENG", added)
    question = "what is the refund worker's timeout?"
    await bot.dm(MEMBER, "enable the code index")
    before = await bot.dm(MEMBER, question)
    assert "45 seconds" not in bot.said(f"D{MEMBER}", before), "unmapped: public repositories only"

    refused = await bot.mention("CENG", MEMBER, f"map <@{MEMBER}> to github grace")
    assert bot.said("CENG", refused) == "Only workspace admins can say who someone is in a connected source."
    unlinked = await bot.mention("CENG", ADMIN, "map @member to github grace")
    assert "“member” is not a Slack user id; mention them" in bot.said("CENG", unlinked)
    mapped = await bot.mention("CENG", ADMIN, f"map <@{MEMBER}|member> to github Grace")
    assert bot.said("CENG", mapped) == (
        f"<@{MEMBER}> is now mapped to GitHub (127.0.0.1) *grace*: from their next question, they read in "
        "private what that account may read there."
    ), "GitHub logins ignore case: Lore writes them lower-cased"
    after = await bot.dm(MEMBER, question)
    assert "45 seconds" in bot.said(f"D{MEMBER}", after), "no permission sync needed"
    await bot.mention("CENG", ADMIN, "enable the code index")
    in_channel = await bot.mention("CENG", MEMBER, question)
    assert "45 seconds" not in bot.said("CENG", in_channel), "an answer in a channel: public only"

    listed = await bot.dm(ADMIN, "list account mappings")
    assert f"• <@{MEMBER}> → GitHub (127.0.0.1) *grace*" in bot.said(f"D{ADMIN}", listed)
    unmapped = await bot.dm(ADMIN, f"unmap <@{MEMBER}> from github")
    assert (
        bot.said(f"D{ADMIN}", unmapped) == f"<@{MEMBER}> is no longer mapped to GitHub (127.0.0.1) *grace*."
    )
    again = await bot.dm(MEMBER, question)
    assert "45 seconds" not in bot.said(f"D{MEMBER}", again)

    log = bot.runtime.services.audit.log
    entries = [e for e in log.page(TEAM, AuditFilter()) if e.action.startswith("access.")]
    assert [(e.action, e.actor, e.surface) for e in entries] == [
        ("access.unmap", ADMIN, "slack"),
        ("access.map", ADMIN, "slack"),
    ]
    assert entries[1].details["account"] == "grace" and entries[1].details["user"] == MEMBER
