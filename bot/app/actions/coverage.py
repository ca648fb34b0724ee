"""Use cases of the console's Coverage page: the groups of questions Lore could not answer
(or whose answers did not help), as the coverage-gap job left them (`bot.app.gaps`), each
with the questions its reader may read, the documents closest to them, and what fills the
gap: a written answer, or a document, added to an index the reader may add to.

Admins see every group; an index owner the questions that searched one of their indexes.
Texts follow the feedback review's rule (`storage.access.sight`): a question asked where the
reader could not read it is counted, never shown.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from bot.app.actions.admin import AdminActions, ConsoleRole
from bot.app.actions.documents import AddOutcome, DocumentActions
from bot.app.actions.indexes import IndexActions
from bot.app.audit import AuditAction
from bot.app.gaps import GapRun
from knowledge import DocumentFacts, KnowledgeError, NotAllowed, Source
from storage.access import Action, Place, Sight, allowed, sight
from storage.records import IndexRef
from storage.repositories.history import AnswerHistory, Asked
from storage.repositories.workspace import WorkspaceStore
from storage.values import SourceKind

if TYPE_CHECKING:
    from bot.app.services import Services

NOT_YOURS = "the Coverage page is for workspace admins and the owners of shared indexes"
SHOWN_DOCUMENTS = 5
MOST_ANSWER_CHARACTERS = 20_000


@dataclass(frozen=True)
class GapQuestion:
    answer_id: int
    at: datetime
    text: str
    where: str
    abstained: bool
    helpful: int
    unhelpful: int
    comments: tuple[str, ...]


@dataclass(frozen=True)
class CloseDocument:
    name: str
    url: str | None
    index: str
    passage: str


@dataclass(frozen=True)
class Gap:
    rank: int
    questions: tuple[GapQuestion, ...]
    """Those the reader may read, the group's head first."""
    withheld: int
    """Questions of the group the reader may count but not read."""
    documents: tuple[CloseDocument, ...] = ()

    @property
    def size(self) -> int:
        return len(self.questions) + self.withheld

    @property
    def title(self) -> str:
        return self.questions[0].text if self.questions else f"{self.withheld} questions you can't read"


@dataclass(frozen=True)
class Coverage:
    gaps: tuple[Gap, ...]
    last_run: GapRun | None
    targets: tuple[IndexRef, ...]
    """Where the reader may add an answer or a document."""


