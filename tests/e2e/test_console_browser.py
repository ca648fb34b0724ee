"""The admin console in a real browser (Debian's Chromium, driven by Playwright), served by the
real `lore run` in HTTP mode, installed into a workspace of the fake Slack by OAuth.

A scripted day: the admin makes a shared handbook and adds two documents in #general,
people ask there (some of it Lore can answer, a group of questions about parental leave it
cannot), Alice asks something in her DM, an API key is made with the CLI and an index with
the API. Then, in the browser: the admin signs in with Slack (OpenID Connect), sees the
day's figures, groups the coverage gaps, opens the parental-leave group and answers it,
forgets a document, and finds each of those in the audit log beside what chat, the CLI and
the API did; Slack then answers the question from the verified answer. An index owner is
refused every admin page, someone with nothing to administer is refused the console, and a
form posted without its CSRF token (or from another site) changes nothing.

Each page is saved as a screenshot under `artifacts/console/`, for a person to look at after a
local run (CI runs in a fresh clone it discards and collects no artefacts folder).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.e2e.test_lore_run_installs import Slack, oauth_settings, query
from tests.fakes.slack_server import FakeSlack
from tests.support.lore_run import lore_run

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.asyncio]

CHROMIUM = Path("/usr/bin/chromium")
BROWSER_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "console"
TEAM = "T0CONSOLE"
GENERAL = "C0GENERAL"
ADMIN, ALICE, BOB = "U0ADMIN", "U0ALICE", "U0BOB"
VPN = b"# VPN\n\nThe VPN password is reset at the IT desk's portal, vpn-reset.example.com, in five minutes.\n"
EXPENSES = (
    b"# Expenses\n\nTravel expenses are reimbursed within thirty days when the receipts are attached.\n"
)
ANSWERED = ["how do I reset the VPN password?", "how are travel expenses reimbursed?"]
GAP = [
    "how long is parental leave?",
    "what is the parental leave policy?",
    "how many weeks of parental leave do we get?",
]
ELSEWHERE = ["where is the office gym?"]
IN_A_DM = "is my salary review in march?"
VERIFIED = "Parental leave is sixteen weeks, paid in full, for every parent."

if not CHROMIUM.exists():  # .ci/run installs it; elsewhere: apt-get install chromium
    pytestmark.append(pytest.mark.skip(reason="needs Debian's chromium at /usr/bin/chromium"))


async def dm(door: Slack, user: str, text: str) -> None:
    """A DM to Lore, and its reply."""
    slack = door.slack
    channel = f"D{user}"
    slack.add_channel(channel, "", is_im=True)
    ts = slack._next_ts()
    slack.add_message(channel, ts, text, user)
    event = {
        "type": "message", "channel_type": "im", "user": user, "text": text, "ts": ts,
        "channel": channel, "event_ts": ts, "team": TEAM,
    }  # fmt: skip
    await door.deliver(event, TEAM)
    await slack.wait_until(
        lambda c: (
            c.method in ("chat.postMessage", "chat.stopStream")
            and c.ok
            and c.params.get("channel") == channel
            and "working" not in json.dumps(c.params).lower()
        ),
        timeout=60,
        what="Lore's reply in the DM",
    )


async def cli(data: Path, settings: dict[str, str], *args: str) -> str:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "OPENAI_", "LORE_", "DATABASE_"))
    }
    env.update({k: v for k, v in settings.items() if v}, ANONYMIZED_TELEMETRY="False")
    lore = str(Path(sys.executable).with_name("lore"))
    process = await asyncio.create_subprocess_exec(
        lore, *args, env=env, cwd=data, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode == 0, err.decode()
    return out.decode()


async def scripted_day(door: Slack, data: Path, settings: dict[str, str]) -> str:
    """The day's work in Slack, the CLI and the API; the API key's secret."""
    await door.mention(TEAM, GENERAL, ADMIN, "create an index called handbook")
    await door.mention(TEAM, GENERAL, ADMIN, "make handbook the default")
    await door.mention(TEAM, GENERAL, ADMIN, "add this doc to your memory", files=("F0VPN", "F0EXP"))
    for question in [*ANSWERED, *GAP, *ELSEWHERE]:
        await door.mention(TEAM, GENERAL, ALICE, question)
    await dm(door, ALICE, IN_A_DM)
    await door.mention(TEAM, GENERAL, BOB, "create an index called bobs-notes")  # Bob owns an index
    printed = await cli(data, settings, "api-key", "create", "--tenant", TEAM, "--name", "siem", "--audit")
    secret = printed.strip().splitlines()[-1]
    headers = {"Authorization": f"Bearer {secret}"}
    async with door.http.post(f"{door.base}/v1/indexes", json={"name": "api-made"}, headers=headers) as made:
        assert made.status == 201, await made.text()
    return secret


async def sign_in(browser: Any, base: str, slack: FakeSlack, user: str, name: str) -> Any:
    context = await browser.new_context(viewport={"width": 1200, "height": 900})
    page = await context.new_page()
    slack.openid.will_sign_in(user, TEAM, name=name)
    await page.goto(f"{base}/console/")
    assert page.url.endswith("/console/signin")
    await page.click("text=Sign in with Slack")
    await page.wait_for_load_state()
    return page


async def shoot(page: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    await page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


async def test_the_console_in_a_browser(tmp_path: Path) -> None:
    from playwright.async_api import async_playwright

    data = tmp_path / "data"
    async with FakeSlack(team_id=TEAM) as slack:
        slack.add_user(ADMIN, "Ada Admin", is_admin=True)
        slack.add_user(ALICE, "Alice")
        slack.add_user(BOB, "Bob")
        slack.add_channel(GENERAL, "general")
        slack.add_file("F0VPN", "vpn.md", VPN, "text/markdown", "markdown")
        slack.add_file("F0EXP", "expenses.md", EXPENSES, "text/markdown", "markdown")
        settings = oauth_settings(slack, data)
        async with lore_run(tmp_path, slack, **settings) as base, aiohttp.ClientSession() as http:
            door = Slack(http, base, slack)
            status, _ = await door.install(TEAM)
            assert status == 200
            siem = await scripted_day(door, data, settings)
            asked = len(ANSWERED) + len(GAP) + len(ELSEWHERE) + 1

            async with async_playwright() as playwright:
                browser = await playwright.chromium.launch(executable_path=str(CHROMIUM), args=BROWSER_FLAGS)
                try:
                    await admin_in_the_console(browser, base, slack, asked)
                    await owners_and_others_are_refused(browser, base, slack)
                finally:
                    await browser.close()

            # The verified answer is what Slack answers with now.
            reply = await door.mention(TEAM, GENERAL, ALICE, "how long is parental leave?")
            assert "sixteen weeks" in reply
            verified = "SELECT question FROM answer_log WHERE verified = 1"  # the overview counts it apart
            assert query(data, verified) == [("how long is parental leave?",)]
            # …and a SIEM reads every surface's entries.
            async with http.get(f"{base}/v1/audit", headers={"Authorization": f"Bearer {siem}"}) as got:
                entries = [json.loads(line) for line in (await got.text()).splitlines()]
            surfaces = {(e["action"], e["surface"]) for e in entries}
            for done in [
                ("index.create", "slack"),
                ("conversation.default", "slack"),
                ("api_key.create", "cli"),
                ("index.create", "api"),
                ("console.sign_in", "console"),
                ("answer.verify", "console"),
                ("document.forget", "console"),
                ("export.history", "console"),
            ]:
                assert done in surfaces, (done, sorted(surfaces))
            assert not [e for e in entries if e["action"] == "user.forget"]  # the forged forms did nothing
            assert query(data, "SELECT COUNT(*) FROM answer_log WHERE question = ?", IN_A_DM) == [(1,)]

            # Forgetting Alice from the console: a job lore run takes within seconds.
            async with async_playwright() as playwright:
                browser = await playwright.chromium.launch(executable_path=str(CHROMIUM), args=BROWSER_FLAGS)
                try:
                    await forget_in_the_console(browser, base, slack)
                finally:
                    await browser.close()
            alices = (
                "SELECT COUNT(*) FROM answer_log a JOIN user u ON u.id = a.user_id WHERE u.external_id = ?"
            )
            assert query(data, alices, ALICE) == [(0,)]
            async with http.get(f"{base}/v1/audit", headers={"Authorization": f"Bearer {siem}"}) as got:
                entries = [json.loads(line) for line in (await got.text()).splitlines()]
            forgot = [e for e in entries if e["action"] == "user.forget"]
            assert [(e["surface"], e["actor"], e["target"]) for e in forgot] == [("console", ADMIN, ALICE)]
            assert forgot[0]["details"]["removed"]["answer_log"] == asked + 1  # and the question asked again


async def admin_in_the_console(browser: Any, base: str, slack: FakeSlack, asked: int) -> None:
    page = await sign_in(browser, base, slack, ADMIN, "Ada Admin")
    assert page.url.endswith("/console/overview"), page.url
    assert await page.inner_text("#questions") == str(asked)
    assert await page.inner_text("#askers") == "1"
    places = await page.locator("svg[aria-label^='questions: ']").nth(1).get_attribute("aria-label")
    assert "#general" in places and "direct messages 1" in places
    await shoot(page, "overview")

    async with page.expect_download() as exported:
        await page.click("text=Export the last 30 days (CSV)")
    history = await asyncio.to_thread(Path(await (await exported.value).path()).read_text)
    assert GAP[0] in history and IN_A_DM not in history  # a DM's text is not the admin's to read
    assert "withheld" in history

    await page.click("nav >> text=Coverage")
    await page.click("text=Group them now")
    await page.wait_for_selector("text=The questions are grouped again.")
    first = page.locator("ol.gaps li").first
    assert "3 questions" in await first.inner_text()
    assert "parental leave" in (await first.inner_text()).lower()
    assert IN_A_DM not in await page.content()
    await shoot(page, "coverage")
    await first.locator("a").click()
    for question in GAP:
        assert question in await page.content()
    await page.fill("textarea[name=answer]", VERIFIED)
    await page.select_option("select[name=index]", label="handbook")
    await page.click("text=Add this verified answer")
    await page.wait_for_selector("text=The answer is added")
    await shoot(page, "coverage-gap")

    await page.click("nav >> text=Knowledge")
    await page.click("table >> text=handbook")
    await page.click("button[aria-label='Forget expenses.md']")
    await page.wait_for_selector("text=The document is forgotten.")
    assert "expenses.md" not in await page.inner_text("main table")
    await shoot(page, "knowledge")

    await page.click("nav >> text=Audit log")
    log = await page.inner_text("table.audit")
    for line in ("answer.verify", "document.forget", "index.create", "api_key.create", "console.sign_in"):
        assert line in log, line
    assert "console" in log and "slack" in log and "cli" in log and "api" in log
    await shoot(page, "audit")
    await page.click("nav >> text=Settings")
    await shoot(page, "settings")

    # A form without its CSRF token, or from another site with it, changes nothing.
    token = await page.locator("input[name=csrf]").first.get_attribute("value")
    bare = await page.request.post(f"{base}/console/people/forget", form={"user": ALICE})
    assert bare.status == 403
    forged = await page.request.post(
        f"{base}/console/people/forget",
        form={"user": ALICE, "csrf": token},
        headers={"Origin": "https://evil.example"},
    )
    assert forged.status == 403
    await page.context.close()


async def forget_in_the_console(browser: Any, base: str, slack: FakeSlack) -> None:
    page = await sign_in(browser, base, slack, ADMIN, "Ada Admin")
    await page.click("nav >> text=Settings")
    await page.fill("input[name=user]", ALICE)
    await page.click("text=Forget them")
    await page.wait_for_selector("text=Forgetting them is queued")
    row = page.locator("#forget-jobs tbody tr").first
    for _ in range(60):  # the scheduler looks every few seconds
        if "succeeded" in await row.inner_text():
            break
        await asyncio.sleep(0.5)
        await page.reload()
    shown = await row.inner_text()
    assert ALICE in shown and "succeeded" in shown and "answer_log" in shown, shown
    await shoot(page, "settings-forget")
    await page.context.close()


async def owners_and_others_are_refused(browser: Any, base: str, slack: FakeSlack) -> None:
    page = await sign_in(browser, base, slack, BOB, "Bob")  # owns bobs-notes: Knowledge and Coverage only
    assert page.url.endswith("/console/knowledge"), page.url
    assert "bobs-notes" in await page.inner_text("main") and "handbook" not in await page.inner_text("main")
    for admin_page in ("overview", "audit", "settings"):
        answer = await page.goto(f"{base}/console/{admin_page}")
        assert answer is not None and answer.status == 403, admin_page
    token = await page.locator("input[name=csrf]").first.get_attribute("value")
    for form in ("audit/export", "history/export", "people/forget", "retention/run", "settings/retention"):
        refused = await page.request.post(
            f"{base}/console/{form}", form={"csrf": token, "user": ALICE, "days": "1"}
        )
        assert refused.status == 403, form
    await shoot(page, "refused")
    await page.context.close()

    page = await sign_in(browser, base, slack, ALICE, "Alice")  # nothing to administer
    assert "/console/auth/slack" in page.url
    assert "the console is for workspace admins" in (await page.inner_text("main")).lower()
    answer = await page.goto(f"{base}/console/overview")
    assert answer is not None and page.url.endswith("/console/signin")
    await page.context.close()
