"""Chat commands about crawled sites and other attached sources (Confluence spaces): add a
whole site (with live progress in the thread), status, stop, refresh (now, or on a
schedule) and forget. The use cases are `bot.app.actions.sources`; this renders them."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence

from bot.app.actions.sources import folder_named
from bot.app.actions.sources import label as source_label
from bot.app.actions.threads import HELD_CAP
from bot.app.services import Services
from bot.chat import messages
from bot.chat.render import age
from bot.chat.surface import Surface, Turn
from knowledge import Count, JobCounters, Schedule
from storage.records import IndexRef, JobRef, SourceConfigRef

FOLLOW_AT_MOST = 3 * 3600.0
"""A progress message stops being updated after this long (the job itself goes on)."""


class SiteCommands:
    def __init__(self, services: Services) -> None:
        self._services = services
        self._sources = services.actions.sources

    async def add_site(self, index: IndexRef, urls: Sequence[str], turn: Turn, surface: Surface) -> None:
        actor = turn.actor
        attached = await self._sources.attach_site(
            actor.place, index, urls, conversation_id=actor.conversation.id
        )
        if attached.already_running:
            await surface.tell(messages.job_already_running(attached.source.name))
            return
        await surface.say(messages.job_queued(attached.source.name, index.name))
        await self.follow(attached.job, attached.source.name, surface)

    async def follow(
        self,
        job: JobRef,
        site: str,
        surface: Surface,
        *,
        line: Callable[[str, int, int], str] = messages.indexing,
        summary: Callable[[str, str, Mapping[str, int], float, str | None], str] = messages.job_summary,
    ) -> JobRef:
        """Keep a progress line up to date until the job ends, then post its summary."""
        interval = self._services.settings.lore_progress_seconds
        update = await surface.progress(line(site, 0, 0))
        shown = ""
        deadline = time.monotonic() + FOLLOW_AT_MOST
        while time.monotonic() < deadline:
            job = await self._services.jobs.get_indexing_job_status(job.id)
            counted = JobCounters(job.counters)
            text = line(site, counted.pages_done, counted[Count.PAGES_FOUND])
            if text != shown:
                await update(text)
                shown = text
            if job.finished:
                break
            await asyncio.sleep(interval)
        else:
            return job
        await surface.say(summary(site, job.state.value, job.counters, job.seconds, job.error))
        return job

    async def status(self, turn: Turn, surface: Surface) -> None:
        recent = await self._sources.recent_jobs(turn.actor)
        sources = {s.id: s for s in await self._sources.here(turn.actor)}
        if not recent and not sources:
            await surface.tell(messages.no_jobs())
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
            limit = self._services.settings.lore_learn_max_messages
            held = limit if source.options.get(HELD_CAP) == limit else None
            lines.append(messages.source_line(source_label(source), str(source.schedule), refreshed, held))
        await surface.tell("Indexing here:\n" + "\n".join(dict.fromkeys(lines)))

    async def stop(self, reference: str, turn: Turn, surface: Surface) -> None:
        source = await self._find(reference, turn, surface)
        if source is None:
            return
        if await self._sources.stop(turn.actor.place, source) is None:
            await surface.tell(messages.nothing_running(source_label(source)))
            return
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
        actor = turn.actor
        if schedule is not None:
            await self._sources.reschedule(actor.place, source, schedule)
            await surface.say(messages.schedule_set(source_label(source), schedule.text))
            return
        attached = await self._sources.refresh(actor.place, source, conversation_id=actor.conversation.id)
        await self.follow(attached.job, source_label(source), surface)

    async def forget(self, reference: str, turn: Turn, surface: Surface) -> bool:
        """Detach a source matching `reference` and remove its pages; False when none matches."""
        source = await self._sources.find_here(turn.actor, reference)
        if source is None:
            return False
        folder = folder_named(source, reference)
        if folder is not None:  # one repository (space) of several: the others stay
            actor = turn.actor
            attached = await self._sources.forget_folder(
                actor.place, source, folder, conversation_id=actor.conversation.id
            )
            await surface.say(messages.folder_forgotten(folder, source_label(attached.source)))
            await self.follow(attached.job, source_label(attached.source), surface)
            return True
        removed = await self._sources.detach(turn.actor.place, source)
        await surface.say(messages.site_forgotten(source_label(source), removed))
        return True

    async def _find(self, reference: str, turn: Turn, surface: Surface) -> SourceConfigRef | None:
        source = await self._sources.find_here(turn.actor, reference)
        if source is None:
            await surface.tell(messages.no_site(reference))
        return source