class CoverageActions:
    def __init__(
        self, services: Services, admin: AdminActions, indexes: IndexActions, documents: DocumentActions
    ) -> None:
        self._services = services
        self._admin = admin
        self._indexes = indexes
        self._documents = documents
        self._history = AnswerHistory(services.db)
        self._store = WorkspaceStore(services.db)

    async def coverage(self, place: Place) -> Coverage:
        scope = await self._scope(place)
        records = await asyncio.to_thread(self._store.gaps, place.tenant_id)
        everything = {
            i.id: i for i in await asyncio.to_thread(self._services.indexes.list_for_tenant, place.tenant_id)
        }
        gaps = []
        for record in records:
            asked = await asyncio.to_thread(self._history.some, place.tenant_id, record.answer_ids)
            gap = _gap(place, record.rank, asked, everything, scope)
            if gap is not None:
                gaps.append(gap)
        gaps.sort(key=lambda g: (-g.size, g.rank))
        last = await asyncio.to_thread(self._services.gaps.last_run, place.tenant_id)
        return Coverage(tuple(gaps), last, tuple(await self.targets(place)))

    async def gap(self, place: Place, rank: int) -> Gap:
        """One group, with the documents closest to what it asks."""
        for gap in (await self.coverage(place)).gaps:
            if gap.rank == rank:
                return _with_documents(gap, await self._closest(place, gap))
        raise KnowledgeError("that group is gone: the coverage-gap job has run again since")

    async def recompute(self, place: Place) -> GapRun | None:
        """Run the coverage-gap job for the workspace now (None: a run is under way)."""
        await self._scope(place)
        return await self._services.gaps.run(place.tenant_id)

    async def targets(self, place: Place) -> list[IndexRef]:
        visible = await self._services.catalog.visible(place, Action.ADD)
        return [i for i in visible if allowed(Action.ADD, i.facts, place)]

    async def add_answer(self, place: Place, index_id: int, question: str, answer: str) -> AddOutcome:
        """A written answer to a question, added to an index as a document of its own (an
        answer people verified: it is quoted like any document, and says who wrote it)."""
        await self._scope(place)
        question, answer = question.strip(), answer.strip()
        if not question or not answer:
            raise KnowledgeError("write the question and its answer")
        if len(answer) > MOST_ANSWER_CHARACTERS:
            raise KnowledgeError(
                f"an answer is at most {MOST_ANSWER_CHARACTERS} characters; add a document instead"
            )
        index = await self._indexes.get(place, index_id, Action.ADD)
        body = f"# {question}\n\n{answer}\n"
        source = Source(
            name=f"Answer: {question[:120]}",
            data=body.encode("utf-8"),
            kind=SourceKind.TEXT,
            mime_type="text/markdown",
            facts=DocumentFacts(title=question[:200], extra={"verified": "true"}),
            added_by=place.user_id,
        )
        [outcome] = await self._documents.add(place, index, [source])
        if outcome.ok:
            await self._services.audit.record(
                place, AuditAction.ANSWER_VERIFY, question[:200], index=index.name, document=outcome.name
            )
        return outcome

    async def add_document(
        self, place: Place, index_id: int, name: str, data: bytes, mime_type: str | None
    ) -> AddOutcome:
        await self._scope(place)
        index = await self._indexes.get(place, index_id, Action.ADD)
        source = Source(name=name, data=data, mime_type=mime_type, added_by=place.user_id)
        [outcome] = await self._documents.add(place, index, [source])
        if outcome.ok:
            await self._services.audit.record(place, AuditAction.DOCUMENT_ADD, outcome.name, index=index.name)
        return outcome

    async def _scope(self, place: Place) -> set[int] | None:
        """The indexes whose questions the reader looks after (None: all, for admins)."""
        role = await self._admin.role(place)
        if role == ConsoleRole.ADMIN:
            return None
        if role == ConsoleRole.OWNER:
            return {i.id for i in await self._admin.owned(place)}
        raise NotAllowed(NOT_YOURS)

    async def _closest(self, place: Place, gap: Gap) -> tuple[CloseDocument, ...]:
        if not gap.questions:
            return ()
        searchable = await self._services.catalog.visible(place, Action.SEARCH)
        if not searchable:
            return ()
        found = await self._services.retriever.search(
            searchable, gap.questions[0].text, top_k=SHOWN_DOCUMENTS * 2
        )
        shown: dict[int, CloseDocument] = {}
        for hit in found.hits:
            if hit.document.id not in shown and len(shown) < SHOWN_DOCUMENTS:
                shown[hit.document.id] = CloseDocument(
                    hit.document.name, hit.document.url, hit.index.name, hit.text[:300]
                )
        return tuple(shown.values())


def _gap(
    place: Place, rank: int, asked: list[Asked], indexes: dict[int, IndexRef], scope: set[int] | None
) -> Gap | None:
    shown: list[GapQuestion] = []
    withheld = 0
    for question in asked:
        if scope is not None and not scope & set(question.index_ids):
            continue
        facts = [indexes[i].facts if i in indexes else None for i in question.index_ids]
        seen = sight(question.facts, facts, place)
        if seen == Sight.TEXT:
            where = (
                f"#{question.channel_name}"
                if question.channel_id and question.channel_name
                else question.given.value
            )
            shown.append(
                GapQuestion(
                    question.answer_id,
                    question.at,
                    question.question,
                    where,
                    question.abstained,
                    question.helpful,
                    question.unhelpful,
                    question.comments,
                )
            )
        elif seen == Sight.COUNT:
            withheld += 1
    if not shown and not withheld:
        return None
    return Gap(rank, tuple(shown), withheld)


def _with_documents(gap: Gap, documents: tuple[CloseDocument, ...]) -> Gap:
    return Gap(gap.rank, gap.questions, gap.withheld, documents)
