"""Use cases on what indexes know: search them for passages, ask them a question, read a
document's text. The HTTP API's search route and the MCP tools call these, so what may be
read is checked here, once (`Action.SEARCH` on every index), whichever surface asks."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bot.app.actions.errors import refused
from knowledge import Answer, KnowledgeError, QueryType, Request, ResponseMode, Retrieval
from storage.access import Action, Place, allowed
from storage.records import ChunkRecord, DocumentRef, IndexRef, NotFound
from storage.values import DocumentStatus

if TYPE_CHECKING:
    from bot.app.actions.access import AccessActions
    from bot.app.services import Services

READ_CHUNKS = 16
"""Passages read per round trip while a document's text is put back together."""
OVERLAP_PROBE = 32
"""Characters of a passage looked for in the end of the one before it (passages overlap)."""


@dataclass(frozen=True)
class DocumentText:
    """A document's text, as far as it was read (`complete`: to its end)."""

    document: DocumentRef
    text: str
    complete: bool


class SearchActions:
    def __init__(self, services: Services, access: AccessActions) -> None:
        self._services = services
        self._access = access

    async def search(
        self,
        place: Place,
        indexes: Sequence[IndexRef],
        query: str,
        *,
        top_k: int,
        query_type: QueryType = QueryType.HYBRID,
        where: Mapping[str, Any] | None = None,
    ) -> Retrieval:
        """The best passages for `query` across `indexes`, best first, of the documents the
        place may read (`AccessActions.for_place`)."""
        _check(place, indexes)
        access = await self._access.for_place(place)
        return await self._services.retriever.search(
            indexes, query, top_k=top_k, query_type=query_type, where=where or None, access=access
        )

    async def ask(
        self, place: Place, indexes: Sequence[IndexRef], question: str, *, mode: ResponseMode | None = None
    ) -> Answer:
        """The answer to `question` from `indexes` (cited, or an abstention naming the closest
        documents), as `lore ask` gives it."""
        _check(place, indexes)
        access = await self._access.for_place(place)
        return await self._services.knowledge.ask(
            Request(indexes, [{"role": "user", "content": question}], mode=mode, access=access)
        )

    async def document(self, place: Place, index: IndexRef, document_id: int) -> DocumentRef:
        """A ready document of `index` the place may read (`KnowledgeError` for any other id:
        one its source restricts from them is as unknown as one that does not exist)."""
        _check(place, [index])
        try:
            found = await asyncio.to_thread(self._services.documents.get, document_id)
        except NotFound:
            found = None
        readable = found is not None and await self._access.readable(place, [found.id])
        if (
            found is None
            or not readable
            or found.index_id != index.id
            or found.status != DocumentStatus.READY
        ):
            raise KnowledgeError(f"there is no document {document_id} in the {index.name} index")
        return found

    async def text(self, place: Place, index: IndexRef, document_id: int, *, max_chars: int) -> DocumentText:
        """The text of a document of `index`, put back together from its passages, at most
        `max_chars` characters of it (only what that needs is read)."""
        document = await self.document(place, index, document_id)
        parts: list[str] = []
        length, position, previous = 0, 0, None
        while length < max_chars and position < document.chunk_count:
            last = position + READ_CHUNKS - 1
            chunks = await asyncio.to_thread(
                self._services.documents.chunks_in, [(document.id, position, last)]
            )
            if not chunks:
                break
            for chunk in chunks:
                parts.append(_passage(previous, chunk))
                length += len(parts[-1])
                previous = chunk
            position = last + 1
        text = "".join(parts).strip()
        complete = position >= document.chunk_count and len(text) <= max_chars
        return DocumentText(document, text[:max_chars], complete)


def _check(place: Place, indexes: Sequence[IndexRef]) -> None:
    for index in indexes:
        if not allowed(Action.SEARCH, index.facts, place):
            raise refused(Action.SEARCH, index)


def _passage(previous: ChunkRecord | None, chunk: ChunkRecord) -> str:
    """`chunk`'s text as it continues the document after `previous`: under a heading line
    where its section begins (heading lines live in the heading path, not in the text), and
    less what it repeats of the end of `previous` (a passage starts a little before the one
    before it ends, so that a sentence cut between them is whole in one)."""
    if previous is None or previous.heading != chunk.heading:
        heading = f"# {chunk.heading}\n\n" if chunk.heading else ""
        return f"\n\n{heading}{chunk.text}"
    text, before = chunk.text, previous.text
    probe = text[:OVERLAP_PROBE]
    start = before.find(probe, max(0, len(before) - len(text)))
    while start != -1:
        if text.startswith(before[start:]):
            return text[len(before) - start :]
        start = before.find(probe, start + 1)
    return "\n\n" + text
