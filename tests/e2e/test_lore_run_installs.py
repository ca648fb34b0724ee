"""Lore installed into any workspace, through the real `lore run` (HTTP mode) and the fake
Slack's OAuth v2 flow: each workspace installed by its own link keeps its own memory; an
org-wide install (Enterprise Grid) answers in each of its workspaces from that workspace's
indexes alone; uninstalling drops the workspace's tokens at once and its data after the
grace period, in SQL, in Chroma and in the files of the data folder."""

from __future__ import annotations

import asyncio
import html
import json
import re
import sqlite3
import time
from contextlib import closing
from pathlib import Path
from typing import Any

import aiohttp
import chromadb
import pytest
from chromadb.config import Settings as ChromaSettings
from cryptography.fernet import Fernet

from tests.fakes.slack_server import FakeSlack, signed_headers
from tests.support.lore_run import SECRET, lore_run

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.asyncio]

KEY = Fernet.generate_key().decode()
FIRST, SECOND = "T0FIRST", "T0SECOND"
GRID, EAST, WEST = "E0GRID", "T0EAST", "T0WEST"


def oauth_settings(slack: FakeSlack, data: Path, **more: str) -> dict[str, str]:
    return {
        "SLACK_BOT_TOKEN": "",
        "SLACK_CLIENT_ID": slack.installs.client_id,
        "SLACK_CLIENT_SECRET": slack.installs.client_secret,
        "LORE_SECRET_KEY": KEY,
        "LORE_HOME": str(data),
        **more,
    }


class Slack:
    """A browser for installs and Slack's signed deliveries, into one running Lore."""

    def __init__(self, http: aiohttp.ClientSession, base: str, slack: FakeSlack) -> None:
        self.http, self.base, self.slack = http, base, slack
        self.serial = 0
        slack.installs.redirect_url = f"{base}/slack/oauth_redirect"

    async def install(
        self, team: str | None, *, enterprise: str | None = None, org_wide: bool = False, cookie: bool = True
    ) -> tuple[int, str]:
        """Lore's install page, Slack's authorize page, and back to Lore: its last answer."""
        self.slack.installs.will_install(team, enterprise_id=enterprise, org_wide=org_wide, name=f"{team}")
        async with self.http.get(f"{self.base}/slack/install") as page:
            assert page.status == 200
            state_cookie = page.headers["Set-Cookie"].split(";")[0]
            link = html.unescape(re.search(r'href="([^"]*oauth/v2/authorize[^"]*)"', await page.text())[1])
        assert link.startswith(self.slack.base_url)
        async with self.http.get(link, allow_redirects=False) as authorize:
            assert authorize.status == 302
            back = authorize.headers["Location"]
        headers = {"Cookie": state_cookie} if cookie else {}
        async with self.http.get(back, headers=headers, allow_redirects=False) as done:
            return done.status, await done.text()

    async def deliver(
        self, event: dict[str, Any], team: str, *, enterprise: str | None = None, org_wide: bool = False
    ) -> None:
        self.serial += 1
        authorization = {
            "team_id": team,
            "user_id": "UBOT",
            "is_bot": True,
            "is_enterprise_install": org_wide,
        }
        if enterprise:
            authorization["enterprise_id"] = enterprise
        envelope = {
            "team_id": team, "api_app_id": self.slack.installs.app_id, "event": event, "type": "event_callback",
            "event_id": f"EvINST{self.serial:04d}", "event_time": int(time.time()),
            "authorizations": [authorization], **({"enterprise_id": enterprise} if enterprise else {}),
        }  # fmt: skip
        body = json.dumps(envelope)
        headers = {"Content-Type": "application/json", **signed_headers(body, SECRET)}
        async with self.http.post(f"{self.base}/slack/events", data=body, headers=headers) as response:
            assert response.status == 200, await response.text()

    async def mention(
        self, team: str, channel: str, user: str, text: str, *, files: tuple[str, ...] = (), **grid: Any
    ) -> str:
        """A mention of Lore in `team`'s `channel`, and what Lore posted in its thread."""
        ts = self.slack._next_ts()
        self.slack.add_message(channel, ts, f"<@UBOT> {text}", user, files=list(files) or None)
        event: dict[str, Any] = {
            "type": "app_mention", "user": user, "text": f"<@UBOT> {text}", "ts": ts, "channel": channel,
            "event_ts": ts, "team": team, "user_team": team,
        }  # fmt: skip
        if files:
            event["files"] = [self.slack.file(f) for f in files]
        await self.deliver(event, team, **grid)

        def answered(call: Any) -> bool:
            return (
                call.method in ("chat.postMessage", "chat.stopStream")
                and call.ok
                and call.params.get("thread_ts") == ts
                and "working" not in json.dumps(call.params).lower()
            )

        await self.slack.wait_until(answered, timeout=60, what=f"a reply to {ts}")
        await asyncio.sleep(0.5)
        said = [c.params for c in self.slack.calls if c.method.startswith("chat.")]
        return json.dumps([p for p in said if p.get("thread_ts") == ts or p.get("ts") == ts])


