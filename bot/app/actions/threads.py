"""Use cases on conversations as knowledge: save a thread ("remember this thread", the
"Add to Lore's memory" shortcut), learn a channel's history and forget it again, and keep a
learned channel's documents in step with what is said, edited and deleted there.

A thread (or, for a learned channel, a thread or one hour of its top-level messages) is one
document whose key says where it came from, so saving it again replaces the copy. Saving
is `Action.ADD` on the target index, and a private channel's thread is saved only into that
channel's own index (`target`), so its words stay where only its members read them.
Learning a channel writes only into that channel's own
index (a private channel's history never leaves it): `Action.ADD` there, which only its
members (and partners never) have; forgetting it is `Action.MANAGE_SOURCES` on it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from bot.app.actions.documents import UNEXPECTED, AddOutcome
from bot.app.actions.errors import refused
from bot.app.actions.indexes import IndexActions
from bot.app.actions.sources import Attached, SourceActions
from bot.app.audit import AuditAction
from bot.app.conversations import Actor
from knowledge import DocumentFacts, IngestError, IngestResult, KnowledgeError, NotAllowed, Source
from storage.access import Action, Place, allowed
from storage.records import IndexRef, SourceConfigRef
from storage.repositories.sources import SLACK_CHANNEL
from storage.values import Scope, SourceKind

if TYPE_CHECKING:
    from bot.app.services import Services

log = logging.getLogger(__name__)
__all__ = ["SLACK_CHANNEL", "Held", "Learned", "ThreadActions", "ThreadMessage", "ThreadText"]

LEARNED_CACHE_SECONDS = 30.0
CAPPED = "messages_capped"
"""A learned channel's job counter: the message limit its listing stopped at (absent: none)."""
HELD = "messages_held_cap"
"""A learned channel's job counter: the message limit the channel reached for the first time,
so its oldest messages started to be forgotten (absent: not this time)."""
HELD_CAP = "held_cap"
"""A learned channel's option: the message limit it has reached (and was told about)."""
MESSAGES = "messages"
"""A learned document's metadata: how many messages it holds."""
TITLE_WORDS = 60
ONLY_IN_A_CHANNEL = "I can learn a channel's history only from that channel: say it there."
ONLY_IN_SLACK = "I can learn a channel's history only in Slack, where I can read it."
LEARN_OWN_INDEX = "a channel's history goes only into that channel's own index"
PRIVATE_STAYS = (
    "this thread is in a private channel, so I keep it only in that channel's own index, "
    "which only its members can read"
)


@dataclass(frozen=True)
class ThreadMessage:
    """One message: who said it, when, and what (mentions already spelled as names)."""

    author: str
    at: datetime
    text: str


@dataclass(frozen=True)
class ThreadText:
    """A stretch of conversation as Lore keeps it: a thread, or one hour of a channel's
    top-level messages. `key` is its identity (saving it again replaces the copy), `url` its
    link (a permalink), `where` the conversation it is in ("#eng")."""

    key: str
    where: str
    url: str | None
    messages: tuple[ThreadMessage, ...]
    hour: datetime | None = None
    """For one hour of a channel's top-level messages (rather than a thread): its start."""

    @property
    def title(self) -> str:
        if self.hour is not None:
            return f"{self.where}, {self.hour:%Y-%m-%d %H}:00 UTC"
        opening = " ".join(self.messages[0].text.split()) if self.messages else ""
        if len(opening) > TITLE_WORDS:
            opening = opening[: TITLE_WORDS - 1].rsplit(" ", 1)[0] + "…"
        return f"Thread in {self.where}: {opening}" if opening else f"Thread in {self.where}"

    @property
    def authors(self) -> list[str]:
        return list(dict.fromkeys(m.author for m in self.messages))

    def render(self) -> str:
        """Markdown: each message under its author and time (the title and the link are the
        document's own, not part of its text)."""
        lines: list[str] = []
        for message in self.messages:
            lines += [f"**{message.author}** · {message.at:%Y-%m-%d %H:%M} UTC", message.text.strip(), ""]
        return "\n".join(lines).strip() + "\n"


@dataclass(frozen=True)
class Held:
    """One document of a learned channel as the message limit sees it: its key, how many
    messages it holds, and when the newest of them was written."""

    key: str
    messages: int
    newest: datetime | None


@dataclass(frozen=True)
class Learned:
    """A channel whose history Lore learned: its index and the attachment that keeps it."""

    index: IndexRef
    source: SourceConfigRef

    @property
    def channel(self) -> str:
        return self.source.folders[0]


