"""Chat commands about crawled sites and other attached sources (Confluence spaces): add a
whole site (with live progress in the thread), status, stop, refresh (now, or on a
schedule) and forget. Used by the router."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from urllib.parse import urlsplit

from bot.app.services import Services
from bot.chat import messages
from bot.chat.render import age
from bot.chat.surface import Surface, Turn
from knowledge.catalog import NotAllowed
from knowledge.sources.fetch import Refused
from knowledge.sources.jobs import Schedule
from storage.access import Action, allowed
from storage.records import IndexRef, JobRef, SourceConfigRef
from storage.repositories.sources import SITE

FOLLOW_AT_MOST = 3 * 3600.0
"""A progress message stops being updated after this long (the job itself goes on)."""


def pages_done(counters: dict[str, int]) -> int:
    return sum(counters.get(f"pages_{k}", 0) for k in ("fetched", "unchanged", "skipped", "failed", "gone"))


def source_label(source: SourceConfigRef) -> str:
    """How chat names an attached source: a site by host and path, a connector's attachment
    by its kind and folders ("Confluence ENG, OPS")."""
    if source.kind == SITE:
        return source.name
    return f"{source.kind.capitalize()} {', '.join(source.folders)}"


def _plain(reference: str) -> str:
    """`https://Docs.example.com/api/` → `docs.example.com/api`: how sites are compared."""
    text = reference.strip().strip("<>").lower()
    if "://" in text:
        parts = urlsplit(text)
        text = (parts.hostname or "") + parts.path
    return text.rstrip("/")


class SiteCommands:
    def __init__(self, services: Services) -> None:
        self._services = services

    async def add_site(self, index: IndexRef, urls: Sequence[str], turn: Turn, surface: Surface) -> None:
        jobs = self._services.jobs
        try:
            source = await jobs.attach_site(index, list(urls), created_by=turn.actor.user.id)
        except Refused as exc:
            await surface.say(f"I can't crawl {urls[0]}: {exc}")
            return
        active = await asyncio.to_thread(jobs.repository.active_for_source, source.id)
        if active is not None:
            await surface.say(messages.job_already_running(source.name))
            return
        job = await jobs.start_indexing_job(index, source, conversation_id=turn.actor.conversation.id)
        await surface.say(messages.job_queued(source.name, index.name))
        await self.follow(job, source.name, surface)

    async def follow(self, job: JobRef, site: str, surface: Surface) -> JobRef:
        """Keep a progress line up to date until the job ends, then post its summary."""
        interval = self._services.settings.lore_progress_seconds
        update = await surface.progress(messages.indexing(site, 0, 0))
        shown = ""
        deadline = time.monotonic() + FOLLOW_AT_MOST
        while time.monotonic() < deadline:
            job = await self._services.jobs.get_indexing_job_status(job.id)
            text = messages.indexing(site, pages_done(job.counters), job.counters.get("pages_found", 0))
            if text != shown:
                await update(text)
                shown = text
            if job.finished:
                break
            await asyncio.sleep(interval)
        else:
            return job
        await surface.say(messages.job_summary(site, job.state.value, job.counters, job.seconds, job.error))
        return job

    async def status(self, turn: Turn, surface: Surface) -> None:
        recent = await self._services.jobs.recent(conversation_id=turn.actor.conversation.id, limit=8)
        sources = {s.id: s for s in await self._sources_here(turn)}
        if not recent and not sources:
            await surface.say(messages.no_jobs())
            return
        lines = []
        for job in recent:
            site = (
                source_label(sources[job.source_config_id])
                if job.source_config_id in sources
                else "a detached source"
            )
            when = f"started {age(job.started_at)}" if job.started_at else f"queued {age(job.created_at)}"
            lines.append(messages.job_line(site, job.state.value, job.counters, when))
        for source in sources.values():
            refreshed = (
                f"last refreshed {age(source.last_refresh_at)}"
                if source.last_refresh_at
                else "not yet refreshed"
            )
            lines.append(f"• *{source_label(source)}* refreshes {source.schedule} ({refreshed})")
        await surface.say("Indexing here:\n" + "\n".join(dict.fromkeys(lines)))

    async def stop(self, reference: str, turn: Turn, surface: Surface) -> None:
        source = await self._find(reference, turn, surface)
        if source is None:
            return
        active = await asyncio.to_thread(self._services.jobs.repository.active_for_source, source.id)
        if active is None:
            await surface.say(messages.nothing_running(source_label(source)))
            return
        await self._services.jobs.cancel(active.id)
        await surface.say(messages.stop_requested(source_label(source)))

    async def refresh(self, reference: str, turn: Turn, surface: Surface) -> None:
        words = reference.split()
        schedule = None
        for cut in (1, 3):  # "weekly", "every 6 hours"
            if len(words) > cut and (schedule := Schedule.parse(" ".join(words[-cut:]))):
                reference = " ".join(words[:-cut])
                break
        source = await self._find(reference, turn, surface)
        if source is None:
            return
        if schedule is not None:
            await asyncio.to_thread(self._services.sources.set_schedule, source.id, schedule.text)
            await surface.say(messages.schedule_set(source_label(source), schedule.text))
            return
        index = await asyncio.to_thread(self._services.indexes.get, source.index_id)
        job = await self._services.jobs.start_indexing_job(
            index, source, conversation_id=turn.actor.conversation.id, trigger="refresh"
        )
        await self.follow(job, source_label(source), surface)

    async def forget(self, reference: str, turn: Turn) -> tuple[str, int] | None:
        """Detach a site matching `reference` and remove its pages; None when none matches."""
        source = self._match(reference, await self._sources_here(turn))
        if source is None:
            return None
        index = await asyncio.to_thread(self._services.indexes.get, source.index_id)
        if not allowed(Action.ADD, index.facts, turn.actor.place):
            raise NotAllowed(f"you can't change the {index.name} index from here")
        removed = await self._services.jobs.detach_docsource_from_index(index, source)
        return source_label(source), removed

    async def _sources_here(self, turn: Turn) -> list[SourceConfigRef]:
        indexes = await self._services.catalog.enabled(turn.actor.conversation, turn.actor.place)
        found: list[SourceConfigRef] = []
        for index in indexes:
            found.extend(await self._services.jobs.list_docsources(index))
        return found

    async def _find(self, reference: str, turn: Turn, surface: Surface) -> SourceConfigRef | None:
        source = self._match(reference, await self._sources_here(turn))
        if source is None:
            await surface.say(messages.no_site(reference))
        return source

    @staticmethod
    def _match(reference: str, sources: Sequence[SourceConfigRef]) -> SourceConfigRef | None:
        wanted = _plain(reference)
        if not wanted:
            return sources[0] if len(sources) == 1 else None
        exact = [s for s in sources if wanted in _names(s)]
        if exact:
            return exact[0]
        partial = [s for s in sources if any(name.startswith(wanted) or wanted in name for name in _names(s))]
        return partial[0] if len(partial) == 1 else None


def _names(source: SourceConfigRef) -> list[str]:
    """What a reference to the source may say: its name, start URLs or folders, its label,
    and for a connector its kind ("refresh confluence")."""
    names = [_plain(source.name), *map(_plain, source.start_urls), _plain(source_label(source))]
    return names if source.kind == SITE else [*names, source.kind]
