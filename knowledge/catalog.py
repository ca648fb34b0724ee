"""The index catalog: which indexes a place may use, found by name, under the access policy.

Every surface (Slack, the shell, the CLI, the HTTP API) goes through here to list, find,
create, enable and delete indexes, so the policy in `storage.access` is applied in one way.
"""

from __future__ import annotations

import asyncio
import difflib
from dataclasses import dataclass

from knowledge.backends.embedding import Embedder
from knowledge.errors import KnowledgeError
from knowledge.indexing.ingest import collection_for
from storage.access import Action, Place, allowed
from storage.document_access import PUBLIC_ONLY, AccessFilter
from storage.records import ChannelRef, ConversationRef, IndexRef, IndexStats, NameTaken, UserRef
from storage.repositories.indexes import IndexRepository
from storage.values import Scope
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
        suggestions otherwise (an index the place may not see is reported as unknown).

        Names are not unique across owners (every user has a "personal" index, a shared
        index may share a channel's name), so the asker's own come first: their personal
        index, then the channel they are in, then shared indexes they created, then the
        rest, oldest first. Someone else's index can never stand in for one's own."""
        candidates = await self.visible(place, Action.LIST)
        wanted = _key(name)
        named = sorted((i for i in candidates if _key(i.name) == wanted), key=lambda i: _closeness(i, place))
        if named:
            index = named[0]
            if not allowed(action, index.facts, place):
                raise NotAllowed(_refusal(action, index))
            return index
        names = [i.name for i in candidates]
        raise IndexNotFound(name, difflib.get_close_matches(name.lower(), names, n=3, cutoff=0.5))

    async def listing(
        self, place: Place, conversation: ConversationRef, access: AccessFilter = PUBLIC_ONLY
    ) -> list[IndexListing]:
        """What `list indexes` shows: visible indexes, enabled ones first, with counts of
        what `access` may read."""
        enabled = await self.enabled(conversation, place)
        order = {index.id: n for n, index in enumerate(enabled)}
        visible = await self.visible(place)
        visible.sort(key=lambda i: (order.get(i.id, len(order)), i.name))
        rows = []
        for index in visible:
            stats = await asyncio.to_thread(self._indexes.stats, index.id, access)
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
        """A new shared index owned by the place's user. Names that mean something else
        are refused: `personal`, a channel's name, anything with `#` or `/`."""
        name = check_index_name(name)
        taken = await asyncio.to_thread(self._indexes.list_for_tenant, place.tenant_id)
        if any(i.scope == Scope.CHANNEL and _key(i.name) == _key(name) for i in taken):
            raise IndexExists(f"{name!r} is a channel's name; pick a name of its own for a shared index")
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


RESERVED_NAMES = frozenset({"personal", "default", "all", "here", "this", "channel", "everyone"})
"""Words that already mean an index (or a set of them) in chat."""


def check_index_name(name: str) -> str:
    """A shared index's name, tidied; `KnowledgeError` saying what is wrong with it."""
    name = " ".join(name.split())
    if not name or len(name) > 80:
        raise KnowledgeError("an index name needs 1 to 80 characters")
    if any(c in name for c in "#/<>@`|") or not any(c.isalnum() for c in name):
        raise KnowledgeError("an index name is made of letters, digits, spaces, dots and dashes")
    if _key(name) in RESERVED_NAMES:
        raise KnowledgeError(f"{name!r} already means something to Lore; pick another name")
    return name


def _closeness(index: IndexRef, place: Place) -> tuple[int, int]:
    """How much an index is the place's own (lower first), then age."""
    if index.scope == Scope.PERSONAL and index.owner_user_id == place.user_id:
        rank = 0
    elif index.scope == Scope.CHANNEL and index.channel_id == place.channel_id:
        rank = 1
    elif index.scope == Scope.SHARED and index.owner_user_id == place.user_id:
        rank = 2
    elif index.scope == Scope.CHANNEL:
        rank = 3
    else:
        rank = 4
    return rank, index.id


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
