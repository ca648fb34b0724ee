"""Socket Mode end to end: Bolt's Socket Mode handler connects to a local WebSocket that
speaks Slack's envelope protocol, acknowledges each event at once, and answers in-thread."""

from __future__ import annotations

from pathlib import Path

from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler

from bot.app.settings import Settings
from bot.chat.runtime import open_runtime
from bot.slack.app import build_app
from tests.fakes.slack_socket import FakeSlackSocket


async def test_a_mention_over_socket_mode_is_acked_and_answered(tmp_path: Path) -> None:
    async with FakeSlackSocket() as slack:
        slack.add_channel("C1", "general")
        slack.add_user("U1", "ada")
        settings = Settings(
            _env_file=None,
            lore_home=tmp_path,
            slack_bot_token=slack.bot_token,
            slack_app_token=slack.app_token,
            slack_api_url=slack.api_url,
        )
        async with open_runtime(settings) as runtime:
            app, events = build_app(runtime, settings)
            handler = AsyncSocketModeHandler(app, settings.slack_app_token.get_secret_value())  # type: ignore[union-attr]
            await handler.connect_async()  # type: ignore[no-untyped-call]
            try:
                event = {
                    "type": "app_mention",
                    "user": "U1",
                    "text": "<@UBOT> help",
                    "ts": "1700000001.000100",
                    "channel": "C1",
                }
                body = {
                    "type": "event_callback",
                    "team_id": "T0001",
                    "event_id": "Ev1",
                    "event": event,
                    "event_time": 1700000001,
                }
                envelope = await slack.send_event(body)
                await slack.wait_for_ack(envelope)
                posted = await slack.wait_for("chat.postEphemeral", timeout=20)  # help is for the asker
                await events.drain()
            finally:
                await handler.close_async()  # type: ignore[no-untyped-call]
                await events.close()
        assert posted[0].params["channel"] == "C1" and posted[0].params["user"] == "U1"
        assert "Here's what I can do" in posted[0].params["text"]
        assert slack.calls_to("apps.connections.open")[0].ok
