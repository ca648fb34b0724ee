"""Use cases on attached sources (crawled sites, connector attachments) and their jobs:
attach a site, find the sources a conversation uses, refresh, stop, reschedule, detach.

Managing a site is `Action.MANAGE_SOURCES` on its index (with whoever attached it as the
contributor); managing what a connector brings is for connector admins only.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from bot.app.actions.errors import CONNECTORS, refused
from bot.app.audit import AuditAction
from bot.app.conversations import Actor
from knowledge import CONNECTORS as CONNECTOR_KINDS
from knowledge import KnowledgeError, NotAllowed, Refused, Schedule
from storage.access import Action, Place, allowed, may_manage_connectors
from storage.records import IndexRef, JobRef, NotFound, SourceConfigRef
from storage.repositories.sources import SITE, SLACK_CHANNEL

if TYPE_CHECKING:
    from bot.app.services import Services


@dataclass(frozen=True)
class Attached:
    """A source attached to an index, and its job (`already_running`: a job was under way)."""

    source: SourceConfigRef
    index: IndexRef
    job: JobRef
    already_running: bool = False
    created_index: bool = False


class SourceActions:
    def __init__(self, services: Services) -> None:
        self._services = services
        self._jobs = services.jobs
        self._audit = services.audit

    async def attach_site(
        self,
        place: Place,
        index: IndexRef,
        urls: Sequence[str],
        *,
        conversation_id: int | None = None,
        schedule: Schedule | None = None,
        options: dict[str, object] | None = None,
    ) -> Attached:
        """Attach a site to `index` and queue its crawl. `KnowledgeError` for a URL Lore may
        not crawl."""
        if not allowed(Action.ADD, index.facts, place):
            raise refused(Action.ADD, index)
        try:
            source = await self._jobs.attach_site(
                index,
                list(urls),
                created_by=place.user_id,
                schedule=schedule.text if schedule else "daily",
                options=options,
            )
        except Refused as exc:
            raise KnowledgeError(f"I can't crawl {urls[0]}: {exc}") from None
        await self._audit.record(
            place, AuditAction.SOURCE_ATTACH, label(source), index=index.name, urls=list(urls)
        )
        return await self.start(index, source, conversation_id=conversation_id)

    async def start(
        self,
        index: IndexRef,
        source: SourceConfigRef,
        *,
        conversation_id: int | None = None,
        trigger: str = "manual",
    ) -> Attached:
        """Queue a job for a source just attached (the one under way, if there is one)."""
        active = await asyncio.to_thread(self._jobs.repository.active_for_source, source.id)
        if active is not None:
            return Attached(source, index, active, already_running=True)
        job = await self._jobs.start_indexing_job(
            index, source, conversation_id=conversation_id, trigger=trigger
        )
        return Attached(source, index, job)

    async def of_index(self, place: Place, index: IndexRef) -> list[SourceConfigRef]:
        if not allowed(Action.LIST, index.facts, place):
            raise refused(Action.LIST, index)
        return await self._jobs.list_docsources(index)

    async def here(self, actor: Actor) -> list[SourceConfigRef]:
        """The sources of the indexes the actor's conversation searches."""
        indexes = await self._services.catalog.enabled(actor.conversation, actor.place)
        found: list[SourceConfigRef] = []
        for index in indexes:
            found.extend(await self._jobs.list_docsources(index))
        return found

    async def find_here(self, actor: Actor, reference: str) -> SourceConfigRef | None:
        """The source of this conversation that `reference` names ("docs.example.com",
        a start URL, "confluence", "Confluence ENG"), if exactly one does."""
        return match_source(reference, await self.here(actor))

    async def recent_jobs(self, actor: Actor, *, limit: int = 8) -> list[JobRef]:
        return await self._jobs.recent(conversation_id=actor.conversation.id, limit=limit)

    async def refresh(
        self, place: Place, source: SourceConfigRef, *, conversation_id: int | None = None
    ) -> Attached:
        index = await self.check(place, source)
        await self._audit.record(place, AuditAction.SOURCE_REFRESH, label(source), index=index.name)
        return await self.start(index, source, conversation_id=conversation_id, trigger="refresh")

    async def stop(self, place: Place, source: SourceConfigRef) -> JobRef | None:
        """Ask the source's running job to stop; None when nothing runs."""
        index = await self.check(place, source)
        active = await asyncio.to_thread(self._jobs.repository.active_for_source, source.id)
        if active is None:
            return None
        await self._audit.record(
            place, AuditAction.SOURCE_STOP, label(source), index=index.name, job=active.id
        )
        return await self._jobs.cancel(active.id)

    async def reschedule(self, place: Place, source: SourceConfigRef, schedule: Schedule) -> SourceConfigRef:
        index = await self.check(place, source)
        changed = await asyncio.to_thread(self._services.sources.set_schedule, source.id, schedule.text)
        await self._audit.record(
            place, AuditAction.SOURCE_RESCHEDULE, label(source), index=index.name, schedule=schedule.text
        )
        return changed

    async def detach(self, place: Place, source: SourceConfigRef) -> int:
        """Stop its job, remove its documents, detach it; the documents removed."""
        index = await self.check(place, source)
        removed = await self._jobs.detach_docsource_from_index(index, source)
        await self._audit.record(
            place, AuditAction.SOURCE_DETACH, label(source), index=index.name, documents_removed=removed
        )
        return removed

    async def forget_folder(
        self, place: Place, source: SourceConfigRef, folder: str, *, conversation_id: int | None = None
    ) -> Attached:
        """Take one folder (a space, a repository) out of a connector's attachment that has
        others, and sync what stays: the sync removes the folder's documents."""
        index = await self.check(place, source)
        repository = self._services.connections.repository
        kept = await asyncio.to_thread(repository.drop_folder, source.id, folder)
        await self._audit.record(
            place, AuditAction.SOURCE_FORGET_FOLDER, label(source), index=index.name, folder=folder
        )
        return await self.start(index, kept, conversation_id=conversation_id, trigger="refresh")

    async def cancel_job(self, place: Place, job_id: int) -> JobRef:
        """Stop a job by id, if `place` may manage its source."""
        try:
            job = await self._jobs.get_indexing_job_status(job_id)
        except NotFound:
            raise KnowledgeError(f"there is no indexing job {job_id}; `lore jobs` lists them") from None
        if job.source_config_id is not None:
            await self.check(place, await asyncio.to_thread(self._services.sources.get, job.source_config_id))
        await self._audit.record(place, AuditAction.JOB_CANCEL, f"job {job_id}", job=job_id)
        return await self._jobs.cancel(job_id)

    async def check(self, place: Place, source: SourceConfigRef) -> IndexRef:
        """The source's index, if `place` may manage the source."""
        index = await asyncio.to_thread(self._services.indexes.get, source.index_id)
        if not allowed(Action.LIST, index.facts, place):
            raise refused(Action.LIST, index)
        if source.kind not in (SITE, SLACK_CHANNEL):
            if not may_manage_connectors(place):
                raise NotAllowed(CONNECTORS)
        elif not allowed(Action.MANAGE_SOURCES, index.facts, place, contributor=source.created_by):
            raise refused(Action.MANAGE_SOURCES, index)
        return index


