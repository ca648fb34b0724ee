"""Who is in a Slack channel or user group, read with the workspace's bot token, for the
attachments restricted to them (`bot.app.actions.restrictions`): conversations.members page by
page (`cursor`, `response_metadata.next_cursor`), usergroups.users.list (every member at
once). Any error Slack gives, or a page that never ends, is a `MembershipError`: the caller
fails closed.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.web.async_client import AsyncWebClient

from bot.app.actions import SlackMembers
from bot.app.actions.restrictions import MembershipError
from bot.app.services import Services
from bot.slack.reader import build_client

log = logging.getLogger(__name__)
PAGE_SIZE = 200
MAX_PAGES = 500
"""100,000 members at most: a channel larger than that is not read whole, so not at all."""

ClientOf = Callable[[str], Awaitable[AsyncWebClient]]


class SlackMemberships:
    """`SlackMembers` through the Web API, with each workspace's client."""

    def __init__(self, client_of: ClientOf) -> None:
        self._client_of = client_of

    async def members(self, tenant_id: str, group_key: str) -> list[str]:
        kind, _, value = group_key.partition(":")
        try:
            client = await self._client_of(tenant_id)
            if kind == "usergroup":
                found = (await client.usergroups_users_list(usergroup=value)).get("users") or []
                return [str(u) for u in found]
            if kind == "channel":
                return await self._channel(client, value)
        except SlackApiError as exc:
            raise MembershipError(f"Slack said {exc.response.get('error')} for {group_key}") from exc
        except (SlackClientError, LookupError, OSError) as exc:
            raise MembershipError(
                f"Slack could not be asked about {group_key} ({type(exc).__name__})"
            ) from exc
        raise MembershipError(f"{group_key} is not a Slack channel or user group")

    async def _channel(self, client: AsyncWebClient, channel: str) -> list[str]:
        found: list[str] = []
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            page = await client.conversations_members(channel=channel, limit=PAGE_SIZE, cursor=cursor)
            found += [str(u) for u in page.get("members") or []]
            cursor = (page.get("response_metadata") or {}).get("next_cursor") or None
            if cursor is None:
                return found
        raise MembershipError(f"channel {channel} has more than {MAX_PAGES * PAGE_SIZE} members")


def slack_members(services: Services) -> SlackMembers | None:
    """Membership reads for the process (none without Slack): with the bot token, or with
    each workspace's installation's."""
    settings = services.settings
    if settings.slack_oauth:
        from bot.slack.installs import InstalledTokens

        tokens = InstalledTokens(settings, services.db, services.removals)
        return SlackMemberships(tokens.client)
    if settings.slack_bot_token is None:
        return None
    client = build_client(settings.slack_bot_token.get_secret_value(), settings.slack_api_url)

    async def configured(_tenant: str) -> AsyncWebClient:
        return client

    return SlackMemberships(configured)


def attach(services: Services) -> Services:
    """Give the services their membership reads (once)."""
    if services.slack_members is None:
        services.slack_members = slack_members(services)
    return services
