"""What the Slack tests of the connectors share (`test_slack_{confluence,github,notion,
google_drive}.py`): a bot with a channel, an admin and a member, allowed to reach the fakes
and to seal credentials; "connect …" and its button, opening the connector's modal; the modal
submitted as Slack does; and everything Slack saw, to look for secrets in."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from cryptography.fernet import Fernet

from tests.bot.conftest import SlackBot, running_bot

Json = dict[str, Any]
ADMIN, MEMBER = "UADMIN", "UMEMBER"


@asynccontextmanager
async def connector_bot(
    home: Path,
    channel: str,
    name: str,
    *,
    admin_email: str | None = None,
    others: Sequence[tuple[str, str]] = (),
    **settings: Any,
) -> AsyncIterator[SlackBot]:
    """The bot, begun, with `channel` (#`name`), an admin (`ADMIN`), a member (`MEMBER`) and
    `others` (id, name)."""
    async with running_bot(
        home,
        lore_crawl_allow="127.0.0.1",
        lore_secret_key=Fernet.generate_key().decode(),
        lore_progress_seconds=0.05,
        **settings,
    ) as running:
        running.slack.add_channel(channel, name)
        running.slack.add_user(ADMIN, "admin", is_admin=True, email=admin_email)
        running.slack.add_user(MEMBER, "member")
        for user, user_name in others:
            running.slack.add_user(user, user_name)
        running.begin()
        yield running


async def open_modal(bot: SlackBot, user: str, channel: str, kind: str, label: str) -> tuple[str, Json]:
    """Ask for "connect <label>" and press the button: the thread, and the modal it opened."""
    asked = await bot.mention(channel, user, f"connect {label.lower()}")
    [offer] = bot.replies(channel, asked)
    assert offer.text.startswith(f"Press the button to connect {label}."), offer.text
    assert await bot.press(user, channel, offer, f"connect_{kind}") == 200
    view = bot.calls("views.open")[-1].response["view"]
    assert view["callback_id"] == f"connect_{kind}" and view["title"]["text"] == f"Connect {label}"
    return asked, view


async def submit(bot: SlackBot, user: str, view: Json, **fields: str) -> tuple[int, str]:
    """Submit the modal as Slack does (a signed `view_submission`), with the fields typed in."""
    values = {name: {"value": {"type": "plain_text_input", "value": value}} for name, value in fields.items()}
    return await bot.submit_view(user, view, values)


def everything_slack_saw(bot: SlackBot) -> str:
    return json.dumps([call.params for call in bot.calls()])