def label(source: SourceConfigRef) -> str:
    """How people name an attached source: a site by host and path, a connector's attachment
    by its kind and folders ("Confluence ENG, OPS")."""
    if source.kind == SITE:
        return source.name
    if source.kind == SLACK_CHANNEL:
        return f"{source.name}'s history"
    kind = CONNECTOR_KINDS.get(source.kind)
    return f"{kind.label if kind else source.kind.capitalize()} {', '.join(source.folders)}"


def match_source(reference: str, sources: Sequence[SourceConfigRef]) -> SourceConfigRef | None:
    wanted = _plain(reference)
    if not wanted:
        return sources[0] if len(sources) == 1 else None
    exact = [s for s in sources if wanted in _names(s)]
    if exact:
        return exact[0]
    partial = [s for s in sources if any(name.startswith(wanted) or wanted in name for name in _names(s))]
    return partial[0] if len(partial) == 1 else None


def _plain(reference: str) -> str:
    """`https://Docs.example.com/api/` → `docs.example.com/api`: how sites are compared."""
    text = reference.strip().strip("<>").lower()
    if "://" in text:
        parts = urlsplit(text)
        text = (parts.hostname or "") + parts.path
    return text.rstrip("/")


def _names(source: SourceConfigRef) -> list[str]:
    """What a reference to the source may say: its name, start URLs or folders, its label,
    and for a connector its kind ("refresh confluence")."""
    names = [_plain(source.name), *map(_plain, source.start_urls), _plain(label(source))]
    if source.kind == SLACK_CHANNEL:
        return [*names, "this channel", "this channel's history", "channel history", "history"]
    return names if source.kind == SITE else [*names, source.kind]


def folder_named(source: SourceConfigRef, reference: str) -> str | None:
    """The folder `reference` names when it is one of a connector attachment's several
    ("forget acme/website" of an attachment of acme/payments and acme/website)."""
    if source.kind in (SITE, SLACK_CHANNEL) or len(source.folders) < 2:
        return None
    wanted = reference.strip().strip("<>`'\"“”").lower()
    return next((f for f in source.folders if f.lower() == wanted), None)
