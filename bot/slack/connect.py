"""Connecting Confluence, GitHub or Notion from Slack: the button Lore posts opens a modal (a modal
needs the trigger_id that only an interaction brings, never a message), the credentials are
typed there and nowhere else, and the outcome is posted in the thread the request came from.
Each kind has its modal: Confluence's takes a URL, an email and a token; GitHub's an optional
Enterprise Server URL and a token, or a GitHub App's id, installation id and private key;
Notion's an internal integration's secret (and an API address, for tests and proxies).

Who may: workspace admins (users.info `is_admin`/`is_owner`) and `LORE_CONNECTOR_ADMINS`,
checked again at each step, since anyone in the channel can press the button. The
credentials check calls the site, which may take longer than the 3 seconds Slack gives a
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
from bot.chat.connectors import CONNECT_FORMS
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
GITHUB_HELP = (
    "Either a fine-grained personal access token (read-only: Metadata, Contents, Issues, Pull requests, "
    "Discussions), or a GitHub App: its id, the installation's id and the app's private key (.pem). "
    "Leave the URL empty for github.com; GitHub Enterprise Server: https://HOST/api/v3."
)
NOTION_HELP = (
    "An internal integration's secret (notion.so/profile/integrations: create one with “Read content” "
    "and “Read user information”), then share the pages and databases Lore should read with it "
    "(a page's ••• menu → Connections). Notion does not tell Lore who may open each page: whoever may "
    "read the index you fill will read them."
)
FIELDS = {
    "confluence": ("url", "email", "token"),
    "github": ("url", "token", "app_id", "installation_id", "private_key"),
    "notion": ("url", "token"),
}


def connect_modal(metadata: Json, kind: str = "confluence") -> Json:
    if kind == "github":
        title, blocks = (
            "Connect GitHub",
            [
                _input(
                    "url",
                    "GitHub Enterprise Server API URL",
                    "https://github.example.com/api/v3",
                    optional=True,
                ),
                _input("token", "Personal access token", "github_pat_…", optional=True),
                _input("app_id", "Or a GitHub App: its app id", "123456", optional=True),
                _input("installation_id", "The app's installation id", "7890123", optional=True),
                _input(
                    "private_key",
                    "The app's private key (.pem)",
                    "-----BEGIN RSA PRIVATE KEY-----…",
                    optional=True,
                    multiline=True,
                ),
                {"type": "context", "elements": [{"type": "mrkdwn", "text": GITHUB_HELP}]},
            ],
        )
    elif kind == "notion":
        title, blocks = (
            "Connect Notion",
            [
                _input("token", "Internal integration secret", "ntn_…"),
                _input(
                    "url", "API address (leave empty for Notion)", "https://api.notion.com", optional=True
                ),
                {"type": "context", "elements": [{"type": "mrkdwn", "text": NOTION_HELP}]},
            ],
        )
    else:
        title, blocks = (
            "Connect Confluence",
            [
                _input("url", "Confluence URL", "https://your-site.atlassian.net/wiki"),
                _input("email", "Account email (Cloud only)", "you@example.com", optional=True),
                _input("token", "API token or personal access token", "paste it here"),
                {"type": "context", "elements": [{"type": "mrkdwn", "text": CREDENTIALS_HELP}]},
            ],
        )
    return {
        "type": "modal",
        "callback_id": CONNECT_FORMS[kind],
        "private_metadata": json.dumps(metadata),
        "title": {"type": "plain_text", "text": title},
        "submit": {"type": "plain_text", "text": "Connect"},
        "close": {"type": "plain_text", "text": "Cancel"},
        "blocks": blocks,
    }


def _input(
    block_id: str, label: str, placeholder: str, *, optional: bool = False, multiline: bool = False
) -> Json:
    return {
        "type": "input",
        "block_id": block_id,
        "optional": optional,
        "label": {"type": "plain_text", "text": label},
        "element": {
            "type": "plain_text_input",
            "action_id": "value",
            "multiline": multiline,
            "placeholder": {"type": "plain_text", "text": placeholder},
        },
    }


def kind_of(view: Json) -> str:
    """Which kind of connector a submitted modal connects."""
    callback = str(view.get("callback_id") or "")
    return next((kind for kind, form in CONNECT_FORMS.items() if form == callback), "confluence")


def submitted(view: Json, kind: str = "confluence") -> dict[str, str]:
    """The modal's fields, stripped ('' for an empty one)."""
    values = (view.get("state") or {}).get("values") or {}
    return {
        name: str(((values.get(name) or {}).get("value") or {}).get("value") or "").strip()
        for name in FIELDS.get(kind, FIELDS["confluence"])
    }


