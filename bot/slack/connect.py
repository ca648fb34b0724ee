"""Connecting Confluence from Slack: the button Lore posts opens a modal (a modal needs the
trigger_id that only an interaction brings, never a message), the credentials are typed
there and nowhere else, and the outcome is posted in the thread the request came from.

Who may: workspace admins (users.info `is_admin`/`is_owner`) and `LORE_CONNECTOR_ADMINS`,
checked again at each step, since anyone in the channel can press the button. The
credentials check calls Confluence, which may take longer than the 3 seconds Slack gives a
submission, so the modal closes at once and the result follows in the thread. Nothing here
logs what the modal carries.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.app.conversations import place_of
from bot.chat import messages
from bot.chat.connectors import CONNECT_FORM
from bot.chat.runtime import Runtime
from bot.slack.events import SlackEvents
from bot.slack.people import People, Who
from knowledge import ConnectorError, Credentials

log = logging.getLogger(__name__)
Json = dict[str, Any]
CREDENTIALS_HELP = (
    "Cloud: your Atlassian account's email and an API token "
    "(https://id.atlassian.com/manage-profile/security/api-tokens). "
    "Data Center: leave the email empty and paste a personal access token."
)


def connect_modal(metadata: Json) -> Json:
    return {
        "type": "modal",
        "callback_id": CONNECT_FORM,
        "private_metadata": json.dumps(metadata),
        "title": {"type": "plain_text", "text": "Connect Confluence"},
        "submit": {"type": "plain_text", "text": "Connect"},
        "close": {"type": "plain_text", "text": "Cancel"},
        "blocks": [
            _input("url", "Confluence URL", "https://your-site.atlassian.net/wiki"),
            _input("email", "Account email (Cloud only)", "you@example.com", optional=True),
            _input("token", "API token or personal access token", "paste it here"),
            {"type": "context", "elements": [{"type": "mrkdwn", "text": CREDENTIALS_HELP}]},
        ],
    }


def _input(block_id: str, label: str, placeholder: str, *, optional: bool = False) -> Json:
    return {
        "type": "input",
        "block_id": block_id,
        "optional": optional,
        "label": {"type": "plain_text", "text": label},
        "element": {
            "type": "plain_text_input",
            "action_id": "value",
            "placeholder": {"type": "plain_text", "text": placeholder},
        },
    }


def submitted(view: Json) -> dict[str, str]:
    """The modal's fields, stripped ('' for an empty one)."""
    values = (view.get("state") or {}).get("values") or {}
    return {
        name: str(((values.get(name) or {}).get("value") or {}).get("value") or "").strip()
        for name in ("url", "email", "token")
    }


def field_errors(fields: dict[str, str]) -> dict[str, str]:
    """What Slack shows under the fields before the modal may close."""
    errors = {}
    if not fields["url"].lower().startswith(("https://", "http://")):
        errors["url"] = "Enter the address of your Confluence, starting with https://"
    if fields["email"] and "@" not in fields["email"]:
        errors["email"] = "Enter an email address, or leave it empty for a personal access token."
    if not fields["token"]:
        errors["token"] = "Paste the API token (or the personal access token)."  # noqa: S105 - a hint
    return errors


class ConnectFlow:
    def __init__(self, runtime: Runtime, events: SlackEvents) -> None:
        self._runtime = runtime
        self._events = events

    def register(self, app: AsyncApp) -> None:
        app.action(CONNECT_FORM)(self.open)
        app.view(CONNECT_FORM)(self.submit)

    async def open(
        self, ack: Any, body: Json, client: AsyncWebClient, who: Who | None, people: People
    ) -> None:
        """The button was pressed: open the modal for an admin, explain to anyone else."""
        await ack()
        if who is None:
            return
        channel = who.channel or ""
        if not await self._may_connect(who, people):
            if channel:
                await client.chat_postEphemeral(
                    channel=channel, user=who.user, text=messages.CONNECT_NOT_ALLOWED
                )
            return
        message = body.get("message") or {}
        metadata = {"channel": channel, "thread_ts": str(message.get("thread_ts") or message.get("ts") or "")}
        await client.views_open(trigger_id=body["trigger_id"], view=connect_modal(metadata))

    async def submit(
        self, ack: Any, view: Json, client: AsyncWebClient, who: Who | None, people: People
    ) -> None:
        fields = submitted(view)
        errors = field_errors(fields)
        if errors:
            await ack(response_action="errors", errors=errors)
            return
        await ack()
        if who is None:
            return
        metadata = json.loads(view.get("private_metadata") or "{}")
        self._events.spawn(self._connect(client, who, people, fields, metadata))

    async def _connect(
        self, client: AsyncWebClient, who: Who, people: People, fields: dict[str, str], where: Json
    ) -> None:
        connectors = self._runtime.services.actions.connectors
        place = place_of(self._runtime.services, await people.user(who))
        if not connectors.allowed(place):
            text = messages.CONNECT_NOT_ALLOWED
        else:
            try:
                credentials = Credentials(fields["token"], fields["email"] or None)
                done = await connectors.connect(place, fields["url"], credentials)
                text = messages.connected(
                    done.connection.name,
                    done.account,
                    done.connection.credentials_hint,
                    [f.key for f in done.spaces],
                )
            except (ConnectorError, ValueError) as exc:
                text = messages.connect_failed(str(exc))
            except Exception:
                log.exception("connecting Confluence failed")
                text = messages.connect_failed("something went wrong on my side")
        await self._tell(client, who.user, where, text)

    async def _tell(self, client: AsyncWebClient, user: str, where: Json, text: str) -> None:
        """In the thread the button was in; else in a DM with the user."""
        channel, thread_ts = where.get("channel") or user, where.get("thread_ts") or None
        try:
            await client.chat_postMessage(channel=channel, thread_ts=thread_ts, text=text, unfurl_links=False)
        except SlackApiError as exc:
            log.warning("could not post the outcome of connecting Confluence: %s", exc.response.get("error"))

    async def _may_connect(self, who: Who, people: People) -> bool:
        place = place_of(self._runtime.services, await people.user(who))
        return self._runtime.services.actions.connectors.allowed(place)
