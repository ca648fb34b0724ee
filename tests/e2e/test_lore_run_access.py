"""The issue's "done when", through the real `lore` entry points: the CLI connects the fake
Confluence and syncs a space whose pages are restricted (to Ada alone, to the `finance`
group), then the real `lore run` (HTTP mode, signed requests, the fake Slack) and its HTTP
API answer as Confluence would let each reader read:

- Ada gets her page's fact in a DM, with its citation; Bob never does (DM, `/lore`, the
  channel, the API), nor sees its title or link in any answer, citation or listing;
- an answer posted in #general uses public pages only, even when Ada asks there, and Ada's
  private `/lore` answer quoting her page can't be shared there;
- after Ada's access is removed in Confluence and permissions are refreshed, she no longer
  gets it; Bob gets the finance page once Confluence adds him to `finance` and groups are
  synced; a permission sync that fails leaves the page unreadable, and says so;
- an admin learns why Bob may not read it, without its text.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Mapping
from pathlib import Path

import aiohttp
import pytest
from cryptography.fernet import Fernet

from tests.fakes.confluence_server import EMAIL, TOKEN, FakeConfluence, seed
from tests.fakes.slack_server import FakeSlack
from tests.support.lore_run import BOT, TEAM, Door, dm, lore_run, reply_to, run_env

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio]

LORE = str(Path(sys.executable).with_name("lore"))
SALARY = "Salary Timetable"
CUTOFF = "23rd"
ALLOWANCE = "Travel Allowance Sheet"
BUDGET = "4200 euros"
PAYROLL_QUESTION = "what is the payroll cutoff day?"
BUDGET_QUESTION = "what is the travel budget per engineer?"


def confluence_site(fake: FakeConfluence) -> tuple[str, str]:
    """ENG and OPS (anonymous, public) as seeded, and FIN: readable by confluence-users, with
    the salary page restricted to Ada and the allowance page to `finance` (Ada alone)."""
    seed(fake)
    fake.add_user("acc-ada", "ada@example.com", "Ada")
    fake.add_user("acc-bob", "bob@example.com", "Bob")
    fake.add_group("confluence-users", ["acc-ada", "acc-bob"])
    fake.add_group("finance", ["acc-ada"])
    fake.add_space("FIN", "Finance", anonymous=False, viewers=["group:confluence-users"])
    home = fake.add_page("FIN", "Finance Home", "<p>Where finance keeps its pages.</p>")
    salary = fake.add_page(
        "FIN", SALARY, f"<p>The payroll cutoff day is the {CUTOFF} of each month.</p>", parent=home
    )
    allowance = fake.add_page(
        "FIN", ALLOWANCE, f"<p>The travel budget per engineer is {BUDGET} a year.</p>", parent=home
    )
    fake.restrict(salary, "user:acc-ada")
    fake.restrict(allowance, "group:finance")
    return salary, allowance


async def lore(env: Mapping[str, str], cwd: Path, *args: str) -> str:
    process = await asyncio.create_subprocess_exec(
        LORE, *args, env=dict(env), cwd=cwd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await asyncio.wait_for(process.communicate(), 300)
    assert process.returncode == 0, (args, out.decode(), err.decode())
    return out.decode()


async def ask_api(http: aiohttp.ClientSession, base: str, secret: str, question: str) -> str:
    body = {"model": "lore", "index_name": "handbook", "messages": [{"role": "user", "content": question}]}
    headers = {"Authorization": f"Bearer {secret}"}
    async with http.post(f"{base}/v1/chat/completions", json=body, headers=headers) as response:
        assert response.status == 200, await response.text()
        return json.dumps(await response.json())


async def list_api(http: aiohttp.ClientSession, base: str, secret: str) -> str:
    headers = {"Authorization": f"Bearer {secret}"}
    async with http.get(f"{base}/v1/indexes/handbook/documents", headers=headers) as response:
        assert response.status == 200, await response.text()
        return json.dumps(await response.json())


async def say_dm(door: Door, slack: FakeSlack, user: str, text: str) -> str:
    event = dm(slack, user, text)
    before = len(slack.calls)
    await door.deliver(event)
    await reply_to(slack, str(event["ts"]))
    return await door._replies_since(before, str(event["ts"]))


def hidden(said: str, *secrets: str) -> bool:
    return not any(secret in said for secret in secrets)


async def test_answers_respect_who_may_read_the_page_in_confluence(tmp_path: Path) -> None:
    with FakeConfluence() as fake:
        salary, _ = confluence_site(fake)
        salary_url = f"/pages/{salary}/"
        async with FakeSlack("xoxb-run", TEAM, BOT) as slack:
            for user, name, email in (("UADA", "ada", "ada@example.com"), ("UBOB", "bob", "bob@example.com")):
                slack.add_user(user, name, email=email)
            slack.add_user("UADMIN", "root", is_admin=True, email="root@example.com")
            slack.add_channel("CGEN", "general")
            extra = {
                "LORE_SECRET_KEY": Fernet.generate_key().decode(),
                "LORE_CRAWL_ALLOW": "127.0.0.1",
                "LORE_PROGRESS_SECONDS": "0.2",
                "CONFLUENCE_TOKEN": TOKEN,
            }
            home = tmp_path / "lore"
            env = run_env(home, slack, extra)
            connect = ["--url", fake.base_url, "--email", EMAIL, "--token-env", "CONFLUENCE_TOKEN"]
            await lore(env, tmp_path, "source", "add", "confluence", *connect, "--tenant", TEAM)
            attached = await lore(
                env, tmp_path, "source", "attach", "127.0.0.1", "--index", "handbook",
                "--space", "FIN", "--space", "ENG", "--tenant", TEAM,
            )  # fmt: skip
            assert "succeeded" in attached.lower() or "done" in attached.lower(), attached
            refreshed = await lore(env, tmp_path, "access", "refresh", "--tenant", TEAM)
            assert "restricted" in refreshed, refreshed
            keys = {}
            for name, user in (("ada-key", "UADA"), ("bob-key", "UBOB"), ("service", None)):
                args = ["api-key", "create", "--tenant", TEAM, "--name", name] + (
                    ["--user", user] if user else []
                )
                keys[name] = (await lore(env, tmp_path, *args)).splitlines()[1].strip()
            listed = await lore(env, tmp_path, "source", "list", "--tenant", TEAM)
            assert "permissions synced" in listed and "restricted" in listed, listed

            async with lore_run(home, slack, **extra) as base, aiohttp.ClientSession() as http:
                door = Door(http, base, slack)
                for user in ("UADA", "UBOB"):
                    assert "handbook" in await say_dm(door, slack, user, "enable the handbook index")
                await door.mention("CGEN", "UADA", "enable the handbook index")

                # Ada reads her page in her DM, with its citation; Bob never does.
                ada = await say_dm(door, slack, "UADA", PAYROLL_QUESTION)
                assert CUTOFF in ada and salary_url in ada and SALARY in ada, ada
                for where, said in (
                    ("bob's DM", await say_dm(door, slack, "UBOB", PAYROLL_QUESTION)),
                    ("bob's /lore", await door.slash("CGEN", "UBOB", PAYROLL_QUESTION)),
                    ("#general, bob", await door.mention("CGEN", "UBOB", PAYROLL_QUESTION)),
                    ("#general, ada", await door.mention("CGEN", "UADA", PAYROLL_QUESTION)),
                    ("bob's listing", await say_dm(door, slack, "UBOB", "what's in your memory")),
                    ("#general listing", await door.mention("CGEN", "UADA", "what's in your memory")),
                    ("bob's API answer", await ask_api(http, base, keys["bob-key"], PAYROLL_QUESTION)),
                    ("service key answer", await ask_api(http, base, keys["service"], PAYROLL_QUESTION)),
                    ("bob's API listing", await list_api(http, base, keys["bob-key"])),
                ):
                    assert hidden(said, CUTOFF, SALARY, salary_url, BUDGET, ALLOWANCE), (where, said)
                channel = await door.mention("CGEN", "UADA", "how do we deploy the payments API?")
                assert "blue-green" in channel, channel  # public pages still answer in a channel
                assert CUTOFF in await ask_api(http, base, keys["ada-key"], PAYROLL_QUESTION)
                assert SALARY in await list_api(http, base, keys["ada-key"])

                # A sync's log names pages: not for Bob's key. A service key reads a group's
                # pages once an admin grants it the group (and the space's: both must hold).
                bob_key = {"Authorization": f"Bearer {keys['bob-key']}"}
                async with http.get(f"{base}/v1/indexes/handbook", headers=bob_key) as response:
                    job = (await response.json())["last_job"]["id"]
                async with http.get(f"{base}/v1/jobs/{job}/log?follow=false", headers=bob_key) as response:
                    assert response.status == 403 and hidden(await response.text(), SALARY, salary_url)
                assert hidden(await ask_api(http, base, keys["service"], BUDGET_QUESTION), BUDGET)
                source = listed.split()[0]
                for group in ("finance", "confluence-users"):
                    grant = [
                        "access",
                        "grant",
                        "--key",
                        "service",
                        f"{source}:group:{group}",
                        "--tenant",
                        TEAM,
                    ]
                    assert "Granted" in await lore(env, tmp_path, *grant)
                granted = await ask_api(http, base, keys["service"], BUDGET_QUESTION)
                assert BUDGET in granted and hidden(granted, CUTOFF), granted

                # Ada's private answer can't be shared in #general.
                private = await door.slash("CGEN", "UADA", PAYROLL_QUESTION)
                assert CUTOFF in private and "Share in channel" in private, private
                answer_id = private.split('"share:', 1)[1].split('"', 1)[0]
                shared = await door.interact(
                    {
                        "type": "block_actions", "trigger_id": "1.share", "api_app_id": "A0RUN",
                        "team": {"id": TEAM}, "user": {"id": "UADA", "team_id": TEAM},
                        "channel": {"id": "CGEN", "name": "general"}, "response_url": slack.response_url(),
                        "actions": [{"action_id": "share_answer", "block_id": f"share:{answer_id}",
                                     "value": answer_id, "type": "button", "action_ts": "1.2"}],
                    },
                    replies=("response_url", "chat.postEphemeral", "chat.postMessage"),
                )  # fmt: skip
                public = [c for c in slack.calls_to("chat.postMessage") if c.params.get("channel") == "CGEN"]
                assert all(hidden(json.dumps(c.params), CUTOFF, SALARY) for c in public)
                assert "can't post it" in shared and hidden(shared, CUTOFF), shared

                # Removed in Confluence, refreshed: Ada no longer gets it (no cached answer).
                fake.restrict(salary, "user:acc-bob")
                refreshed = await say_dm(door, slack, "UADMIN", "refresh permissions")
                assert "Synced who may read" in refreshed, refreshed
                again = await say_dm(door, slack, "UADA", PAYROLL_QUESTION)
                assert hidden(again, CUTOFF, SALARY, salary_url), again

                # The finance page follows the group: Bob once Confluence adds him.
                assert hidden(await say_dm(door, slack, "UBOB", BUDGET_QUESTION), BUDGET, ALLOWANCE)
                explained = await say_dm(door, slack, "UADMIN", f"explain access for <@UBOB> to {ALLOWANCE}")
                assert "may not read" in explained and "group finance" in explained, explained
                assert BUDGET not in explained
                refused = await say_dm(door, slack, "UBOB", f"explain access for <@UADA> to {ALLOWANCE}")
                assert "Only workspace admins" in refused, refused
                fake.groups["finance"].members.append("acc-bob")
                await say_dm(door, slack, "UADMIN", "refresh permissions")
                bob = await say_dm(door, slack, "UBOB", BUDGET_QUESTION)
                assert BUDGET in bob and ALLOWANCE in bob, bob

                # A permission sync that fails leaves the page unreadable, and says so.
                fake.fail_permissions = True
                failed = await say_dm(door, slack, "UADMIN", "refresh permissions")
                assert "Failed" in failed and "500" in failed, failed
                after = await say_dm(door, slack, "UBOB", BUDGET_QUESTION)
                assert hidden(after, BUDGET, ALLOWANCE), after
                fake.fail_permissions = False