class ThreadActions:
    def __init__(self, services: Services, indexes: IndexActions, sources: SourceActions) -> None:
        self._services = services
        self._indexes = indexes
        self._sources = sources
        self._learned: dict[tuple[str, str], Learned] = {}
        self._learned_at = 0.0

    # --- saving a thread ---

    async def target(self, actor: Actor, index: IndexRef) -> IndexRef:
        """Where a thread of the actor's conversation is saved when `index` is asked for:
        `index` itself, unless the conversation is a private channel (or a group DM) and
        `index` is not its own: then the channel's own index."""
        place = actor.place
        if place.channel_id is None or not place.channel_is_private or _home_of(index, place):
            return index
        channel = await asyncio.to_thread(self._services.directory.channel, place.channel_id)
        return await self._services.catalog.channel_index(channel)

    async def save(self, place: Place, index: IndexRef, thread: ThreadText) -> AddOutcome:
        """Save `thread` into `index` as one document (replacing an earlier copy of it); a
        private channel's thread only into that channel's own index."""
        if not allowed(Action.ADD, index.facts, place):
            raise refused(Action.ADD, index)
        if place.channel_id is not None and place.channel_is_private and not _home_of(index, place):
            raise NotAllowed(PRIVATE_STAYS)
        if not thread.messages:
            return AddOutcome(thread.title, error=f"I couldn't save {thread.title}: it has no text in it")
        try:
            result = await self._ingest(index, thread, added_by=place.user_id)
        except IngestError as exc:
            return AddOutcome(thread.title, error=str(exc))
        return AddOutcome(thread.title, result=result)

    async def addable(self, actor: Actor) -> list[IndexRef]:
        """The indexes the actor may save a thread of this conversation to: the
        conversation's default first (a private channel's: only its own)."""
        place = actor.place
        found = await self._indexes.visible(place)
        found = [i for i in found if allowed(Action.ADD, i.facts, place)]
        if place.channel_id is not None and place.channel_is_private:
            found = [i for i in found if _home_of(i, place)]
        enabled = [i.id for i in await self._indexes.enabled(actor)]
        return sorted(found, key=lambda i: (enabled.index(i.id) if i.id in enabled else len(enabled), i.name))

    # --- learning a channel ---

    async def learn(self, actor: Actor) -> Attached:
        """Attach the actor's channel's history to the channel's own index and queue the job
        that reads it (the one under way, if there is one)."""
        if not self._services.settings.slack_configured:
            raise KnowledgeError(ONLY_IN_SLACK)
        index = await self._own_index(actor)
        channel = await asyncio.to_thread(self._services.directory.channel, index.channel_id or 0)
        if not allowed(Action.ADD, index.facts, actor.place):
            raise refused(Action.ADD, index)
        source = await asyncio.to_thread(
            self._services.sources.attach_owned,
            index.tenant_id,
            index.id,
            SLACK_CHANNEL,
            f"#{channel.name or channel.external_id}",
            [channel.external_id],
            schedule="daily",
            created_by=actor.place.user_id,
        )
        self._learned_at = 0.0
        await self._services.audit.record(
            actor.place, AuditAction.SOURCE_ATTACH, learned_label(source), index=index.name
        )
        return await self._sources.start(index, source, conversation_id=actor.conversation.id)

    async def forget_history(self, actor: Actor) -> tuple[SourceConfigRef, int] | None:
        """Stop learning the actor's channel and remove what was learned: the attachment and
        the documents removed, or None when the channel's history was never learned."""
        index = await self._own_index(actor)
        source = next(
            (s for s in await self._sources.of_index(actor.place, index) if s.kind == SLACK_CHANNEL), None
        )
        if source is None:
            return None
        if not allowed(Action.MANAGE_SOURCES, index.facts, actor.place, contributor=source.created_by):
            raise refused(Action.MANAGE_SOURCES, index)
        removed = await self._services.jobs.detach_docsource_from_index(index, source)
        await self._services.audit.record(
            actor.place,
            AuditAction.SOURCE_DETACH,
            learned_label(source),
            index=index.name,
            documents_removed=removed,
        )
        self._learned_at = 0.0
        return source, removed

    async def _own_index(self, actor: Actor) -> IndexRef:
        place = actor.place
        if place.channel_id is None:
            raise KnowledgeError(ONLY_IN_A_CHANNEL)
        if place.partner:
            raise NotAllowed("people from other organisations can't change what Lore learns here")
        channel = await asyncio.to_thread(self._services.directory.channel, place.channel_id)
        return await self._services.catalog.channel_index(channel)

    # --- keeping a learned channel (the job, and message events) ---

    async def learned(self, tenant_id: str, channel: str) -> Learned | None:
        """The learned channel `channel` (a Slack id) of `tenant_id`, if its history is kept."""
        if time.monotonic() - self._learned_at > LEARNED_CACHE_SECONDS:
            self._learned = await asyncio.to_thread(self._all_learned)
            self._learned_at = time.monotonic()
        return self._learned.get((tenant_id, channel))

    def _all_learned(self) -> dict[tuple[str, str], Learned]:
        found = {}
        for source in self._services.sources.all():
            if source.kind == SLACK_CHANNEL and source.folders:
                index = self._services.indexes.get(source.index_id)
                found[(index.tenant_id, source.folders[0])] = Learned(index, source)
        return found

    async def check_learnable(self, index: IndexRef, channel: str) -> None:
        """Refuse to write a channel's history anywhere but the channel's own index."""
        own = index.scope == Scope.CHANNEL and index.channel_id is not None
        if own:
            stored = await asyncio.to_thread(self._services.directory.channel, index.channel_id or 0)
            own = stored.external_id == channel and stored.tenant_id == index.tenant_id
        if not own:
            raise KnowledgeError(LEARN_OWN_INDEX)

    async def keep(self, learned: Learned, thread: ThreadText) -> IngestResult:
        """Add or update one document of a learned channel; `IngestError` when it cannot."""
        return await self._ingest(learned.index, thread, source=learned.source)

    async def drop(self, learned: Learned, keys: Sequence[str]) -> int:
        """Remove the learned channel's documents with these keys; how many there were."""
        documents = await asyncio.to_thread(self._services.sources.documents, learned.source.id)
        wanted = set(keys)
        gone = [d for d in documents if d.source_key in wanted]
        if gone:
            await self._services.ingestor.remove(learned.index, [d.id for d in gone])
        return len(gone)

    async def kept(self, learned: Learned) -> set[str]:
        """The keys of the documents a learned channel has."""
        documents = await asyncio.to_thread(self._services.sources.documents, learned.source.id)
        return {d.source_key for d in documents}

    async def held(self, learned: Learned) -> list[Held]:
        """A learned channel's documents, newest first (by their newest message; a document
        kept before messages were counted counts as one, and as the oldest)."""
        documents = await asyncio.to_thread(self._services.sources.documents, learned.source.id)
        held = [
            Held(d.source_key, max(1, int(d.meta.get(MESSAGES) or 1)), d.doc_timestamp) for d in documents
        ]
        return sorted(held, key=lambda h: (_utc(h.newest), h.key), reverse=True)

    async def reached(self, learned: Learned, limit: int) -> bool:
        """The channel holds `limit` messages: True the first time (for this limit), so the
        people who manage it are told once."""
        source = await asyncio.to_thread(self._services.sources.get, learned.source.id)
        if source.options.get(HELD_CAP) == limit:
            return False
        await asyncio.to_thread(self._services.sources.set_options, learned.source.id, {HELD_CAP: limit})
        return True

    async def synced(self, learned: Learned, newest: str | None) -> None:
        """A sync finished: remember the newest message it read (the next one starts there)
        and when, so the schedule knows when the next is due."""
        if newest is not None:
            await asyncio.to_thread(self._services.sources.set_options, learned.source.id, {"newest": newest})
        await asyncio.to_thread(self._services.sources.mark_refreshed, learned.source.id)

    async def _ingest(
        self,
        index: IndexRef,
        thread: ThreadText,
        *,
        source: SourceConfigRef | None = None,
        added_by: int | None = None,
    ) -> IngestResult:
        last = thread.messages[-1].at if thread.messages else None
        facts = DocumentFacts(
            title=thread.title,
            author=", ".join(thread.authors)[:255] or None,
            url=thread.url,
            external_id=thread.key[:255],
            timestamp=last,
            extra={MESSAGES: len(thread.messages)},
        )
        document = Source(
            name=thread.title,
            data=thread.render().encode(),
            kind=SourceKind.TEXT if source is None else SourceKind.CONNECTOR,
            mime_type="text/markdown",
            source_key=thread.key,
            facts=facts,
            source_config_id=source.id if source is not None else None,
            added_by=added_by,
        )
        try:
            return await self._services.ingestor.add(index, document)
        except IngestError:
            raise
        except Exception as exc:  # one thread's failure is reported for it; the others go on
            log.exception("saving %s into index %s failed", thread.key, index.id)
            raise IngestError(thread.title, UNEXPECTED) from exc


def _utc(at: datetime | None) -> datetime:
    """A stored time as UTC (SQLite gives it back without a zone); none: the oldest."""
    if at is None:
        return datetime.min.replace(tzinfo=UTC)
    return at if at.tzinfo is not None else at.replace(tzinfo=UTC)


def _home_of(index: IndexRef, place: Place) -> bool:
    """`index` is the own index of the channel `place` acts from."""
    return (
        index.scope == Scope.CHANNEL and index.channel_id is not None and index.channel_id == place.channel_id
    )


def learned_label(source: SourceConfigRef) -> str:
    """How chat names a learned channel: "#eng's history"."""
    return f"{source.name}'s history"
