"""Use cases behind a person's home in Lore (Slack's App Home tab): what they see (their
personal index, the indexes they may use, documents added lately, indexing jobs, the
channels they share with Lore and how each is set up, feedback on the indexes they look
after, and for admins the connectors and Lore's settings) and what they may do from there.

Acting from the Home, a person acts either from their private place (like their DM with
Lore) or, for something that belongs to a channel, from that channel, but only from a
channel they are a member of (`member_of`, the Slack channel ids the surface found): the
permission table then decides as it would in that channel.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.app.actions.access import SourceStatus
from bot.app.actions.documents import AddOutcome, DocumentActions
from bot.app.actions.feedback import FeedbackActions, IndexReview
from bot.app.actions.indexes import IndexActions
from bot.app.actions.sources import Attached, SourceActions, label
from bot.app.conversations import Actor, enter_channel, enter_dm, place_of
from knowledge import KnowledgeError, NotAllowed
from storage.access import Action, Place, allowed, may_change_settings, may_manage_connectors
from storage.document_access import AccessFilter
from storage.records import (
    ChannelRef,
    ConnectionRef,
    ConversationRef,
    DocumentRef,
    IndexRef,
    IndexStats,
    JobRef,
    SourceConfigRef,
    UserRef,
)
from storage.values import Scope

if TYPE_CHECKING:
    from bot.app.services import Services
    from knowledge import Fetcher

SHOWN_INDEXES = 15
SHOWN_DOCUMENTS = 8
SHOWN_JOBS = 8
NOT_A_MEMBER = "you can change a channel's settings from Home only for channels you are in"


@dataclass(frozen=True)
class IndexSummary:
    index: IndexRef
    stats: IndexStats


@dataclass(frozen=True)
class RecentDocument:
    document: DocumentRef
    index: IndexRef


@dataclass(frozen=True)
class JobSummary:
    job: JobRef
    source: str
    index: IndexRef
    manageable: bool
    """The viewer may refresh or stop it."""


@dataclass(frozen=True)
class ChannelSummary:
    channel: ChannelRef
    conversation: ConversationRef
    enabled: tuple[IndexRef, ...]
    """Default first."""
    enableable: tuple[IndexRef, ...]
    may_change: bool


@dataclass(frozen=True)
class AddTarget:
    """An index the viewer may add a page to, and the channel they act from (None: privately)."""

    index: IndexRef
    channel: str | None


@dataclass(frozen=True)
class AdminSummary:
    connections: tuple[ConnectionRef, ...] | None
    """None unless the viewer may manage connectors."""
    settings: tuple[tuple[str, str], ...]
    access: tuple[SourceStatus, ...] = ()
    """Each connector attachment's permission and group syncs (connector admins)."""


@dataclass(frozen=True)
class Home:
    user: UserRef
    personal: IndexSummary
    indexes: tuple[IndexSummary, ...]
    more_indexes: int
    documents: tuple[RecentDocument, ...]
    jobs: tuple[JobSummary, ...]
    channels: tuple[ChannelSummary, ...]
    feedback: tuple[IndexReview, ...]
    targets: tuple[AddTarget, ...]
    admin: AdminSummary | None


