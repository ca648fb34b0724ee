"""Finding documents the way people name them: by name, URL or id."""

from __future__ import annotations

import asyncio

from storage.records import DocumentRef, IndexRef
from storage.repositories.documents import DocumentRepository


async def find_documents(documents: DocumentRepository, index: IndexRef, reference: str) -> list[DocumentRef]:
    """Documents of `index` whose id, URL, source or name matches `reference` exactly (case
    aside); failing that, those whose name contains it."""
    wanted = reference.strip().strip("<>").lower()
    every = await asyncio.to_thread(documents.list_ready, index.id, limit=100_000)
    exact = [
        d for d in every if wanted in {str(d.id), (d.url or "").lower(), d.source_key.lower(), d.name.lower()}
    ]
    return exact or [d for d in every if wanted and wanted in d.name.lower()]
