"""With one bot token too, Lore removed from its workspace schedules the removal of the
workspace's data (the token itself is the operator's to remove from the configuration)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from tests.bot.conftest import TEAM, running_bot

pytestmark = pytest.mark.asyncio


async def test_app_uninstalled_schedules_the_workspaces_removal_after_the_grace_period(
    tmp_path: Path,
) -> None:
    async with running_bot(tmp_path, lore_uninstall_grace_hours=48) as bot:
        removals = bot.runtime.services.removals
        assert await removals.pending(TEAM) is None

        assert await bot.deliver({"type": "app_uninstalled", "event_ts": bot.next_ts()}) == 200

        pending = await removals.pending(TEAM)
        assert pending is not None and pending.reason == "app_uninstalled"
        assert pending.purge_after - pending.requested_at == timedelta(hours=48)
        assert await removals.purge_due("worker") == []  # not before the grace period ends


async def test_tokens_revoked_for_users_only_removes_nothing(tmp_path: Path) -> None:
    async with running_bot(tmp_path) as bot:
        event = {"type": "tokens_revoked", "tokens": {"oauth": ["U1"], "bot": []}, "event_ts": bot.next_ts()}
        assert await bot.deliver(event) == 200
        assert await bot.runtime.services.removals.pending(TEAM) is None
