"""The command router: one path from a message to a reply, for Slack and the shell alike.

`Router.handle(turn, surface)` parses the message, runs the command or answers the
question, and always replies: errors become polite, specific messages in the thread.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence

from bot.app.services import Services
from bot.chat import commands as c
from bot.chat import messages
from bot.chat.connectors import ConnectorCommands
from bot.chat.render import render_documents_md, render_listing_md
from bot.chat.sources import SiteCommands
from bot.chat.surface import DownloadError, IncomingFile, Surface, Turn
from knowledge.answer import Answer, ResponseMode
from knowledge.catalog import NotAllowed
from knowledge.documents import find_documents
from knowledge.engine import Request, Strategy
from knowledge.errors import IngestError, KnowledgeError
from knowledge.ingest import IngestResult, Outcome, Source
from knowledge.metadata import DocumentFacts
from knowledge.sources.fetch import Fetcher, FetchError
from storage.access import Action, allowed
from storage.models import SourceKind
from storage.records import IndexRef
from storage.repositories.answers import AnswerEntry, AnswerRepository

log = logging.getLogger(__name__)
STRATEGIES = ("always", "confidence", "smart", "function")


class Router:
    def __init__(self, services: Services, fetcher: Fetcher) -> None:
        self._services = services
        self._fetcher = fetcher
        self._answers = AnswerRepository(services.db)
        self._sites = SiteCommands(services)
        self._connectors = ConnectorCommands(services, self._sites)
        self._handlers: dict[type, Callable[..., Awaitable[None]]] = {
            c.Question: self._question,
            c.AddFiles: self._add_files,
            c.AddUrls: self._add_urls,
            c.ListIndexes: self._list_indexes,
            c.EnableIndex: self._enable,
            c.DisableIndex: self._disable,
            c.MakeDefault: self._make_default,
            c.CreateIndex: self._create,
            c.DeleteIndex: self._delete,
            c.ListDocs: self._list_docs,
            c.Forget: self._forget,
            c.Status: self._status,
            c.StopIndexing: self._stop,
            c.Refresh: self._refresh,
            c.Help: self._help,
            c.SetMode: self._set_mode,
            c.SetStrategy: self._set_strategy,
            c.ConnectSource: self._connect,
            c.ListSpaces: self._spaces,
            c.AttachSpace: self._attach_space,
        }

    async def handle(self, turn: Turn, surface: Surface) -> None:
        """Act on one message; never raises for anything a user could cause."""
        command = c.parse(turn.text)
        try:
            await self._handlers[type(command)](command, turn, surface)
        except KnowledgeError as exc:
            await surface.say(messages.failed_file(str(exc)))
        except Exception:
            log.exception("failed to handle %s", type(command).__name__)
            await surface.say(messages.internal_error())

    async def add_files(self, turn: Turn, surface: Surface, files: Sequence[IncomingFile]) -> list[str]:
        """Download and add files to the conversation's default index; returns the names added.
        Only failures are reported: the caller sums up the rest in one message."""
        target = await self.default_index(turn)
        names = []
        for file in files:
            result = await self._add_file(target, file, surface, announce=False)
            if result is not None:
                names.append(file.name)
        return names

    async def confirmed(self, turn: Turn, surface: Surface, action: str, value: str) -> None:
        """A confirmation button was pressed (only `delete_index` asks for one)."""
        if action != "delete_index":
            return
        place = turn.actor.place
        index = await asyncio.to_thread(self._services.indexes.get, int(value))
        if not allowed(Action.DELETE, index.facts, place):
            await surface.say(
                messages.failed_file(
                    str(NotAllowed(f"only the person who created the {index.name} index can delete it"))
                )
            )
            return
        await self._services.catalog.delete(place, index)
        await surface.say(messages.deleted(index.name))

    async def default_index(self, turn: Turn) -> IndexRef:
        enabled = await self._services.catalog.enabled(turn.actor.conversation, turn.actor.place)
        for index in enabled:
            if allowed(Action.ADD, index.facts, turn.actor.place):
                return index
        raise KnowledgeError(messages.no_index_here())

    async def _question(self, command: c.Question, turn: Turn, surface: Surface) -> None:
        if not command.text.strip():
            await surface.say(messages.NOTHING_TO_ASK)
            return
        await surface.working()
        actor = turn.actor
        indexes = await self._services.catalog.enabled(actor.conversation, actor.place)
        mode = (
            ResponseMode.parse(actor.conversation.response_mode) if actor.conversation.response_mode else None
        )
        strategy = Strategy(actor.conversation.rag_strategy or Strategy.ALWAYS)
        chat = [*turn.history, {"role": "user", "content": command.text}]
        request = Request(indexes, chat, mode=mode, strategy=strategy)

        async def record(answer: Answer) -> int:
            entry = AnswerEntry(
                tenant_id=actor.place.tenant_id,
                question=command.text,
                mode=answer.mode.value,
                fallback=answer.fallback.value if answer.fallback else None,
                abstained=answer.abstained,
                cited=[
                    {"document_id": x.document_id, "name": x.name, "index": x.index_name}
                    for x in answer.citations
                ],
                conversation_id=actor.conversation.id,
                user_id=actor.user.id,
            )
            return await asyncio.to_thread(self._answers.record, entry)

        events = self._services.knowledge.ask_stream(request)
        try:
            await surface.answer(events, record)
        finally:
            if isinstance(events, AsyncGenerator):  # a surface that failed half way leaves it open
                await events.aclose()

    async def _add_files(self, command: c.AddFiles, turn: Turn, surface: Surface) -> None:
        files = list(turn.files) or list(turn.thread_files)
        if not files:
            await surface.say(messages.NO_FILES)
            return
        await surface.working()
        target = await self.default_index(turn)
        for file in files:
            await self._add_file(target, file, surface)

    async def _add_file(
        self, target: IndexRef, file: IncomingFile, surface: Surface, *, announce: bool = True
    ) -> IngestResult | None:
        limit = self._services.settings.lore_max_file_mb
        if file.size is not None and file.size > limit * 1024 * 1024:
            await surface.say(messages.too_big(file.name, file.size / 1024 / 1024, limit))
            return None
        try:
            data = await file.fetch()
        except DownloadError as exc:
            await surface.say(str(exc))
            return None
        source = Source(name=file.name, data=data, mime_type=file.mime_type)
        return await self._ingest(target, source, surface, announce=announce)

    async def _ingest(
        self, target: IndexRef, source: Source, surface: Surface, *, announce: bool = True
    ) -> IngestResult | None:
        try:
            result = await self._services.ingestor.add(target, source)
        except IngestError as exc:
            await surface.say(messages.failed_file(str(exc)))
            return None
        if not announce:
            return result
        name = result.document.name
        if result.outcome == Outcome.UNCHANGED:
            await surface.say(messages.already(name, target.name))
        elif result.outcome == Outcome.UPDATED:
            await surface.say(messages.updated(name, target.name, result.chunks))
        else:
            await surface.say(messages.added(name, target.name, result.chunks))
        return result

    async def _add_urls(self, command: c.AddUrls, turn: Turn, surface: Surface) -> None:
        await surface.working()
        target = await self.default_index(turn)
        if command.whole_site:
            await self._sites.add_site(target, command.urls, turn, surface)
            return
        for url in command.urls:
            try:
                page = await self._fetcher.get(url)
            except FetchError as exc:
                await surface.say(f"I couldn't read {url}: {exc}")
                continue
            facts = DocumentFacts(url=page.url)
            source = Source(
                name=page.url,
                data=page.body,
                kind=SourceKind.URL,
                mime_type=page.mime_type,
                facts=facts,
            )
            await self._ingest(target, source, surface)

    async def _list_indexes(self, command: c.ListIndexes, turn: Turn, surface: Surface) -> None:
        rows = await self._services.catalog.listing(turn.actor.place, turn.actor.conversation)
        await surface.say(render_listing_md(rows))

    async def _enable(self, command: c.EnableIndex, turn: Turn, surface: Surface) -> None:
        index = await self._services.catalog.find(turn.actor.place, command.name, Action.ENABLE)
        fresh = await self._services.catalog.enable(turn.actor.conversation, index)
        await surface.say(messages.enabled(index.name) if fresh else messages.already_enabled(index.name))

    async def _disable(self, command: c.DisableIndex, turn: Turn, surface: Surface) -> None:
        index = await self._services.catalog.find(turn.actor.place, command.name, Action.LIST)
        gone = await self._services.catalog.disable(turn.actor.conversation, index)
        await surface.say(messages.disabled(index.name) if gone else messages.not_enabled(index.name))

    async def _make_default(self, command: c.MakeDefault, turn: Turn, surface: Surface) -> None:
        index = await self._services.catalog.find(turn.actor.place, command.name, Action.ADD)
        await self._services.catalog.enable(turn.actor.conversation, index, as_default=True)
        await surface.say(messages.made_default(index.name))

    async def _create(self, command: c.CreateIndex, turn: Turn, surface: Surface) -> None:
        index = await self._services.catalog.create_shared(turn.actor.place, command.name)
        await self._services.catalog.enable(turn.actor.conversation, index)
        await surface.say(messages.created(index.name))

    async def _delete(self, command: c.DeleteIndex, turn: Turn, surface: Surface) -> None:
        index = await self._services.catalog.find(turn.actor.place, command.name, Action.DELETE)
        stats = await asyncio.to_thread(self._services.indexes.stats, index.id)
        await surface.confirm(
            messages.confirm_delete(index.name, stats.documents), "delete_index", str(index.id)
        )

    async def _list_docs(self, command: c.ListDocs, turn: Turn, surface: Surface) -> None:
        target = await self.default_index(turn)
        documents = await asyncio.to_thread(self._services.documents.list_ready, target.id, limit=50)
        await surface.say(render_documents_md(target, documents))

    async def _forget(self, command: c.Forget, turn: Turn, surface: Surface) -> None:
        if site := await self._sites.forget(command.reference, turn):
            await surface.say(messages.site_forgotten(*site))
            return
        target = await self.default_index(turn)
        found = await find_documents(self._services.documents, target, command.reference)
        if not found:
            await surface.say(messages.nothing_to_forget(command.reference, target.name))
            return
        await self._services.ingestor.remove(target, [d.id for d in found])
        await surface.say(messages.forgot([d.name for d in found], target.name))

    async def _status(self, command: c.Status, turn: Turn, surface: Surface) -> None:
        await self._sites.status(turn, surface)

    async def _stop(self, command: c.StopIndexing, turn: Turn, surface: Surface) -> None:
        await self._sites.stop(command.reference, turn, surface)

    async def _refresh(self, command: c.Refresh, turn: Turn, surface: Surface) -> None:
        await self._sites.refresh(command.reference, turn, surface)

    async def _connect(self, command: c.ConnectSource, turn: Turn, surface: Surface) -> None:
        await self._connectors.connect(command.kind, turn, surface)

    async def _spaces(self, command: c.ListSpaces, turn: Turn, surface: Surface) -> None:
        await self._connectors.spaces(turn, surface)

    async def _attach_space(self, command: c.AttachSpace, turn: Turn, surface: Surface) -> None:
        await self._connectors.attach(command.space, command.page, command.index, turn, surface)

    async def _help(self, command: c.Help, turn: Turn, surface: Surface) -> None:
        await surface.say(messages.HELP)

    async def _set_mode(self, command: c.SetMode, turn: Turn, surface: Surface) -> None:
        try:
            mode = ResponseMode.parse(command.mode)
        except ValueError:
            await surface.say(messages.unknown_mode(command.mode))
            return
        await asyncio.to_thread(
            self._services.directory.set_conversation_options,
            turn.actor.conversation.id,
            response_mode=mode.value,
        )
        await surface.say(messages.mode_set(mode.value))

    async def _set_strategy(self, command: c.SetStrategy, turn: Turn, surface: Surface) -> None:
        await asyncio.to_thread(
            self._services.directory.set_conversation_options,
            turn.actor.conversation.id,
            rag_strategy=command.strategy,
        )
        await surface.say(messages.strategy_set(command.strategy))


def outcome_line(result: IngestResult) -> str:
    return f"{result.document.name}: {result.outcome.value}"
