"""Use cases on documents: add files, text and web pages, list them, forget them.

Adding is per document: each gets its own outcome (added, updated, unchanged, or a specific
refusal), an unexpected failure of one is logged with its traceback and reported for that one,
and the others go on.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from bot.app.actions.errors import Ambiguous, refused
from bot.app.actions.indexes import IndexActions
from bot.app.audit import AuditAction
from knowledge import DocumentFacts, FetchError, IngestError, IngestResult, Outcome, Source, find_documents
from storage.access import Action, Place, allowed
from storage.records import DocumentRef, IndexRef
from storage.values import SourceKind

if TYPE_CHECKING:
    from bot.app.services import Services
    from knowledge import Fetcher

log = logging.getLogger(__name__)
UNEXPECTED = (
    "something went wrong on my side while reading it (it was logged for the admins); the others went on"
)


@dataclass(frozen=True)
class AddOutcome:
    """What became of one document: its result, or why it was not added."""

    name: str
    result: IngestResult | None = None
    error: str | None = None
    """Why it was not added, as a sentence naming the document."""
    reason: str | None = None
    """Why, without the name (for lists that already name it)."""

    @property
    def ok(self) -> bool:
        return self.result is not None

    @property
    def changed(self) -> bool:
        return self.result is not None and self.result.outcome != Outcome.UNCHANGED


Report = Callable[[AddOutcome], None]


class DocumentActions:
    def __init__(self, services: Services, indexes: IndexActions) -> None:
        self._services = services
        self._indexes = indexes

    async def add(
        self,
        place: Place,
        index: IndexRef,
        sources: Iterable[Source] | AsyncIterator[Source],
        *,
        report: Report | None = None,
    ) -> list[AddOutcome]:
        """Add each source to `index` (embedding several documents per batch), one outcome
        per source; `report` hears of each as it is known."""
        if not allowed(Action.ADD, index.facts, place):
            raise refused(Action.ADD, index)

        outcomes: list[AddOutcome] = []

        def on_result(source: Source, result: IngestResult | IngestError) -> None:
            outcomes.append(_outcome(source, result))
            if report is not None:
                report(outcomes[-1])

        adding = _each(sources, place)
        try:
            await self._services.ingestor.add_many(index, aiter(adding), on_result)
        except Exception:  # the batch itself broke: name what has no outcome, keep what was added
            log.exception("adding documents to index %s failed", index.id)
            named = {o.name for o in outcomes}
            for source in adding.seen:
                if source.name not in named:
                    on_result(source, IngestError(source.name, UNEXPECTED))
        return outcomes

    async def add_one(self, place: Place, index: IndexRef, source: Source) -> IngestResult:
        """Add one source; raises the `IngestError` saying why it could not be added."""
        if not allowed(Action.ADD, index.facts, place):
            raise refused(Action.ADD, index)
        if source.added_by is None and place.user_id is not None:
            source = replace(source, added_by=place.user_id)
        return await self._services.ingestor.add(index, source)

    async def add_page(self, place: Place, index: IndexRef, url: str, fetcher: Fetcher) -> AddOutcome:
        """Fetch one web page (safely: private addresses refused) and add it."""
        if not allowed(Action.ADD, index.facts, place):
            raise refused(Action.ADD, index)
        try:
            page = await fetcher.get(url)
        except FetchError as exc:
            return AddOutcome(url, error=f"I couldn't read {url}: {exc}", reason=str(exc))
        source = Source(
            name=page.url,
            data=page.body,
            kind=SourceKind.URL,
            mime_type=page.mime_type,
            facts=DocumentFacts(url=page.url),
            added_by=place.user_id,
        )
        return await self._add_one(index, source)

    async def listing(
        self, place: Place, index: IndexRef, *, limit: int = 50, after: int | None = None
    ) -> list[DocumentRef]:
        """The index's documents, oldest first, `limit` of them after the document `after`."""
        if not allowed(Action.SEARCH, index.facts, place):
            raise refused(Action.SEARCH, index)
        access = await self._services.actions.access.for_place(place)
        return await asyncio.to_thread(
            self._services.documents.list_ready, index.id, after_id=after, limit=limit, access=access
        )

    async def forget(self, place: Place, index: IndexRef, reference: str) -> list[DocumentRef]:
        """Remove the document of `index` that `reference` names (id, URL, name, or part of
        a name); the documents removed ([] when none matches). A reference that names several
        removes none (`Ambiguous` says which they are): "forget a" would forget every document
        whose name holds an "a", and "forget index.md" every project's."""
        access = await self._services.actions.access.for_place(place)
        found = await find_documents(self._services.documents, index, reference, access)
        if len(found) > 1:
            if not allowed(Action.SEARCH, index.facts, place):
                raise refused(Action.FORGET, index)
            raise Ambiguous(reference, index, found)
        return await self.remove(place, index, found)

    async def remove(
        self, place: Place, index: IndexRef, documents: Sequence[DocumentRef]
    ) -> list[DocumentRef]:
        """Remove these documents of `index`, if `place` may forget every one of them."""
        for document in documents:
            if not allowed(Action.FORGET, index.facts, place, contributor=document.added_by):
                raise refused(Action.FORGET, index)
        if documents:
            await self._services.ingestor.remove(index, [d.id for d in documents])
            for document in documents:
                await self._services.audit.record(
                    place,
                    AuditAction.DOCUMENT_FORGET,
                    document.name,
                    index=index.name,
                    document_id=document.id,
                )
        return list(documents)

    async def _add_one(self, index: IndexRef, source: Source) -> AddOutcome:
        try:
            return AddOutcome(source.name, result=await self._services.ingestor.add(index, source))
        except IngestError as exc:
            return AddOutcome(source.name, error=str(exc), reason=exc.reason)
        except Exception:
            log.exception("adding %r to index %s failed", source.name, index.id)
            return AddOutcome(source.name, error=str(IngestError(source.name, UNEXPECTED)))


def _outcome(source: Source, result: IngestResult | IngestError) -> AddOutcome:
    if isinstance(result, IngestError):
        return AddOutcome(source.name, error=str(result), reason=result.reason)
    return AddOutcome(source.name, result=result)


class _each:
    """The sources, each marked as added by the place's user, remembering those handed out."""

    def __init__(self, sources: Iterable[Source] | AsyncIterator[Source], place: Place) -> None:
        self._sources = sources
        self._user = place.user_id
        self.seen: list[Source] = []

    async def __aiter__(self) -> AsyncIterator[Source]:
        if isinstance(self._sources, AsyncIterator):
            async for source in self._sources:
                yield self._mark(source)
        else:
            for source in self._sources:
                yield self._mark(source)

    def _mark(self, source: Source) -> Source:
        if source.added_by is None and self._user is not None:
            source = replace(source, added_by=self._user)
        self.seen.append(source)
        return source
