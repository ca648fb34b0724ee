"""Finding documents the way people name them (by name, URL or id), and naming them apart."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence

from storage.document_access import PUBLIC_ONLY, AccessFilter
from storage.records import DocumentRef, IndexRef
from storage.repositories.documents import DocumentRepository


async def find_documents(
    documents: DocumentRepository, index: IndexRef, reference: str, access: AccessFilter = PUBLIC_ONLY
) -> list[DocumentRef]:
    """Documents of `index` that `access` may read whose id, URL, source or name matches
    `reference` exactly (case aside); failing that, those whose name contains it."""
    wanted = reference.strip().strip("<>").lower()
    every = await asyncio.to_thread(documents.list_ready, index.id, limit=100_000, access=access)
    exact = [
        d for d in every if wanted in {str(d.id), (d.url or "").lower(), d.source_key.lower(), d.name.lower()}
    ]
    return exact or [d for d in every if wanted and wanted in d.name.lower()]


def names_apart(documents: Sequence[tuple[str, str]]) -> list[str]:
    """Each (name, source) document's name, with as many of the folders it lies in (the last
    parts of its source: a path, or a URL without its scheme) as tell it apart from the
    other documents of that name among `documents`: "httpx/docs/index.md" beside
    "uvicorn/docs/index.md" where several projects' docs were added, "Install (ops)" beside
    "Install (dev)" for pages named by their titles. One source is one document, however
    often it comes; where no number of folders tells them all apart, the names alone."""
    sources: dict[str, dict[str, None]] = {}  # each name's sources, in order, once each
    for name, source in documents:
        sources.setdefault(name, {})[source] = None
    shown: dict[tuple[str, str], str] = {}
    for name, namesakes in sources.items():
        paths = [_parts(source) for source in namesakes]
        folders = [path[:-1] for path in paths]
        depth = next(
            (
                depth
                for depth in range(1, max(map(len, folders), default=0) + 1)
                if len({tuple(f[-depth:]) for f in folders}) == len(folders)
            ),
            0,
        )
        for source, path in zip(namesakes, paths, strict=True):
            where = "/".join(path[:-1][-depth:]) if depth and len(namesakes) > 1 else ""
            if not where:
                shown[name, source] = name
            elif path[-1:] == [name]:  # a file under its own name: its path
                shown[name, source] = f"{where}/{name}"
            else:
                shown[name, source] = f"{name} ({where})"
    return [shown[name, source] for name, source in documents]


def document_names(documents: Sequence[DocumentRef]) -> list[str]:
    """`names_apart` of stored documents, by their sources."""
    return names_apart([(d.name, d.source_key) for d in documents])


def _parts(source: str) -> list[str]:
    """The parts of a path or URL, outermost first ("https://a.io/docs/x.html" → a.io, docs,
    x.html)."""
    return [part for part in re.split(r"[/\\]+", source.split("://", 1)[-1]) if part]
