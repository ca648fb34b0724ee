"""A connector attachment's indexing job: list what changed, fetch only that, ingest it,
and remove what the listing says is gone.

Incremental syncs ask for items modified since the last successful sync began, less an
overlap (edits saved while it ran, clocks apart) and the kind's own margin (Confluence's CQL
reads dates in the account's time zone, which Lore does not know, so its window reaches back
12 hours more). Listings carry only versions, and an item whose version is the one indexed
costs nothing more; the others are fetched in batches. An item the connector could not fetch
is reported and skipped; the rest go on.

A complete listing (every item, still without bodies) runs on the first sync, when someone
asks for a refresh, when the attachment's folders change, and otherwise once every
`LORE_CONFLUENCE_FULL_SYNC_DAYS` (7). Whatever a listing says it covered completely
(`Complete`: Confluence's complete listings; every GitHub listing of a repository's files,
issues or discussions) prunes: items indexed before but not listed there now (deleted,
renamed, moved out) are removed with their attachments. The connector's `state` (validators
of its listings) is saved when a sync succeeds.

Attachments go with their page: when a page is fetched, and for every page on a complete
listing, its attachments are listed and those of a supported type whose version changed are
downloaded and ingested through the extractors.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from knowledge.errors import IngestError
from knowledge.extraction.formats import type_from_mime, type_from_name
from knowledge.indexing.ingest import Ingestor, IngestResult, Outcome, Source
from knowledge.indexing.metadata import DocumentContext, DocumentFacts, normalise_labels
from knowledge.sources.connectors.base import (
    AttachmentRef,
    Complete,
    Connector,
    ConnectorError,
    ConnectorKind,
    Facts,
    FolderSpec,
    Gone,
    Item,
    ItemRef,
    Skipped,
    State,
    Version,
)
from knowledge.sources.connectors.registry import connector_kind
from knowledge.sources.connectors.service import Connections
from knowledge.sources.jobs import JobContext
from knowledge.sources.jobs.counters import Count, JobCounters
from storage.document_access import DocumentAccess, restriction
from storage.records import ConnectionRef, DocumentRef, IndexRef, SourceConfigRef
from storage.repositories.documents import DocumentRepository
from storage.repositories.sources import SourceRepository
from storage.values import SourceKind, utcnow

MEDIA_PREFIXES = ("image/", "video/", "audio/")
ATTACHMENT = "attachment:"


@dataclass(frozen=True)
class SyncPolicy:
    overlap: timedelta = timedelta(hours=1)
    full_every: timedelta = timedelta(days=7)
    max_attachment_bytes: int = 50 * 1024 * 1024


def complete_listing_reason(source: SourceConfigRef, trigger: str, policy: SyncPolicy) -> str | None:
    """Why this sync lists everything (and prunes), or None for an incremental one."""
    if source.sync_cursor is None or source.last_full_sync_at is None:
        return "first sync"
    if trigger == "refresh":
        return "refresh asked for"
    if source.options.get("listed_folders") != source.folders:
        return "folders changed"
    if utcnow() - source.last_full_sync_at >= policy.full_every:
        return f"last complete listing over {policy.full_every.total_seconds() / 86400:g} days ago"
    return None


def incremental_since(cursor: datetime, policy: SyncPolicy, margin: timedelta = timedelta(0)) -> datetime:
    return cursor - policy.overlap - margin


def supported(attachment: AttachmentRef) -> bool:
    return bool(type_from_name(attachment.title) or type_from_mime(attachment.media_type))


class ConnectorSync:
    """The `SourceSync` of connector attachments (every kind in the registry)."""

    def __init__(
        self,
        connections: Connections,
        sources: SourceRepository,
        documents: DocumentRepository,
        ingestor: Ingestor,
        policy: SyncPolicy | None = None,
    ) -> None:
        self.connections = connections
        self.sources = sources
        self.documents = documents
        self.ingestor = ingestor
        self.policy = policy or SyncPolicy()

    async def sync(self, context: JobContext, source: SourceConfigRef, index: IndexRef) -> None:
        connection = await asyncio.to_thread(self.connections.repository.get, source.source_id)
        await _SyncRun(self, context, source, index, connection).execute()


class _SyncRun:
    def __init__(
        self,
        sync: ConnectorSync,
        context: JobContext,
        source: SourceConfigRef,
        index: IndexRef,
        connection: ConnectionRef,
    ) -> None:
        self.s = sync
        self.context = context
        self.source = source
        self.index = index
        self.connection = connection
        self.pages: dict[str, DocumentRef] = {}
        self.attachments: dict[str, dict[str, DocumentRef]] = {}
        """Attachment documents by page id, then by attachment id."""
        self.listed: set[str] = set()
        self.twins: list[tuple[Item, int]] = []
        """Items whose text was already indexed as another document (a renamed file), with
        that document's id: ingested again if the prune removes it."""
        self.removed: set[int] = set()
        self.completed: list[str] = []
        """Prefixes of the ids the listing covered completely (`Complete`)."""
        self.kind: ConnectorKind = connector_kind(connection.kind)
        self.state: State = dict(source.options.get("state") or {})
        self.restriction = restriction(source.options)
        """The clause the attachment's restriction to Slack groups adds (read again per batch)."""
        self.started = time.monotonic()

    async def execute(self) -> None:
        context, source = self.context, self.source
        began = utcnow()
        reason = complete_listing_reason(source, context.job.trigger, self.s.policy)
        since = (
            None
            if reason or source.sync_cursor is None
            else incremental_since(source.sync_cursor, self.s.policy, self.kind.since_margin)
        )
        folders = [self.kind.parse_folder(f) for f in source.folders]
        await self._load_documents()
        done = await context.done_before()
        what = f"complete listing ({reason})" if reason else f"changes since {since:%Y-%m-%d %H:%M} UTC"
        resumed = f", resuming after {len(done)} pages" if done else ""
        await context.say(
            f"running on {context.worker}: {self.kind.label} {', '.join(source.folders)}, {what}{resumed}"
        )
        async with self.s.connections.open(self.connection, note=context.say) as connector:
            await self._walk(connector, folders, since, done, complete=reason is not None)
            if context.stopped():
                return
            await self._prune()
            for item, twin in self.twins:
                if twin in self.removed:  # a rename: its old name is gone now, its text stays
                    await self._ingest_page(item, again=True)
        await asyncio.to_thread(
            self.s.connections.repository.record_sync,
            source.id,
            began,
            complete=reason is not None,
            folders=source.folders,
            state=dict(self.state),
            claim=context.job.claim,
        )
        await context.say(self._summary(what))

    async def _load_documents(self) -> None:
        for document in await asyncio.to_thread(self.s.sources.documents, self.source.id):
            external = document.external_id or ""
            if external.startswith(ATTACHMENT):
                page = str(document.meta.get("page_id") or "")
                self.attachments.setdefault(page, {})[external.removeprefix(ATTACHMENT)] = document
            elif external:
                self.pages[external] = document

    async def _walk(
        self,
        connector: Connector,
        folders: Sequence[FolderSpec],
        since: datetime | None,
        done: set[str],
        *,
        complete: bool,
    ) -> None:
        context = self.context
        batch: list[ItemRef] = []
        selection = self.source.options.get("selection") or {}
        async for ref in connector.changed_since(folders, since, options=selection, state=self.state):
            if isinstance(ref, Complete):
                self.completed.append(ref.prefix)
                continue
            if isinstance(ref, Gone):
                await self._remove(ref.id, "deleted, trashed or moved out")
                continue
            if ref.id in self.listed:
                continue  # two attached trees overlap
            self.listed.add(ref.id)
            context.counters[Count.PAGES_FOUND] = len(self.listed)
            if f"page:{ref.id}" in done:
                continue
            stored = self.pages.get(ref.id)
            if stored is not None and stored.meta.get("version") == ref.version:
                await self._unchanged(connector, ref, stored, complete=complete)
            else:
                batch.append(ref)
            if len(batch) >= self.kind.fetch_batch:
                await self._fetch(connector, batch)
                batch = []
            if context.stopped():
                return
        if batch:
            await self._fetch(connector, batch)

    async def _unchanged(
        self, connector: Connector, ref: ItemRef, stored: DocumentRef, *, complete: bool
    ) -> None:
        self.context.count(Count.PAGES_UNCHANGED)
        self.context.count(Count.DOCUMENTS_UNCHANGED)
        await self._follow_listed_access(ref)  # shared anew, the same content: its documents follow
        if complete:
            path = tuple(p for p in str(stored.meta.get("path") or "").split(" > ") if p)
            access = await asyncio.to_thread(self.s.documents.access, stored.id)
            await self._attachments(
                connector, ref.id, stored.name, stored.url or "", (*path, stored.name), access
            )
        await self.context.handled(f"page:{ref.id}", "unchanged")

    async def _fetch(self, connector: Connector, batch: list[ItemRef]) -> None:
        # An admin may restrict (or lift) the attachment while it syncs: each batch reads it.
        current = await asyncio.to_thread(self.s.sources.get, self.source.id)
        self.restriction = restriction(current.options)
        items = {item.id: item for item in await connector.fetch([ref.id for ref in batch])}
        for ref in batch:
            item = items.get(ref.id)
            if item is None:  # deleted between the listing and the fetch
                self.context.count(Count.PAGES_GONE)
                self.listed.discard(ref.id)
                await self.context.handled(f"page:{ref.id}", "gone")
                continue
            if isinstance(item, Skipped):  # kept as indexed; tried again next time
                await self._follow_listed_access(ref)
                self.context.count(Count.PAGES_FAILED)
                self.context.skip(item.reason)
                await self.context.say(f"skipped: {item.title}: {item.reason}", "warning")
                await self.context.handled(f"page:{ref.id}", "failed")
                continue
            access = self._access(item)
            await self._ingest_page(item)
            await self._attachments(
                connector, item.id, item.title, item.url, (*item.path, item.title), access
            )
            await self.context.handled(f"page:{item.id}", "fetched")
            if self.context.stopped():
                return

    async def _follow_listed_access(self, ref: ItemRef) -> None:
        """An item kept as indexed still takes who may read it now, when its listing said
        (a file whose sharing changed, or that Drive failed to say for: nobody for now)."""
        stored = self.pages.get(ref.id)
        if ref.access is not None and stored is not None:
            access = ref.access.document_access(self.connection.id).also(self.restriction)
            ids = [stored.id, *(d.id for d in self.attachments.get(ref.id, {}).values())]
            await asyncio.to_thread(self.s.documents.set_access, dict.fromkeys(ids, access))

    def _access(self, item: Item) -> DocumentAccess:
        """The item's access in Lore (what the index decides, for a connector that does not
        sync permissions), narrowed by the attachment's restriction to Slack groups."""
        found = (
            DocumentAccess.public()
            if item.access is None
            else item.access.document_access(self.connection.id)
        )
        return found.also(self.restriction)

    async def _ingest_page(self, item: Item, *, again: bool = False) -> None:
        access = self._access(item)
        facts = DocumentFacts(
            title=item.title,
            author=item.author,
            url=item.url,
            external_id=item.id,
            timestamp=item.modified,
            path=item.path,
            context=DocumentContext(relevance_tags=normalise_labels(item.labels)),
            extra={**_extra(connector=self.connection.kind, version=item.version), **item.facts},
            anchors=item.anchors,
        )
        source = Source(
            name=item.title,
            data=item.text.encode() if item.data is None else item.data,
            kind=SourceKind.CONNECTOR,
            mime_type=item.mime_type,
            source_key=item.key or item.url,
            facts=facts,
            source_config_id=self.source.id,
            claim=self.context.job.claim,
            access=access,
        )
        if access.unknown:
            await self.context.say(
                f"{item.title}: {self.kind.label} did not say who may read it, so no one can in "
                "Lore until a permission sync can tell",
                "warning",
            )
        if not again:
            self.context.count(Count.PAGES_FETCHED)
        result = await self._add(source, f"{item.title} — {item.url}")
        if result is not None:
            followed = access if item.access is not None else None
            await self._remember_version(result, item.id, item.version, item.facts, followed)
            if result.outcome == Outcome.UNCHANGED and result.document.external_id != item.id:
                self.twins.append((item, result.document.id))

    async def _attachments(
        self,
        connector: Connector,
        page_id: str,
        page_title: str,
        page_url: str,
        path: tuple[str, ...],
        access: DocumentAccess,
    ) -> None:
        stored = self.attachments.pop(page_id, {})
        try:
            listed = await connector.attachments(page_id)
        except ConnectorError as exc:
            self.attachments[page_id] = stored  # unknown: keep them
            await self.context.say(f"attachments of {page_title} not listed: {exc}", "warning")
            return
        kept: dict[str, DocumentRef] = {}
        unchanged: list[int] = []
        for attachment in listed:
            document = stored.pop(attachment.id, None)
            if document is not None:
                kept[attachment.id] = document
            if (attachment.media_type or "").startswith(MEDIA_PREFIXES):
                continue  # pictures and recordings: nothing to read
            if not supported(attachment):
                self.context.skip("attachment type not supported")
                continue
            if document is not None and document.meta.get("version") == attachment.version:
                self.context.count(Count.ATTACHMENTS_UNCHANGED)
                unchanged.append(document.id)
                continue
            await self._ingest_attachment(connector, attachment, page_id, page_url, path, access)
        self.attachments[page_id] = kept
        if unchanged and self.kind.syncs_permissions:  # an attachment is read by its page's readers
            await asyncio.to_thread(self.s.documents.set_access, dict.fromkeys(unchanged, access))
        for attachment_id, document in stored.items():
            await self.s.ingestor.remove(self.index, [document.id], claim=self.context.job.claim)
            self.context.count(Count.DOCUMENTS_REMOVED)
            await self.context.say(
                f"removed: attachment {document.name} of {page_title} ({attachment_id} is gone)"
            )

    async def _ingest_attachment(
        self,
        connector: Connector,
        attachment: AttachmentRef,
        page_id: str,
        page_url: str,
        path: tuple[str, ...],
        access: DocumentAccess,
    ) -> None:
        try:
            data = await connector.download(attachment, self.s.policy.max_attachment_bytes)
        except ConnectorError as exc:
            self.context.skip("attachment not downloaded")
            await self.context.say(f"skipped: attachment {attachment.title}: {exc}", "warning")
            return
        facts = DocumentFacts(
            title=attachment.title,
            url=attachment.url or page_url,
            external_id=ATTACHMENT + attachment.id,
            path=path,
            extra=_extra(connector=self.connection.kind, version=attachment.version, page_id=page_id),
        )
        source = Source(
            name=attachment.title,
            data=data,
            kind=SourceKind.CONNECTOR,
            mime_type=attachment.media_type,
            source_key=f"{self.connection.base_url}/attachments/{attachment.id}",
            facts=facts,
            source_config_id=self.source.id,
            claim=self.context.job.claim,
            access=access,
        )
        result = await self._add(source, attachment.title, counted_as="attachments")
        if result is not None:
            followed = access if self.kind.syncs_permissions else None
            await self._remember_version(
                result, ATTACHMENT + attachment.id, attachment.version, access=followed
            )

    async def _add(self, source: Source, shown: str, *, counted_as: str = "documents") -> IngestResult | None:
        result = await self.s.ingestor.attempt(self.index, source)  # one page's failure is its own
        if isinstance(result, IngestError):
            self.context.skip(result.reason)
            await self.context.say(f"skipped: {shown}: {result.reason}", "warning")
            return None
        self.context.count(Count.document(result.outcome.value, attachment=counted_as == "attachments"))
        if result.outcome != Outcome.UNCHANGED:
            self.context.count(Count.CHUNKS, result.chunks)
        chunks = f"{result.chunks} chunk{'' if result.chunks == 1 else 's'}"
        await self.context.say(f"{result.outcome.value}: {shown} ({chunks})")
        return result

    async def _remember_version(
        self,
        result: IngestResult,
        external_id: str,
        version: Version,
        facts: Facts | None = None,
        access: DocumentAccess | None = None,
    ) -> None:
        """Content identical to what is indexed is not written again; its document still
        learns the new version, so the next sync does not fetch it again, the item's new
        facts, and its new access from a connector that syncs permissions (a file shared with
        someone more, or less, is a new version of the same text)."""
        if result.outcome == Outcome.UNCHANGED and result.document.external_id == external_id:
            updates = {**(facts or {}), "version": version}
            await asyncio.to_thread(
                self.s.documents.update_meta, result.document.id, updates, claim=self.context.job.claim
            )
            if access is not None:
                await asyncio.to_thread(self.s.documents.set_access, {result.document.id: access})

    def _gone(self, item_id: str) -> bool:
        """Indexed before, not listed now, where the listing was complete."""
        return item_id not in self.listed and any(item_id.startswith(p) for p in self.completed)

    async def _prune(self) -> None:
        """Items indexed before but not listed now where the listing was complete are gone
        (deleted, renamed, or moved out of what is attached); they go, with their attachments."""
        for page_id in list(self.pages):
            if self._gone(page_id):
                await self._remove(page_id, f"no longer in {', '.join(self.source.folders)}")
        for page_id, attachments in list(self.attachments.items()):
            if not self._gone(page_id) or not attachments:
                continue
            await self.s.ingestor.remove(
                self.index, [d.id for d in attachments.values()], claim=self.context.job.claim
            )
            self.context.count(Count.DOCUMENTS_REMOVED, len(attachments))
            del self.attachments[page_id]

    async def _remove(self, item_id: str, why: str) -> None:
        """An item's document and its attachments' go (nothing happens for one not indexed)."""
        self.listed.discard(item_id)
        document = self.pages.pop(item_id, None)
        attachments = list(self.attachments.pop(item_id, {}).values())
        if document is None and not attachments:
            return
        await self.s.ingestor.remove(
            self.index,
            [d.id for d in (document, *attachments) if d is not None],
            claim=self.context.job.claim,
        )
        if document is not None:
            self.removed.add(document.id)
        self.context.count(Count.DOCUMENTS_REMOVED, len(attachments) + (document is not None))
        shown = document.name if document is not None else f"the attachments of {item_id}"
        await self.context.say(f"removed: {shown} ({why})")

    def _summary(self, what: str) -> str:
        c = JobCounters(self.context.counters)
        return (
            f"done in {time.monotonic() - self.started:.0f} s ({what}): {c[Count.PAGES_FOUND]} pages "
            f"listed, {c[Count.PAGES_FETCHED]} fetched, {c[Count.PAGES_UNCHANGED]} unchanged, "
            f"{sum(c.skipped.values())} skipped; documents {c[Count.DOCUMENTS_ADDED]} added, "
            f"{c[Count.DOCUMENTS_UPDATED]} updated, {c[Count.DOCUMENTS_REMOVED]} removed; "
            f"attachments {c[Count.ATTACHMENTS_ADDED]} added, {c[Count.ATTACHMENTS_UPDATED]} updated; "
            f"{c[Count.CHUNKS]} chunks"
        )


def _extra(**values: str | int | None) -> dict[str, str | int | bool]:
    return {k: v for k, v in values.items() if v is not None and v != ""}
