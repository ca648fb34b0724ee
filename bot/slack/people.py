"""Who and where, as Slack says: the request's `Who` (read once per request by the middleware
in `bot.slack.context`), and the people and channels behind it (users.info,
conversations.info), turned into the `Actor` the use cases check.

Privacy fails closed. A channel is private when Slack says it is private, a group, a group
DM or a DM; a channel whose lookup fails is treated as private when first seen and keeps
what is known otherwise (a failed or partial lookup never makes a private channel public).
Only a successful lookup says a channel is public.

Whether someone is a Slack Connect partner is what `users.info` says of them (`team_id`,
`is_stranger`, `enterprise_user`), cached a few minutes and kept in Lore's directory; a
request's own team fields only count when Slack cannot be asked, and then only to make
someone a partner, never to clear it (`partner_team`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.app.conversations import Actor, enter_channel, enter_dm
from bot.app.services import Services
from bot.slack.reader import display_name
from storage.records import ChannelRef, UserRef

log = logging.getLogger(__name__)
CACHE_SECONDS = 300.0
MEMBERSHIP_PAGE_SIZE = 200
MEMBERSHIP_PAGES = 10
CHANNELS = "public_channel,private_channel"
CONVERSATIONS = "public_channel,private_channel,mpim"


@dataclass(frozen=True)
class Who:
    """Who acts and where, read from a request once.

    `tenant` is the workspace Lore is installed in (never a partner's team, so a Slack
    Connect channel has one memory whoever speaks in it); `user_team` the actor's own team
    when Slack says it."""

    tenant: str
    user: str
    channel: str | None = None
    user_team: str | None = None
    is_dm: bool = False
    shared_externally: bool = False
    """The payload says the channel is shared with another organisation."""

    @property
    def partner(self) -> bool:
        """Someone of another organisation; in a shared channel, someone whose team Slack does
        not say counts as one (fail closed)."""
        if self.user_team is not None:
            return self.user_team != self.tenant
        return self.shared_externally


def confirmed_email(info: Mapping[str, Any], *, partner: bool) -> str:
    """The user's email as Slack gives it (`users:read.email`), when Slack says they
    confirmed it; "" otherwise (a partner's never counts: another organisation's address
    must not open this one's sources). What ties them to their accounts in connected
    sources, so an unconfirmed or missing email reads public documents only."""
    profile = info.get("profile") or {}
    email = str(profile.get("email") or "").strip().lower() if isinstance(profile, Mapping) else ""
    if partner or info.get("is_bot") or not info.get("is_email_confirmed") or "@" not in email:
        return ""
    return email


def is_private(info: Mapping[str, Any]) -> bool:
    """The one rule for a conversation's privacy, from conversations.info."""
    return bool(info.get("is_private") or info.get("is_group") or info.get("is_mpim") or info.get("is_im"))


UNKNOWN_TEAM = "unknown"
"""The organisation of someone Lore could not place: counted as a partner (fail closed)."""


def partner_team(info: Mapping[str, Any], who: Who) -> str | None:
    """Someone's organisation, as `ensure_user` takes it: "" for a member of the workspace
    Lore is installed in, their team's id for a partner, None when Slack could not be asked
    and the request says nothing new (what is stored stands; a request never clears it).

    `users.info` decides: a partner is a stranger to the workspace, or of another team that
    is not part of the same Enterprise Grid organisation's workspace Lore is in."""
    team = str(info.get("team_id") or "")
    if team:
        teams = (info.get("enterprise_user") or {}).get("teams") or []
        internal = not info.get("is_stranger") and (team == who.tenant or who.tenant in teams)
        return "" if internal else team
    if who.user_team and who.user_team != who.tenant:
        return who.user_team
    if who.shared_externally:
        return UNKNOWN_TEAM
    return None


class People:
    """Looks people and channels up in Slack (cached a few minutes; failures are not cached)
    and keeps Lore's directory in step with what Slack says."""

    def __init__(self, services: Services, client: AsyncWebClient) -> None:
        self._services = services
        self._client = client
        self._cache: dict[tuple[str, str], tuple[float, Mapping[str, Any]]] = {}

    async def actor(self, who: Who) -> Actor:
        """The actor of a request, in its conversation (entered, with its index, on first use)."""
        user = await self.user(who)
        if who.is_dm or who.channel is None:
            return await enter_dm(self._services, user)
        return await enter_channel(self._services, user, await self.channel(who))

    async def user(self, who: Who) -> UserRef:
        info = await self.lookup("user", who.user)
        guest = bool(info.get("is_restricted") or info.get("is_ultra_restricted"))
        team = partner_team(info, who)
        directory = self._services.directory
        if team is None and await asyncio.to_thread(directory.find_user, who.tenant, who.user) is None:
            team = UNKNOWN_TEAM  # unsure, and nothing known of them: a partner until Slack says
        return await asyncio.to_thread(
            directory.ensure_user,
            who.tenant,
            who.user,
            display_name(info),
            is_admin=bool(info.get("is_admin") or info.get("is_owner")) if info else None,
            home_team=team,
            is_guest=guest if info else None,
            email=confirmed_email(info, partner=who.partner) if info else None,
        )

    async def channel(self, who: Who) -> ChannelRef:
        assert who.channel is not None
        info = await self.lookup("channel", who.channel)
        shared = bool(info.get("is_ext_shared") or info.get("is_pending_ext_shared")) if info else None
        return await asyncio.to_thread(
            self._services.directory.ensure_channel,
            who.tenant,
            who.channel,
            str(info.get("name") or ""),
            is_private=is_private(info) if info else None,
            is_shared_externally=True if who.shared_externally else shared,
        )

    async def channel_name(self, channel_id: str) -> str:
        return str((await self.lookup("channel", channel_id)).get("name") or channel_id)

    async def member_of(self, who: Who) -> list[str]:
        """The channels (public and private) the user shares with Lore, by id, cached a few
        minutes; [] when Slack says no (fail closed: nothing to act on from the Home)."""
        return await self._conversations(who, CHANNELS)

    async def may_read(self, who: Who, channel: str) -> bool:
        """Whether Slack says `who` reads `channel`: their own DM with Lore, or a channel or
        group DM they are a member of. False when Slack cannot say (fail closed). What an
        interactive payload names (a form's channel, a button's answer) is checked with this
        before Lore acts on it, so a forged payload reaches nothing its sender can't read."""
        if channel.startswith("D"):
            info = await self.lookup("channel", channel)
            return bool(info.get("is_im")) and info.get("user") == who.user
        return channel in await self._conversations(who, CONVERSATIONS)

    async def _conversations(self, who: Who, types: str) -> list[str]:
        cached = self._cache.get((types, who.user))
        if cached and time.monotonic() - cached[0] < CACHE_SECONDS:
            return list(cached[1]["ids"])
        found: list[str] = []
        cursor: str | None = None
        try:
            for _ in range(MEMBERSHIP_PAGES):
                page = await self._client.users_conversations(
                    user=who.user,
                    types=types,
                    exclude_archived=True,
                    limit=MEMBERSHIP_PAGE_SIZE,
                    cursor=cursor,
                )
                found.extend(str(c["id"]) for c in page.get("channels") or [] if c.get("id"))
                cursor = (page.get("response_metadata") or {}).get("next_cursor") or None
                if cursor is None:
                    break
        except SlackApiError as exc:
            log.warning("users.conversations %s failed: %s", who.user, exc.response.get("error"))
            return []
        self._cache[(types, who.user)] = (time.monotonic(), {"ids": tuple(found)})
        return found

    async def group_members(self, group: str) -> frozenset[str]:
        """The people in a user group (usergroups.users.list), cached a few minutes; nobody
        when Slack says no (fail closed: no one is an expert by a group Lore cannot read)."""
        cached = self._cache.get(("group", group))
        if cached and time.monotonic() - cached[0] < CACHE_SECONDS:
            return frozenset(cached[1]["users"])
        try:
            found = (await self._client.usergroups_users_list(usergroup=group)).get("users") or []
        except SlackApiError as exc:
            log.warning("usergroups.users.list %s failed: %s", group, exc.response.get("error"))
            return frozenset()
        self._cache[("group", group)] = (time.monotonic(), {"users": tuple(str(u) for u in found)})
        return frozenset(str(u) for u in found)

    async def lookup(self, kind: str, key: str) -> Mapping[str, Any]:
        """users.info / conversations.info, cached for a few minutes; {} when Slack says no
        (not cached: the next message asks again)."""
        cached = self._cache.get((kind, key))
        if cached and time.monotonic() - cached[0] < CACHE_SECONDS:
            return cached[1]
        try:
            if kind == "user":
                found = (await self._client.users_info(user=key)).get("user") or {}
            else:
                found = (await self._client.conversations_info(channel=key)).get("channel") or {}
        except SlackApiError as exc:
            log.warning("%s.info %s failed: %s", kind, key, exc.response.get("error"))
            return {}
        self._cache[(kind, key)] = (time.monotonic(), found)
        return found
