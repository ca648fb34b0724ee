"""Entering a conversation: the first time Lore is talked to somewhere, that place gets its
index (a channel its channel index, a user their personal index), enabled by default."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from bot.app.services import Services
from storage.access import Place
from storage.records import ChannelRef, ConversationRef, UserRef


@dataclass(frozen=True)
class Actor:
    """Who acts and from which conversation, with the place the access policy checks."""

    user: UserRef
    conversation: ConversationRef
    place: Place


async def enter_channel(services: Services, user: UserRef, channel: ChannelRef) -> Actor:
    """The user speaking in a channel; the channel's index is created and enabled on first use."""
    conversation = await asyncio.to_thread(services.directory.channel_conversation, channel)
    enabled = await asyncio.to_thread(services.indexes.enabled, conversation.id)
    if not enabled:
        index = await services.catalog.channel_index(channel)
        await services.catalog.enable(conversation, index)
    place = Place(
        channel.tenant_id,
        user.id,
        channel_id=channel.id,
        channel_is_private=channel.is_private,
        user_is_admin=user.is_admin,
    )
    return Actor(user, conversation, place)


async def enter_dm(services: Services, user: UserRef) -> Actor:
    """The user in their DM with Lore; their personal index is created and enabled on first use."""
    conversation = await asyncio.to_thread(services.directory.dm_conversation, user)
    enabled = await asyncio.to_thread(services.indexes.enabled, conversation.id)
    if not enabled:
        index = await services.catalog.personal_index(user)
        await services.catalog.enable(conversation, index)
    return Actor(user, conversation, Place(user.tenant_id, user.id, user_is_admin=user.is_admin))