def query(data: Path, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    with closing(sqlite3.connect(data / "lore.db", timeout=30)) as db:
        return list(db.execute(sql, args))


async def until(condition: Any, seconds: float = 60) -> None:
    async with asyncio.timeout(seconds):
        while not condition():  # noqa: ASYNC110 - polls another process's database
            await asyncio.sleep(0.2)


def files_holding(folder: Path, needle: bytes) -> list[str]:
    """The files under `folder` whose bytes hold `needle` (as text, or UTF-16 as SQLite may not)."""
    found = []
    for path in folder.rglob("*"):
        if path.is_file() and needle in path.read_bytes():
            found.append(str(path.relative_to(folder)))
    return found


async def test_an_install_by_link_is_a_second_workspace_with_its_own_memory(tmp_path: Path) -> None:
    data = tmp_path / "data"
    async with (
        FakeSlack() as slack,
        lore_run(tmp_path, slack, **oauth_settings(slack, data)) as base,
        aiohttp.ClientSession() as http,
    ):
        door = Slack(http, base, slack)
        # A redirect without the installer's state cookie is refused, and installs nothing.
        status, _ = await door.install(FIRST, cookie=False)
        assert status >= 400 and not query(data, "SELECT * FROM slack_bots")
        assert (await door.install(FIRST))[0] == 200
        assert (await door.install(SECOND))[0] == 200
        assert {row[0] for row in query(data, "SELECT team_id FROM slack_bots")} == {FIRST, SECOND}

        slack.add_channel("C1", "first-general")
        slack.add_channel("C2", "second-general")
        slack.add_user("U1", "ada", team_id=FIRST)
        slack.add_user("U2", "bob", team_id=SECOND)
        slack.add_file(
            "FVAULT", "vault.md", b"# Vault\n\nThe vault combination is 31-41-59.\n", "text/markdown"
        )
        added = await door.mention(FIRST, "C1", "U1", "add this doc to your memory", files=("FVAULT",))
        assert "vault.md" in added

        answer = await door.mention(FIRST, "C1", "U1", "what is the vault combination?")
        assert "31-41-59" in answer
        elsewhere = await door.mention(SECOND, "C2", "U2", "what is the vault combination?")
        assert "31-41-59" not in elsewhere and "vault.md" not in elsewhere
        # Each workspace was answered with its own token, as its own bot.
        tokens = {c.headers.get("Authorization") for c in slack.calls_to("chat.postMessage")}
        assert {f"Bearer {slack.installs.tokens_of(t)[0]}" for t in (FIRST, SECOND)} <= tokens
        # Tokens are kept sealed: none is in the database's file.
        for token in slack.installs.tokens_of(FIRST) + slack.installs.tokens_of(SECOND):
            assert files_holding(data, token.encode()) == []


async def test_an_org_wide_install_answers_each_workspace_from_its_own_indexes(tmp_path: Path) -> None:
    data = tmp_path / "data"
    async with (
        FakeSlack() as slack,
        lore_run(tmp_path, slack, **oauth_settings(slack, data)) as base,
        aiohttp.ClientSession() as http,
    ):
        door = Slack(http, base, slack)
        assert (await door.install(None, enterprise=GRID, org_wide=True))[0] == 200
        grid = {"enterprise": GRID, "org_wide": True}
        slack.add_channel("CEAST", "east")
        slack.add_channel("CWEST", "west")
        slack.add_user("UEAST", "erin", team_id=EAST)
        slack.add_user("UWEST", "walt", team_id=WEST)
        slack.add_file("FEAST", "east.md", b"# East\n\nThe east office opens at 7:15.\n", "text/markdown")
        slack.add_file("FWEST", "west.md", b"# West\n\nThe west office opens at 9:45.\n", "text/markdown")
        await door.mention(EAST, "CEAST", "UEAST", "add this doc to your memory", files=("FEAST",), **grid)
        await door.mention(WEST, "CWEST", "UWEST", "add this doc to your memory", files=("FWEST",), **grid)

        east = await door.mention(EAST, "CEAST", "UEAST", "when does the office open?", **grid)
        west = await door.mention(WEST, "CWEST", "UWEST", "when does the office open?", **grid)
        assert "7:15" in east and "9:45" not in east
        assert "9:45" in west and "7:15" not in west
        # One token for the organisation; a tenant per workspace, none for the organisation.
        tenants = dict(query(data, "SELECT id, enterprise_id FROM tenant"))
        assert tenants == {EAST: GRID, WEST: GRID}


async def test_uninstalling_drops_tokens_at_once_and_the_data_after_the_grace_period(tmp_path: Path) -> None:
    data = tmp_path / "data"
    grace = {"LORE_UNINSTALL_GRACE_HOURS": str(6 / 3600), "LORE_REFRESH_CHECK_MINUTES": "0.02"}
    async with (
        FakeSlack() as slack,
        lore_run(tmp_path, slack, **oauth_settings(slack, data, **grace)) as base,
        aiohttp.ClientSession() as http,
    ):
        door = Slack(http, base, slack)
        slack.installs.token_rotation = True  # and each token is refreshed before it expires
        slack.installs.token_seconds = 3600
        for team in (FIRST, SECOND):
            assert (await door.install(team))[0] == 200
        slack.add_channel("C1", "first-general")
        slack.add_channel("C2", "second-general")
        slack.add_user("U1", "ada", team_id=FIRST)
        slack.add_user("U2", "bob", team_id=SECOND)
        slack.add_file("FKEEP", "keep.md", b"# Keep\n\nThe harbourmaster is Ottoline.\n", "text/markdown")
        slack.add_file(
            "FGONE", "gone.md", b"# Gone\n\nThe quokkazanzibar ledger is in room 12.\n", "text/markdown"
        )
        await door.mention(FIRST, "C1", "U1", "add this doc to your memory", files=("FKEEP",))
        await door.mention(SECOND, "C2", "U2", "add this doc to your memory", files=("FGONE",))
        assert "room 12" in await door.mention(SECOND, "C2", "U2", "where is the quokkazanzibar ledger?")
        refreshed = [
            c for c in slack.calls_to("oauth.v2.access") if c.params.get("grant_type") == "refresh_token"
        ]
        assert refreshed and all(c.ok for c in refreshed)

        slack.installs.revoke(team_id=SECOND)
        await door.deliver({"type": "app_uninstalled", "event_ts": slack._next_ts()}, SECOND)
        await door.deliver(
            {"type": "tokens_revoked", "tokens": {"bot": ["UBOT"]}, "event_ts": slack._next_ts()}, SECOND
        )
        # At once: its tokens are gone; its data stays for the grace period.
        await until(lambda: query(data, "SELECT tenant_id FROM tenant_removal") == [(SECOND,)])
        assert query(data, "SELECT team_id FROM slack_bots") == [(FIRST,)]
        assert {row[0] for row in query(data, "SELECT team_id FROM slack_installations")} == {FIRST}
        assert query(data, "SELECT COUNT(*) FROM chunk WHERE text LIKE '%quokkazanzibar%'")[0][0] > 0
        [(reason, purged)] = query(
            data, "SELECT reason, purged_at FROM tenant_removal WHERE tenant_id = ?", SECOND
        )
        assert reason in ("app_uninstalled", "tokens_revoked") and purged is None

        await until(lambda: query(data, "SELECT purged_at FROM tenant_removal WHERE purged_at IS NOT NULL"))
        [(removed,)] = query(data, "SELECT removed FROM tenant_removal WHERE tenant_id = ?", SECOND)
        removed = json.loads(removed)
        assert removed["document"] == 1 and removed["chunk"] >= 1 and removed["tenant"] == 1
        assert removed["answer_log"] >= 1 and removed["vector collections"] >= 1
        for table in ("tenant", "user", "knowledge_index", "answer_log", "conversation"):
            column = "id" if table == "tenant" else "tenant_id"
            assert query(data, f"SELECT COUNT(*) FROM {table} WHERE {column} = ?", SECOND) == [(0,)]
        assert query(data, "SELECT COUNT(*) FROM chunk WHERE text LIKE '%quokkazanzibar%'") == [(0,)]
        # The workspace's audit log went with it; what remains is the record of its purge.
        [(action, surface, details)] = query(
            data, "SELECT action, surface, details FROM audit_log WHERE tenant_id = ?", SECOND
        )
        assert (action, surface) == ("workspace.purge", "lore")
        assert json.loads(details)["removed"]["document"] == 1
        # The first workspace is untouched and still answers.
        assert "Ottoline" in await door.mention(FIRST, "C1", "U1", "who is the harbourmaster?")

    chroma = chromadb.PersistentClient(
        path=str(data / "chroma"), settings=ChromaSettings(anonymized_telemetry=False)
    )
    names = [c.name for c in chroma.list_collections()]
    assert names and all(name.startswith("lore-") and f"-{FIRST}-" in name for name in names)
    assert files_holding(data, b"quokkazanzibar") == []
    assert files_holding(data, b"Ottoline")  # the search can find what is there