class HomeActions:
    def __init__(
        self,
        services: Services,
        indexes: IndexActions,
        documents: DocumentActions,
        sources: SourceActions,
        feedback: FeedbackActions,
    ) -> None:
        self._services = services
        self._indexes = indexes
        self._documents = documents
        self._sources = sources
        self._feedback = feedback

    async def home(self, user: UserRef, member_of: Sequence[str]) -> Home:
        """Everything the viewer's Home shows."""
        services = self._services
        private = place_of(services, user)
        access = await services.actions.access.for_place(private)  # the Home is theirs alone
        personal = await services.catalog.personal_index(user)
        channels = await self._channels(user, member_of)
        visible = await services.catalog.visible(private)
        shown = _ordered(visible, personal, {c.channel.id for c in channels})
        reachable = {i.id: i for i in visible} | {i.id: i for c in channels for i in c.enabled}
        summaries = [IndexSummary(i, await self._indexes.stats(i, access)) for i in shown[:SHOWN_INDEXES]]
        return Home(
            user=user,
            personal=IndexSummary(personal, await self._indexes.stats(personal, access)),
            indexes=tuple(summaries),
            more_indexes=max(0, len(shown) - SHOWN_INDEXES),
            documents=await self._documents_of(reachable, access),
            jobs=await self._jobs(user, reachable, channels),
            channels=tuple(channels),
            feedback=await self._reviews(user, channels),
            targets=await self._targets(user, visible, channels),
            admin=await self._admin(private),
        )

    async def set_enabled(
        self, user: UserRef, channel: str, index_id: int, on: bool, member_of: Sequence[str]
    ) -> tuple[IndexRef, bool, ChannelRef]:
        """Turn an index on or off in one of the viewer's channels (as they could there)."""
        actor = await self._actor(user, channel, member_of)
        index, changed = await self._indexes.set_enabled(actor, index_id, on)
        where = await asyncio.to_thread(self._services.directory.channel, actor.place.channel_id or 0)
        return index, changed, where

    async def refresh_job(self, user: UserRef, job_id: int, member_of: Sequence[str]) -> Attached:
        job, place = await self._job_place(user, job_id, member_of)
        if job.source_config_id is None:
            raise KnowledgeError("that job has no source to refresh")
        source = await asyncio.to_thread(self._services.sources.get, job.source_config_id)
        return await self._sources.refresh(place, source)

    async def stop_job(self, user: UserRef, job_id: int, member_of: Sequence[str]) -> JobRef:
        job, place = await self._job_place(user, job_id, member_of)
        return await self._sources.cancel_job(place, job.id)

    async def add_url(
        self,
        user: UserRef,
        index_id: int,
        channel: str | None,
        url: str,
        *,
        whole_site: bool,
        member_of: Sequence[str],
        fetcher: Fetcher,
    ) -> tuple[IndexRef, AddOutcome | Attached]:
        """Add one page (or attach the whole site, crawled as a job) to an index the viewer
        may add to, acting from `channel` (one of theirs) or privately."""
        actor = (
            await self._actor(user, channel, member_of) if channel else await enter_dm(self._services, user)
        )
        index = await self._indexes.get(actor.place, index_id, Action.ADD)
        if whole_site:
            conversation = actor.conversation.id
            return index, await self._sources.attach_site(
                actor.place, index, [url], conversation_id=conversation
            )
        return index, await self._documents.add_page(actor.place, index, url, fetcher)

    # -- what the Home is made of ---------------------------------------------------------

    async def _channels(self, user: UserRef, member_of: Sequence[str]) -> list[ChannelSummary]:
        services = self._services
        found = await asyncio.to_thread(services.directory.channel_conversations, user.tenant_id, member_of)
        summaries = []
        for channel, conversation in found:
            place = place_of(services, user, channel)
            enabled = await services.catalog.enabled(conversation, place)
            candidates = await services.catalog.visible(place, Action.ENABLE)
            on = {i.id for i in enabled}
            may_change = may_change_settings(place, locked=conversation.settings_locked)
            summaries.append(
                ChannelSummary(
                    channel,
                    conversation,
                    tuple(enabled),
                    tuple(sorted((i for i in candidates if i.id not in on), key=lambda i: i.name)),
                    may_change,
                )
            )
        return summaries

    async def _documents_of(
        self, reachable: dict[int, IndexRef], access: AccessFilter
    ) -> tuple[RecentDocument, ...]:
        recent = await asyncio.to_thread(
            self._services.documents.recent, list(reachable), limit=SHOWN_DOCUMENTS, access=access
        )
        return tuple(RecentDocument(d, reachable[d.index_id]) for d in recent)

    async def _jobs(
        self, user: UserRef, reachable: dict[int, IndexRef], channels: Sequence[ChannelSummary]
    ) -> tuple[JobSummary, ...]:
        jobs = await self._services.jobs.recent(index_ids=list(reachable), limit=SHOWN_JOBS)
        jobs.sort(key=lambda j: j.finished)  # running and queued first, each newest first
        homes = {c.channel.id: c.channel for c in channels}
        summaries = []
        for job in jobs:
            index = reachable[job.index_id]
            place = place_of(self._services, user, homes.get(index.channel_id or 0))
            source = None
            if job.source_config_id is not None:
                source = await asyncio.to_thread(self._services.sources.get, job.source_config_id)
            manageable = source is not None and await self._may_manage(place, source)
            summaries.append(
                JobSummary(job, label(source) if source else "a removed source", index, manageable)
            )
        return tuple(summaries)

    async def _may_manage(self, place: Place, source: SourceConfigRef) -> bool:
        try:
            await self._sources.check(place, source)
        except KnowledgeError:
            return False
        return True

    async def _reviews(self, user: UserRef, channels: Sequence[ChannelSummary]) -> tuple[IndexReview, ...]:
        places = [
            place_of(self._services, user),
            *(place_of(self._services, user, c.channel) for c in channels),
        ]
        found: dict[int, IndexReview] = {}
        for place in places:
            for review in await self._feedback.review(place, limit=20):
                found.setdefault(review.index.id, review)
        return tuple(found.values())

    async def _targets(
        self, user: UserRef, visible: Sequence[IndexRef], channels: Sequence[ChannelSummary]
    ) -> tuple[AddTarget, ...]:
        private = place_of(self._services, user)
        targets = [AddTarget(i, None) for i in visible if allowed(Action.ADD, i.facts, private)]
        for summary in channels:
            place = place_of(self._services, user, summary.channel)
            targets.extend(
                AddTarget(i, summary.channel.external_id)
                for i in summary.enabled
                if i.scope == Scope.CHANNEL and allowed(Action.ADD, i.facts, place)
            )
        return tuple(targets)

    async def _admin(self, place: Place) -> AdminSummary | None:
        connectors = may_manage_connectors(place)
        if not (place.user_is_admin or connectors):
            return None
        connections = None
        access: tuple[SourceStatus, ...] = ()
        if connectors:
            connections = tuple(await self._services.connections.for_tenant(place.tenant_id))
            access = tuple(await self._services.actions.access.status(place.tenant_id))
        settings = settings_summary(self._services) if place.user_is_admin else ()
        return AdminSummary(connections, settings, access)

    # -- where the viewer acts from ----------------------------------------------------------

    async def _actor(self, user: UserRef, channel: str | None, member_of: Sequence[str]) -> Actor:
        if channel is None or channel not in member_of:
            raise NotAllowed(NOT_A_MEMBER)
        found = await asyncio.to_thread(
            self._services.directory.channel_conversations, user.tenant_id, [channel]
        )
        if not found:
            raise NotAllowed(NOT_A_MEMBER)
        return await enter_channel(self._services, user, found[0][0])

    async def _job_place(self, user: UserRef, job_id: int, member_of: Sequence[str]) -> tuple[JobRef, Place]:
        """The job, and where the viewer acts on it from: a channel index's own channel
        (if the viewer is in it), else their private place."""
        services = self._services
        job = await services.jobs.get_indexing_job_status(job_id)
        index = await asyncio.to_thread(services.indexes.get, job.index_id)
        if index.scope == Scope.CHANNEL and index.channel_id is not None:
            channel = await asyncio.to_thread(services.directory.channel, index.channel_id)
            if channel.tenant_id == user.tenant_id and channel.external_id in member_of:
                return job, place_of(services, user, channel)
        return job, place_of(services, user)


