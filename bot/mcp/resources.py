"""Documents as MCP resources: `lore://INDEX/DOC` (the index's name, percent-encoded, and the
document's id) with the document's text, put back together from its passages and bounded
by `LORE_MCP_MAX_CHARS`.

Listing gives the documents of every index the caller may search, a page at a time (index
by index, oldest document first), never the whole tenant at once. Reading checks
the document's own index, so a URI naming an index the caller may not search, or a
document of another index, is unknown, as it would be to the HTTP API."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from urllib.parse import quote, unquote, urlsplit

from bot.app.services import Services
from bot.mcp.who import Principal
from knowledge import KnowledgeError
from storage.access import Action
from storage.records import DocumentRef, IndexRef, NotFound

SCHEME = "lore"
TEMPLATE = "lore://{index}/{document}"
PAGE = 50
"""Resources per `resources/list` page."""


def uri(index_name: str, document_id: int) -> str:
    return f"{SCHEME}://{quote(index_name, safe='')}/{document_id}"


@dataclass(frozen=True)
class Address:
    index: str
    document_id: int


class UnknownResource(ValueError):
    """Not a document this caller may read; the message says what Lore reads."""


def parse(text: str) -> Address:
    parts = urlsplit(text)
    document = parts.path.removeprefix("/")
    if parts.scheme != SCHEME or not parts.netloc or not document.isdigit() or len(document) > 18:
        raise UnknownResource(
            f"{text[:200]!r} is not a Lore document: they are named like lore://INDEX/DOC_ID."
        )
    return Address(unquote(parts.netloc), int(document))


@dataclass(frozen=True)
class Listed:
    index: IndexRef
    document: DocumentRef


async def page(services: Services, who: Principal, cursor: str | None) -> tuple[list[Listed], str | None]:
    """A page of the documents `who` may read, and the cursor of the next page (None at the
    end). The cursor is `INDEX_ID:DOC_ID`, the last document shown."""
    after_index, after_document = _cursor(cursor)
    indexes = sorted(await services.catalog.visible(who.place, Action.SEARCH), key=lambda i: i.id)
    listed: list[Listed] = []
    for index in indexes:
        if index.id < after_index:
            continue
        after = after_document if index.id == after_index else None
        rows = await asyncio.to_thread(
            services.documents.list_ready, index.id, after_id=after, limit=PAGE - len(listed) + 1
        )
        listed.extend(Listed(index, row) for row in rows)
        if len(listed) > PAGE:
            listed = listed[:PAGE]
            last = listed[-1]
            return listed, f"{last.index.id}:{last.document.id}"
    return listed, None


def _cursor(cursor: str | None) -> tuple[int, int | None]:
    if not cursor:
        return 0, None
    index, _, document = cursor.partition(":")
    if not (index.isdigit() and document.isdigit() and len(cursor) < 40):
        raise UnknownResource("That cursor is not one Lore gave; list again from the start.")
    return int(index), int(document)


async def find(services: Services, who: Principal, address: Address) -> tuple[IndexRef, DocumentRef]:
    """The document at `address`, if its index is named so and `who` may search it."""
    try:
        document = await asyncio.to_thread(services.documents.get, address.document_id)
        index = await services.actions.indexes.get(who.place, document.index_id, Action.SEARCH)
        if index.name.casefold() != address.index.casefold():
            raise UnknownResource(_unknown(address))
        return index, await services.actions.search.document(who.place, index, document.id)
    except (NotFound, KnowledgeError):  # not there, not ready, or not the caller's: all unknown
        raise UnknownResource(_unknown(address)) from None


def _unknown(address: Address) -> str:
    return (
        f"There is no document {address.document_id} in an index called {address.index!r} that you can read."
    )
