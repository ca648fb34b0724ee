"""The command router: one path from a message to a reply, for Slack and the shell alike.

`Router.handle(turn, surface)` parses the message, runs the command (through the use cases
in `bot.app.actions`, which check permissions) or answers the question, and always replies:
errors become polite, specific messages in the thread.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence

from bot.app.actions import AddOutcome
from bot.app.actions.indexes import describe
from bot.app.actions.threads import ThreadText
from bot.app.services import Services
from bot.chat import commands as c
from bot.chat import messages
from bot.chat.access import AccessCommands
from bot.chat.connectors import ConnectorCommands
from bot.chat.helping import HelpChannelCommands
from bot.chat.history import HistoryCommands
from bot.chat.render import (
    render_documents_md,
    render_listing_md,
    render_review_md,
)
from bot.chat.sources import SiteCommands
from bot.chat.surface import Confirmation, DownloadError, IncomingFile, Offers, Surface, Turn
from knowledge import Answer, Fetcher, KnowledgeError, Outcome, Request, ResponseMode, Source, Strategy
from storage.records import IndexRef

log = logging.getLogger(__name__)


class Router:
    def __init__(self, services: Services, fetcher: Fetcher) -> None:
        self._services = services
        self._actions = services.actions
        self._fetcher = fetcher
        self._sites = SiteCommands(services)
        self._connectors = ConnectorCommands(services, self._sites)
        self._history = HistoryCommands(services, self._sites)
        self._access = AccessCommands(services)
        self._helping = HelpChannelCommands(services, self._recorder)
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
            c.LockSettings: self._lock,
            c.DocumentsOnly: self._documents_only,
            c.ConnectSource: self._connect,
            c.ListSpaces: self._spaces,
            c.ListRepositories: self._repositories,
            c.ListNotion: self._notion_pages,
            c.AttachNotion: self._attach_notion,
            c.AttachSpace: self._attach_space,
            c.AttachRepository: self._attach_repository,
            c.ListDriveFolders: self._drive_folders,
            c.AttachDriveFolder: self._attach_drive_folder,
            c.ShowFeedback: self._show_feedback,
            c.SaveThread: self._save_thread,
            c.RequireMentions: self._require_mentions,
            c.LearnChannel: self._learn_channel,
            c.ForgetChannelHistory: self._forget_history,
            c.HelpChannel: self._helping.help_channel,
            c.SetExperts: self._helping.set_experts,
            c.Teach: self._helping.teach,
            c.ListVerified: self._helping.list_verified,
            c.RefreshPermissions: self._access.refresh_permissions,
            c.ExplainAccess: self._access.explain_access,
            c.MapAccount: self._access.map_account,
            c.UnmapAccount: self._access.unmap_account,
            c.ListMappings: self._access.list_mappings,
            c.RestrictSource: self._access.restrict_source,
        }
        self._answered: list[Callable[[Answer], None]] = []

    def on_answer(self, observer: Callable[[Answer], None]) -> None:
        """Call `observer` with every answer given (the entry point counts them)."""
        self._answered.append(observer)

    async def handle(self, turn: Turn, surface: Surface) -> None:
        """Act on one message; never raises for anything a user could cause."""
        command = turn.command
        # Errors and refusals go to the asker alone; a failed question leaves the thread a
        # one-line note, since others there may be waiting for its answer.
        note = messages.ANSWER_FAILED_NOTE if isinstance(command, c.Question) else None
        try:
            await self._handlers[type(command)](command, turn, surface)
        except KnowledgeError as exc:
            await surface.tell(messages.failed_file(str(exc)), note=note)
        except Exception:
            log.exception("failed to handle %s", type(command).__name__)
            await surface.tell(messages.internal_error(), note=note)

    async def add_files(self, turn: Turn, surface: Surface, files: Sequence[IncomingFile]) -> list[str]:
        """Download and add files to the conversation's default index; returns the names added.
        Only failures are reported: the caller sums up the rest in one message."""
        target = await self.default_index(turn)
        outcomes = await self._add_files_to(target, files, turn, surface)
        for outcome in outcomes:
            if outcome.error:
                await surface.tell(messages.failed_file(outcome.error))
        return [o.name for o in outcomes if o.ok]

    async def confirmed(self, turn: Turn, surface: Surface, action: Confirmation, value: str) -> None:
        """A confirmation was given (only deleting an index asks for one)."""
        if action != Confirmation.DELETE_INDEX:
            return
        place = turn.actor.place
        try:
            index = await self._actions.indexes.get(place, int(value))
            await self._actions.indexes.delete(place, index)
        except KnowledgeError as exc:
            await surface.tell(messages.failed_file(str(exc)))
            return
        await surface.say(messages.deleted(index.name))

    async def default_index(self, turn: Turn) -> IndexRef:
        return await self._actions.indexes.default(turn.actor)

    async def _question(self, command: c.Question, turn: Turn, surface: Surface) -> None:
        if not command.text.strip():
            await surface.tell(messages.NOTHING_TO_ASK)
            return
        started = time.monotonic()
        await surface.working()
        actor = turn.actor
        indexes = await self._actions.indexes.enabled(actor)
        if turn.viewing is not None:
            seen = await self._actions.indexes.viewed(actor, turn.viewing)
            if seen is not None and seen.id not in {i.id for i in indexes}:
                indexes.append(seen)
        mode = actor.conversation.response_mode
        strategy = actor.conversation.rag_strategy or Strategy.ALWAYS
        chat = [*turn.history, {"role": "user", "content": command.text}]
        access = await self._actions.access.for_answer(actor, private=turn.private or turn.is_dm)
        request = Request(indexes, chat, mode=mode, strategy=strategy, access=access)
        events = self._services.knowledge.ask_stream(request)
        offers = Offers(experts=bool(actor.conversation.experts) and not turn.is_dm)
        try:
            await surface.answer(events, self._recorder(turn, command.text, indexes, started), offers)
        finally:
            if isinstance(events, AsyncGenerator):  # a surface that failed half way leaves it open
                await events.aclose()

    def _recorder(
        self, turn: Turn, question: str, indexes: Sequence[IndexRef], started: float
    ) -> Callable[[Answer], Awaitable[int]]:
        """Records an answer given to `question` (and tells the observers, with how long it
        took since `started`, a `time.monotonic()`): its id."""

        async def record(answer: Answer) -> int:
            for observer in self._answered:
                observer(answer)
            took = round((time.monotonic() - started) * 1000)
            return await self._actions.answers.record(
                turn.actor, question, answer, indexes, thread=turn.thread_id, latency_ms=took
            )

        return record

    async def unasked(self, turn: Turn, surface: Surface) -> bool:
        """A message posted to nobody in a help channel (`HelpChannelCommands.unasked`):
        whether Lore answered."""
        return await self._helping.unasked(turn, surface)

    async def _add_files(self, command: c.AddFiles, turn: Turn, surface: Surface) -> None:
        if command.thread_too and turn.thread is not None:
            await self._save_thread(c.SaveThread(), turn, surface)
            return
        files = list(turn.files) or list(turn.thread_files)
        if not files:
            await surface.tell(messages.NO_FILES)
            return
        await surface.working()
        target = await self.default_index(turn)
        for outcome in await self._add_files_to(target, files, turn, surface):
            await _report(outcome, target, surface)

    async def _add_files_to(
        self, target: IndexRef, files: Sequence[IncomingFile], turn: Turn, surface: Surface
    ) -> list[AddOutcome]:
        """Download each file and add it: one outcome per file, whatever becomes of the others."""
        limit = self._services.settings.lore_max_file_mb
        outcomes: list[AddOutcome] = []
        sources: list[Source] = []
        for file in files:
            if file.size is not None and file.size > limit * 1024 * 1024:
                outcomes.append(
                    AddOutcome(file.name, error=messages.too_big(file.name, file.size / 2**20, limit))
                )
                continue
            try:
                data = await file.fetch()
            except DownloadError as exc:
                outcomes.append(AddOutcome(file.name, error=str(exc)))
                continue
            sources.append(Source(name=file.name, data=data, mime_type=file.mime_type))
        if sources:
            outcomes.extend(await self._actions.documents.add(turn.actor.place, target, sources))
        return outcomes

    async def _save_thread(self, command: c.SaveThread, turn: Turn, surface: Surface) -> None:
        """The thread's text as one document, and its files, into the default index; one reply."""
        if turn.thread is None:
            await surface.say(messages.NOT_IN_A_THREAD)
            return
        await surface.working()
        read = await turn.thread()
        default = await self.default_index(turn)
        target = await self._actions.threads.target(turn.actor, default)
        saved = await self._actions.threads.save(turn.actor.place, target, read.text)
        lines = [_thread_line(saved, read.text, target)]
        if target.id != default.id:
            lines.append(messages.kept_private(target.name, default.name))
        files = list({f.id: f for f in [*turn.files, *read.files]}.values())
        lines += [outcome_line(o, target) for o in await self._add_files_to(target, files, turn, surface)]
        await surface.say("\n".join(lines))

    async def _add_urls(self, command: c.AddUrls, turn: Turn, surface: Surface) -> None:
        await surface.working()
        target = await self.default_index(turn)
        if command.whole_site:
            await self._sites.add_site(target, command.urls, turn, surface)
            return
        for url in command.urls:
            outcome = await self._actions.documents.add_page(turn.actor.place, target, url, self._fetcher)
            await _report(outcome, target, surface)

    async def _list_indexes(self, command: c.ListIndexes, turn: Turn, surface: Surface) -> None:
        await surface.tell(render_listing_md(await self._actions.indexes.listing(turn.actor)))

    async def _enable(self, command: c.EnableIndex, turn: Turn, surface: Surface) -> None:
        index, fresh = await self._actions.indexes.enable(turn.actor, command.name)
        what = describe(index, turn.actor.place)
        await surface.say(
            messages.enabled(index.name, what) if fresh else messages.already_enabled(index.name, what)
        )

    async def _disable(self, command: c.DisableIndex, turn: Turn, surface: Surface) -> None:
        index, gone = await self._actions.indexes.disable(turn.actor, command.name)
        what = describe(index, turn.actor.place)
        await surface.say(
            messages.disabled(index.name, what) if gone else messages.not_enabled(index.name, what)
        )

    async def _make_default(self, command: c.MakeDefault, turn: Turn, surface: Surface) -> None:
        index = await self._actions.indexes.make_default(turn.actor, command.name)
        await surface.say(messages.made_default(index.name, describe(index, turn.actor.place)))

    async def _create(self, command: c.CreateIndex, turn: Turn, surface: Surface) -> None:
        actor = turn.actor
        index = await self._actions.indexes.create(actor.place, command.name, conversation=actor.conversation)
        await surface.say(messages.created(index.name))

    async def _delete(self, command: c.DeleteIndex, turn: Turn, surface: Surface) -> None:
        index, stats = await self._actions.indexes.check_delete(turn.actor.place, command.name)
        await surface.confirm(
            messages.confirm_delete(index.name, stats.documents), Confirmation.DELETE_INDEX, str(index.id)
        )

    async def _list_docs(self, command: c.ListDocs, turn: Turn, surface: Surface) -> None:
        target = await self.default_index(turn)
        documents = await self._actions.documents.listing(turn.actor.place, target)
        await surface.tell(render_documents_md(target, documents))

    async def _forget(self, command: c.Forget, turn: Turn, surface: Surface) -> None:
        if await self._sites.forget(command.reference, turn, surface):
            return
        target = await self.default_index(turn)
        found = await self._actions.documents.forget(turn.actor.place, target, command.reference)
        if not found:
            await surface.tell(messages.nothing_to_forget(command.reference, target.name))
            return
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
        await self._connectors.folders("confluence", turn, surface)

    async def _repositories(self, command: c.ListRepositories, turn: Turn, surface: Surface) -> None:
        await self._connectors.folders("github", turn, surface)

    async def _attach_space(self, command: c.AttachSpace, turn: Turn, surface: Surface) -> None:
        folder = f"{command.space}/{command.page}" if command.page else command.space
        await self._connectors.attach("confluence", folder, command.index, turn, surface)

    async def _attach_repository(self, command: c.AttachRepository, turn: Turn, surface: Surface) -> None:
        await self._connectors.attach("github", command.repository, command.index, turn, surface)

    async def _drive_folders(self, command: c.ListDriveFolders, turn: Turn, surface: Surface) -> None:
        await self._connectors.folders("google-drive", turn, surface)

    async def _attach_drive_folder(self, command: c.AttachDriveFolder, turn: Turn, surface: Surface) -> None:
        await self._connectors.attach("google-drive", command.folder, command.index, turn, surface)

    async def _notion_pages(self, command: c.ListNotion, turn: Turn, surface: Surface) -> None:
        await self._connectors.folders("notion", turn, surface)

    async def _attach_notion(self, command: c.AttachNotion, turn: Turn, surface: Surface) -> None:
        await self._connectors.attach("notion", command.folder, command.index, turn, surface)

    async def _show_feedback(self, command: c.ShowFeedback, turn: Turn, surface: Surface) -> None:
        reviews = await self._actions.feedback.review(turn.actor.place, command.index)
        await surface.tell(render_review_md(reviews))

    async def _help(self, command: c.Help, turn: Turn, surface: Surface) -> None:
        await surface.tell(messages.help_text())

    async def _set_mode(self, command: c.SetMode, turn: Turn, surface: Surface) -> None:
        try:
            mode = ResponseMode.parse(command.mode)
        except ValueError:
            await surface.tell(messages.unknown_mode(command.mode))
            return
        await self._actions.settings.set_mode(turn.actor, mode)
        await surface.say(messages.mode_set(mode.value))

    async def _set_strategy(self, command: c.SetStrategy, turn: Turn, surface: Surface) -> None:
        strategy = await self._actions.settings.set_strategy(turn.actor, Strategy(command.strategy))
        await surface.say(messages.strategy_set(strategy.rag_strategy or command.strategy))

    async def _require_mentions(self, command: c.RequireMentions, turn: Turn, surface: Surface) -> None:
        await self._actions.settings.require_mention(turn.actor, command.required)
        await surface.say(messages.mentions_required(command.required, turn.is_dm))

    async def _learn_channel(self, command: c.LearnChannel, turn: Turn, surface: Surface) -> None:
        await self._history.learn(turn, surface)

    async def _forget_history(self, command: c.ForgetChannelHistory, turn: Turn, surface: Surface) -> None:
        await self._history.forget(turn, surface)

    async def _lock(self, command: c.LockSettings, turn: Turn, surface: Surface) -> None:
        await self._actions.settings.lock(turn.actor, command.locked)
        await surface.say(messages.settings_locked(command.locked))

    async def _documents_only(self, command: c.DocumentsOnly, turn: Turn, surface: Surface) -> None:
        index = await self._actions.indexes.set_documents_only(turn.actor.place, command.name, command.on)
        await surface.say(messages.documents_only(index.name, describe(index, turn.actor.place), command.on))


