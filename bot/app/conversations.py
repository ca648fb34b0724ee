"""Entering a conversation: who acts, from where, with which rights. The first time Lore is
talked to somewhere, that place gets its index (a channel its channel index, a user their
personal index), enabled by default."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from bot.app.services import Services
from storage.access import PartnerPolicy, Place
from storage.records import ChannelRef, ConversationRef, UserRef


@dataclass(frozen=True)
class Actor:
    """Who acts and from which conversation, with the place the access policy checks."""

    user: UserRef
    conversation: ConversationRef
    place: Place


def place_of(services: Services, user: UserRef, channel: ChannelRef | None = None) -> Place:
    """Where `user` acts from (a channel, or a private place) and what they are there:
    an admin, a connector admin, or an outsider: a Slack Connect partner or a guest, who
    (unless `LORE_SLACK_CONNECT=trusted`) reads only the channel's own index and changes
    nothing."""
    settings = services.settings
    trusted = settings.lore_slack_connect == PartnerPolicy.TRUSTED
    outsider = user.home_team is not None or user.is_guest
    return Place(
        user.tenant_id,
        user.id,
        channel_id=channel.id if channel else None,
        channel_is_private=channel.is_private if channel else False,
        user_is_admin=user.is_admin and not outsider,
        partner=outsider and not trusted,
        external=channel is not None and channel.is_shared_externally and not trusted,
        connector_admin=not outsider and user.external_id in settings.connector_admins,
    )


async def enter_channel(services: Services, user: UserRef, channel: ChannelRef) -> Actor:
    """The user speaking in a channel; the channel's index is created and enabled on first use."""
    conversation = await asyncio.to_thread(services.directory.channel_conversation, channel)
    enabled = await asyncio.to_thread(services.indexes.enabled, conversation.id)
    if not enabled:
        index = await services.catalog.channel_index(channel)
        await services.catalog.enable(conversation, index)
    return Actor(user, conversation, place_of(services, user, channel))


async def enter_dm(services: Services, user: UserRef) -> Actor:
    """The user in their DM with Lore; their personal index is created and enabled on first use."""
    conversation = await asyncio.to_thread(services.directory.dm_conversation, user)
    enabled = await asyncio.to_thread(services.indexes.enabled, conversation.id)
    if not enabled:
        index = await services.catalog.personal_index(user)
        await services.catalog.enable(conversation, index)
    return Actor(user, conversation, place_of(services, user))
