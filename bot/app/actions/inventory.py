"""Use cases of the console's Knowledge page: the indexes someone looks after, with their
documents, sources and jobs, the documents answers cite most and those they never cite; and
what may be done to them there (forget a document, refresh or stop a source, delete an
index), each through the use case chat uses, so the permission table decides the same way.

Admins see every index they may list; an index owner only the shared indexes they created.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.app.actions.admin import AdminActions, ConsoleRole
from bot.app.actions.documents import DocumentActions
from bot.app.actions.indexes import IndexActions, describe
from bot.app.actions.sources import SourceActions, label
from knowledge import IndexNotFound, KnowledgeError, NotAllowed
from storage.access import Action, Place, allowed, may_manage_connectors
from storage.records import DocumentRef, IndexRef, IndexStats, JobRef, NotFound, SourceConfigRef
from storage.repositories.citations import Cited
from storage.repositories.sources import SITE, SLACK_CHANNEL
from storage.repositories.usage import UsageRepository

if TYPE_CHECKING:
    from bot.app.services import Services

NOT_YOURS = "the console shows you only the indexes you look after"
PERMISSIONS_NOT_SYNCED = "not synced: Lore's permission table applies"
"""A source's permission-sync status until sources sync their own permissions."""


@dataclass(frozen=True)
class SourceView:
    source: SourceConfigRef
    label: str
    job: JobRef | None
    may_manage: bool
    permissions: str = PERMISSIONS_NOT_SYNCED


@dataclass(frozen=True)
class DocumentView:
    document: DocumentRef
    may_forget: bool


@dataclass(frozen=True)
class IndexView:
    index: IndexRef
    described: str
    stats: IndexStats
    sources: tuple[SourceView, ...]
    documents: tuple[DocumentView, ...] = ()
    may_delete: bool = False


@dataclass(frozen=True)
class Inventory:
    indexes: tuple[IndexView, ...]
    jobs: tuple[JobRef, ...]
    cited: tuple[Cited, ...]
    never_cited: tuple[Cited, ...]
    names: dict[int, str]
    """Index names by id, for the jobs and documents listed."""


class InventoryActions:
    def __init__(
        self,
        services: Services,
        admin: AdminActions,
        indexes: IndexActions,
        documents: DocumentActions,
        sources: SourceActions,
    ) -> None:
        self._services = services
        self._admin = admin
        self._indexes = indexes
        self._documents = documents
        self._sources = sources
        self._usage = UsageRepository(services.db)

    async def looked_after(self, place: Place) -> list[IndexRef]:
        """The indexes the console shows `place`: all it may list (admins), or the shared
        ones it created (index owners); nothing for anyone else."""
        role = await self._admin.role(place)
        if role == ConsoleRole.ADMIN:
            return await self._services.catalog.visible(place, Action.LIST)
        if role == ConsoleRole.OWNER:
            return await self._admin.owned(place)
        raise NotAllowed(NOT_YOURS)

    async def inventory(self, place: Place) -> Inventory:
        indexes = await self.looked_after(place)
        views = [await self._view(place, index, documents=False) for index in indexes]
        ids = [i.id for i in indexes]
        jobs = await self._services.jobs.recent(index_ids=ids, limit=20) if ids else []
        cited = await asyncio.to_thread(self._usage.cited, ids)
        never = await asyncio.to_thread(self._usage.never_cited, ids)
        return Inventory(
            tuple(views), tuple(jobs), tuple(cited), tuple(never), {i.id: i.name for i in indexes}
        )

    async def index(self, place: Place, index_id: int) -> IndexView:
        """One index the console shows `place`, with its documents."""
        return await self._view(place, await self._looked_after(place, index_id), documents=True)

    async def forget(self, place: Place, index_id: int, document_id: int) -> DocumentRef:
        index = await self._looked_after(place, index_id)
        try:
            document = await asyncio.to_thread(self._services.documents.get, document_id)
        except NotFound:
            raise KnowledgeError("that document is already gone") from None
        if document.index_id != index.id:
            raise KnowledgeError("that document is already gone")
        [removed] = await self._documents.remove(place, index, [document])
        return removed

    async def refresh(self, place: Place, source_id: int) -> JobRef:
        source = await self._source(place, source_id)
        return (await self._sources.refresh(place, source)).job

    async def stop(self, place: Place, source_id: int) -> JobRef | None:
        return await self._sources.stop(place, await self._source(place, source_id))

    async def delete(self, place: Place, index_id: int) -> IndexRef:
        index = await self._looked_after(place, index_id)
        await self._indexes.delete(place, index)
        return index

    async def _looked_after(self, place: Place, index_id: int) -> IndexRef:
        for index in await self.looked_after(place):
            if index.id == index_id:
                return index
        raise IndexNotFound(str(index_id), [])

    async def _source(self, place: Place, source_id: int) -> SourceConfigRef:
        try:
            source = await asyncio.to_thread(self._services.sources.get, source_id)
        except NotFound:
            raise KnowledgeError("that source is no longer attached") from None
        await self._looked_after(place, source.index_id)
        return source

    async def _view(self, place: Place, index: IndexRef, *, documents: bool) -> IndexView:
        stats = await self._indexes.stats(index)
        sources = []
        for source in await self._services.jobs.list_docsources(index):
            recent = await asyncio.to_thread(
                self._services.jobs.repository.recent, source_config_id=source.id, limit=1
            )
            last = recent[0] if recent else None
            sources.append(SourceView(source, label(source), last, self._may_manage(place, index, source)))
        shown: list[DocumentView] = []
        if documents and allowed(Action.SEARCH, index.facts, place):
            for document in await self._documents.listing(place, index, limit=200):
                may = allowed(Action.FORGET, index.facts, place, contributor=document.added_by)
                shown.append(DocumentView(document, may))
        return IndexView(
            index,
            describe(index, place),
            stats,
            tuple(sources),
            tuple(shown),
            allowed(Action.DELETE, index.facts, place),
        )

    @staticmethod
    def _may_manage(place: Place, index: IndexRef, source: SourceConfigRef) -> bool:
        if source.kind in (SITE, SLACK_CHANNEL):
            return allowed(Action.MANAGE_SOURCES, index.facts, place, contributor=source.created_by)
        return may_manage_connectors(place)