def _thread_line(outcome: AddOutcome, thread: ThreadText, target: IndexRef) -> str:
    """What became of a saved thread, as chat says it."""
    result = outcome.result
    if result is None:
        return messages.failed_file(outcome.error or "I couldn't save this thread")
    if result.outcome == Outcome.UNCHANGED:
        return messages.thread_unchanged(target.name)
    return messages.thread_saved(
        target.name,
        len(thread.messages),
        thread.authors,
        result.chunks,
        updated=result.outcome == Outcome.UPDATED,
    )


async def _report(outcome: AddOutcome, target: IndexRef, surface: Surface) -> None:
    """A document added is news for the conversation; one that failed, for the asker."""
    if outcome.result is None:
        await surface.tell(outcome_line(outcome, target))
    else:
        await surface.say(outcome_line(outcome, target))


def outcome_line(outcome: AddOutcome, target: IndexRef) -> str:
    """What became of one document, as chat says it."""
    result = outcome.result
    if result is None:
        return messages.failed_file(outcome.error or f"I couldn't add {outcome.name}")
    name = result.document.name
    if result.outcome == Outcome.UNCHANGED:
        return messages.already(name, target.name)
    said = (
        messages.updated(name, target.name, result.chunks)
        if result.outcome == Outcome.UPDATED
        else messages.added(name, target.name, result.chunks)
    )
    return " ".join([said, *result.notes])
