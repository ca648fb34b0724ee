"""`lore doctor` compares the scopes Slack granted the bot token (auth.test's
`x-oauth-scopes` header) with the ones Lore uses, and names what is missing."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.cli.doctor import Check, run_checks
from bot.slack.scopes import BOT_SCOPES
from tests.bot.conftest import BOT_TOKEN, TEAM, lore_settings
from tests.fakes.slack_server import FakeSlack

pytestmark = pytest.mark.asyncio


async def slack_check(tmp_path: Path, granted: tuple[str, ...] | None) -> Check:
    async with FakeSlack(BOT_TOKEN, TEAM) as slack:
        slack.granted_scopes = granted
        [check] = [c for c in await run_checks(lore_settings(tmp_path, slack)) if c.component == "Slack"]
    return check


async def test_missing_scopes_are_named_and_fail_the_check(tmp_path: Path) -> None:
    granted = (*sorted(set(BOT_SCOPES) - {"mpim:read", "commands"}), "im:read")
    check = await slack_check(tmp_path, granted)
    assert not check.ok
    assert check.detail.startswith(
        "the bot token lacks commands, mpim:read: update the app from manifest.yml"
    )


async def test_all_scopes_granted_pass_and_unused_ones_are_noted(tmp_path: Path) -> None:
    check = await slack_check(tmp_path, (*BOT_SCOPES, "im:read", "im:write"))
    assert check.ok
    assert check.detail == (
        "bot @lore in Lore Test (HTTP mode); all the scopes Lore needs (granted but unused: im:read, im:write)"
    )
    unknown = await slack_check(tmp_path, None)
    assert unknown.ok and unknown.detail.endswith("Slack did not say which scopes the token has")
