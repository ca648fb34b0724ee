"""The index catalog: which indexes a place may use, found by name, under the access policy.

Every surface (Slack, the shell, the CLI, the HTTP API) goes through here to list, find,
create, enable and delete indexes, so the policy in `storage.access` is applied in one way.
"""

from __future__ import annotations

import asyncio
import difflib
from dataclasses import dataclass

from knowledge.embedding import Embedder
from knowledge.errors import KnowledgeError
from knowledge.ingest import collection_for
from storage.access import Action, Place, allowed
from storage.models import Scope
from storage.records import ChannelRef, ConversationRef, IndexRef, IndexStats, NameTaken, UserRef
from storage.repositories.indexes import IndexRepository
from storage.vectors import VectorStore


class IndexNotFound(KnowledgeError):
    def __init__(self, name: str, suggestions: list[str]) -> None:
        hint = f" Did you mean {' or '.join(repr(s) for s in suggestions)}?" if suggestions else ""
        super().__init__(f"I don't know an index called {name!r} that you can use here.{hint}")
        self.suggestions = suggestions


class NotAllowed(KnowledgeError):
    pass


class IndexExists(KnowledgeError):
    pass


@dataclass(frozen=True)
class IndexListing:
    index: IndexRef
    stats: IndexStats
    enabled: bool
    default: bool


class Catalog:
    def __init__(self, indexes: IndexRepository, vectors: VectorStore, embedder: Embedder) -> None:
        self._indexes = indexes
        self._vectors = vectors
        self._embedder = embedder

    async def visible(self, place: Place, action: Action = Action.LIST) -> list[IndexRef]:
        """Indexes of the place's tenant that it may see (or act on with `action`)."""
        every = await asyncio.to_thread(self._indexes.list_for_tenant, place.tenant_id)
        return [i for i in every if allowed(action, i.facts, place)]

    async def find(self, place: Place, name: str, action: Action) -> IndexRef:
        """The index called `name` that `place` may `action`; `IndexNotFound` with
        suggestions otherwise (an index the place may not see is reported as unknown)."""
        candidates = await self.visible(place, Action.LIST)
        wanted = _key(name)
        for index in candidates:
            if _key(index.name) == wanted:
                if not allowed(action, index.facts, place):
                    raise NotAllowed(_refusal(action, index))
                return index
        names = [i.name for i in candidates]
        raise IndexNotFound(name, difflib.get_close_matches(name.lower(), names, n=3, cutoff=0.5))

    async def listing(self, place: Place, conversation: ConversationRef) -> list[IndexListing]:
        """What `list indexes` shows: visible indexes, enabled ones first, with counts."""
        enabled = await self.enabled(conversation, place)
        order = {index.id: n for n, index in enumerate(enabled)}
        visible = await self.visible(place)
        visible.sort(key=lambda i: (order.get(i.id, len(order)), i.name))
        rows = []
        for index in visible:
            stats = await asyncio.to_thread(self._indexes.stats, index.id)
            rows.append(IndexListing(index, stats, index.id in order, order.get(index.id) == 0))
        return rows

    async def enabled(self, conversation: ConversationRef, place: Place) -> list[IndexRef]:
        """The conversation's enabled indexes that the place may search, default first."""
        every = await asyncio.to_thread(self._indexes.enabled, conversation.id)
        return [i for i in every if allowed(Action.SEARCH, i.facts, place)]

    async def enable(
        self, conversation: ConversationRef, index: IndexRef, *, as_default: bool = False
    ) -> bool:
        return await asyncio.to_thread(self._indexes.enable, conversation.id, index.id, as_default=as_default)

    async def disable(self, conversation: ConversationRef, index: IndexRef) -> bool:
        return await asyncio.to_thread(self._indexes.disable, conversation.id, index.id)

    async def create_shared(self, place: Place, name: str) -> IndexRef:
        name = " ".join(name.split())
        if not name or len(name) > 80:
            raise KnowledgeError("an index name needs 1 to 80 characters")
        try:
            return await asyncio.to_thread(
                self._indexes.create,
                place.tenant_id,
                name,
                Scope.SHARED,
                embedding_model=self._embedder.model_id,
                embedding_dimension=self._embedder.dimension,
                owner_user_id=place.user_id,
            )
        except NameTaken:
            raise IndexExists(f"there is already an index called {name!r}") from None

    async def delete(self, place: Place, index: IndexRef) -> None:
        if not allowed(Action.DELETE, index.facts, place):
            raise NotAllowed(_refusal(Action.DELETE, index))
        await asyncio.to_thread(self._vectors.drop, collection_for(index))
        await asyncio.to_thread(self._indexes.delete, index.id)

    async def personal_index(self, user: UserRef) -> IndexRef:
        """The user's personal index, created on first need."""
        return await asyncio.to_thread(
            self._indexes.ensure_personal,
            user,
            model=self._embedder.model_id,
            dimension=self._embedder.dimension,
        )

    async def channel_index(self, channel: ChannelRef) -> IndexRef:
        """The channel's own index, created on first need."""
        return await asyncio.to_thread(
            self._indexes.ensure_channel,
            channel,
            model=self._embedder.model_id,
            dimension=self._embedder.dimension,
        )


def _key(name: str) -> str:
    return " ".join(name.lower().replace("#", "").split())


def _refusal(action: Action, index: IndexRef) -> str:
    if action == Action.DELETE:
        if index.scope == Scope.SHARED:
            return f"only the person who created the {index.name} index can delete it"
        return f"the {index.name} index can't be deleted from here"
    if action == Action.ADD and index.scope == Scope.CHANNEL:
        return f"documents go into the {index.name} index from its own channel"
    return f"the {index.name} index can't be used from here"