def _ordered(visible: Sequence[IndexRef], personal: IndexRef, mine: set[int]) -> list[IndexRef]:
    """Personal first, then shared indexes, then the viewer's channels', then the rest."""

    def rank(index: IndexRef) -> tuple[int, str]:
        if index.id == personal.id:
            return 0, ""
        if index.scope == Scope.SHARED:
            return 1, index.name
        return (2 if index.channel_id in mine else 3), index.name

    return sorted(visible, key=rank)


def settings_summary(services: Services) -> tuple[tuple[str, str], ...]:
    """The settings an admin most needs to know, in words (never a secret)."""
    settings = services.settings
    admins = ", ".join(sorted(settings.connector_admins)) or "workspace admins only"
    return (
        (
            "Answers",
            f"generated by {settings.llm_model}"
            if settings.llm_configured
            else "quoted from the documents (no model configured)",
        ),
        ("Embeddings", settings.embedding_model),
        ("Slack Connect partners", str(settings.lore_slack_connect.value)),
        ("Connector admins", admins),
        (
            "Stored credentials",
            "encrypted with LORE_SECRET_KEY" if settings.lore_secret_key else "refused (no LORE_SECRET_KEY)",
        ),
        ("Largest file", f"{settings.lore_max_file_mb} MB"),
        (
            "Crawls",
            f"up to {settings.lore_crawl_max_pages} pages, {settings.lore_crawl_max_depth} links deep",
        ),
    )