def field_errors(fields: dict[str, str], kind: str = "confluence") -> dict[str, str]:
    """What Slack shows under the fields before the modal may close."""
    if kind == "github":
        return _github_errors(fields)
    if kind == "notion":
        return _notion_errors(fields)
    errors = {}
    if not fields["url"].lower().startswith(("https://", "http://")):
        errors["url"] = "Enter the address of your Confluence, starting with https://"
    if fields["email"] and "@" not in fields["email"]:
        errors["email"] = "Enter an email address, or leave it empty for a personal access token."
    if not fields["token"]:
        errors["token"] = "Paste the API token (or the personal access token)."  # noqa: S105 - a hint
    return errors


def _github_errors(fields: dict[str, str]) -> dict[str, str]:
    errors = {}
    if fields["url"] and not fields["url"].lower().startswith(("https://", "http://")):
        errors["url"] = (
            "Enter the API address of your GitHub Enterprise Server, or leave it empty for github.com."
        )
    app = [fields["app_id"], fields["installation_id"], fields["private_key"]]
    if fields["token"] and any(app):
        errors["token"] = "Give a token or a GitHub App, not both."  # noqa: S105 - a hint
    elif not any(app) and not fields["token"]:
        errors["token"] = "Paste a personal access token, or fill in a GitHub App below."  # noqa: S105 - a hint
    elif not fields["token"]:
        for name, value in zip(("app_id", "installation_id", "private_key"), app, strict=True):
            if not value:
                errors[name] = "A GitHub App needs its id, its installation id and its private key."
    return errors


def _notion_errors(fields: dict[str, str]) -> dict[str, str]:
    errors = {}
    if fields["url"] and not fields["url"].lower().startswith(("https://", "http://")):
        errors["url"] = "Enter an https:// address, or leave it empty for Notion's API."
    if not fields["token"]:
        errors["token"] = "Paste the integration's secret (it starts with ntn_ or secret_)."  # noqa: S105 - a hint
    return errors


def credentials_of(fields: dict[str, str], kind: str) -> Credentials:
    """ValueError when they are not credentials at all (say, a private key that is no PEM)."""
    if kind == "github" and not fields["token"]:
        return Credentials(
            fields["private_key"], app_id=fields["app_id"], installation_id=fields["installation_id"]
        )
    return Credentials(fields["token"], fields.get("email") or None)


class ConnectFlow:
    def __init__(self, runtime: Runtime, events: SlackEvents) -> None:
        self._runtime = runtime
        self._events = events

    def register(self, app: AsyncApp) -> None:
        for form in CONNECT_FORMS.values():
            app.action(form)(self.open)
            app.view(form)(self.submit)

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
        action = str(((body.get("actions") or [{}])[0]).get("action_id") or "")
        kind = next((k for k, form in CONNECT_FORMS.items() if form == action), "confluence")
        await client.views_open(trigger_id=body["trigger_id"], view=connect_modal(metadata, kind))

    async def submit(
        self, ack: Any, view: Json, client: AsyncWebClient, who: Who | None, people: People
    ) -> None:
        kind = kind_of(view)
        fields = submitted(view, kind)
        errors = field_errors(fields, kind)
        if errors:
            await ack(response_action="errors", errors=errors)
            return
        await ack()
        if who is None:
            return
        metadata = json.loads(view.get("private_metadata") or "{}")
        self._events.spawn(self._connect(client, who, people, fields, metadata, kind))

    async def _connect(
        self, client: AsyncWebClient, who: Who, people: People, fields: dict[str, str], where: Json, kind: str
    ) -> None:
        connectors = self._runtime.services.actions.connectors
        place = place_of(self._runtime.services, await people.user(who))
        if not connectors.allowed(place):
            text = messages.CONNECT_NOT_ALLOWED
        else:
            try:
                credentials = credentials_of(fields, kind)
                done = await connectors.connect(place, fields["url"], credentials, kind=kind)
                text = messages.connected(
                    done.connection.name,
                    done.account,
                    done.connection.credentials_hint,
                    messages.shown(done.spaces),
                    kind,
                )
            except (ConnectorError, ValueError) as exc:
                text = messages.connect_failed(str(exc), kind)
            except Exception:
                log.exception("connecting %s failed", kind)
                text = messages.connect_failed("something went wrong on my side", kind)
        await self._tell(client, who.user, where, text)

    async def _tell(self, client: AsyncWebClient, user: str, where: Json, text: str) -> None:
        """In the thread the button was in; else in a DM with the user."""
        channel, thread_ts = where.get("channel") or user, where.get("thread_ts") or None
        try:
            await client.chat_postMessage(channel=channel, thread_ts=thread_ts, text=text, unfurl_links=False)
        except SlackApiError as exc:
            log.warning("could not post the outcome of connecting a source: %s", exc.response.get("error"))

    async def _may_connect(self, who: Who, people: People) -> bool:
        place = place_of(self._runtime.services, await people.user(who))
        return self._runtime.services.actions.connectors.allowed(place)
