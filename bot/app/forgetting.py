"""Forgetting a person, as a job: `lore forget-user` and the console's button queue it (once
per person: asking again gets the job under way), and whichever process runs the scheduler
takes it within seconds (`lore forget-user --now` runs it in its own process and waits).

The job removes, in steps, what the person asked and said (their questions, the answers to
them, their verdicts and comments, console sessions and links; their name is blanked), their
personal index with its vectors, and then what the deletions left in SQLite's files. Each
step may run again: a job whose worker was killed is taken over once its heartbeat is older
than `LORE_JOB_STALE_SECONDS`, and redoes only the steps not recorded as done. What each step
removed is added to the job (`lore jobs`, the console's Knowledge page), said in one log
line, and in the audit entry `user.forget`, attributed to whoever asked, from where they asked.
"""

from __future__ import annotations

import asyncio
import logging
from contextlib import suppress
from datetime import timedelta
from typing import TYPE_CHECKING

from bot.app.audit import AuditAction, Origin, Surface, acting_from, current_origin
from storage.access import Place
from storage.records import ClaimLost, UserRef
from storage.repositories.forget_jobs import ForgetJobs, ForgetRef, ForgetRequest
from storage.repositories.retention import Removed, Retention
from storage.values import JobState, Scope

if TYPE_CHECKING:
    from bot.app.services import Services

__all__ = ["ForgetRef", "Forgetting", "listed"]

log = logging.getLogger(__name__)
ANSWERS, PERSONAL_INDEX, SCRUB, AUDIT = "answers", "personal index", "scrub", "audit"
STEPS = (ANSWERS, PERSONAL_INDEX, SCRUB, AUDIT)
WAIT_POLL_SECONDS = 0.5


class Forgetting:
    def __init__(self, services: Services) -> None:
        self._services = services
        self._jobs = ForgetJobs(services.db)
        self._rows = Retention(services.db)

    @property
    def stale(self) -> timedelta:
        return timedelta(seconds=self._services.settings.lore_job_stale_seconds)

    async def request(self, place: Place, person: UserRef) -> tuple[ForgetRef, bool]:
        """Queue forgetting `person` (the use case, `AdminActions.forget_user`, decided
        `place` may); the job under way instead if there is one (False)."""
        origin = current_origin()
        asked = ForgetRequest(
            tenant_id=person.tenant_id,
            user_id=person.id,
            person=person.external_id,
            requested_by=place.user_id,
            surface=origin.surface.value,
            origin=origin.where,
            actor=origin.actor,
        )
        job, queued = await asyncio.to_thread(self._jobs.request, asked)
        if queued:
            await self._services.audit.record(
                place, AuditAction.USER_FORGET_REQUEST, person.external_id, job=job.id
            )
        return job, queued

    async def get(self, job_id: int) -> ForgetRef:
        return await asyncio.to_thread(self._jobs.get, job_id)

    async def recent(self, tenant_id: str | None = None, *, limit: int = 10) -> list[ForgetRef]:
        return await asyncio.to_thread(self._jobs.recent, tenant_id, limit=limit)

    async def run_due(self, worker: str) -> list[ForgetRef]:
        """Run every job waiting (queued, or left by a worker that stopped), one by one."""
        done = []
        while (job := await self.run(worker)) is not None:
            done.append(job)
        return done

    async def run(self, worker: str, job_id: int | None = None) -> ForgetRef | None:
        """Take one waiting job (`job_id`: that one) and run it to its end; None when there
        was none to take."""
        job = await asyncio.to_thread(self._jobs.take, worker, stale=self.stale, job_id=job_id)
        if job is None:
            return None
        beating = asyncio.create_task(self._beat(job), name=f"lore-forget-{job.id}-heartbeat")
        try:
            return await self._steps(job)
        except ClaimLost:
            log.warning("forget job %s was taken over by another worker; leaving it", job.id)
            return await self.get(job.id)
        except Exception as exc:
            log.exception("forget job %s failed", job.id)
            with suppress(ClaimLost):
                return await asyncio.to_thread(self._jobs.finish, job.claim, JobState.FAILED, str(exc)[:500])
            return await self.get(job.id)
        finally:
            beating.cancel()
            with suppress(asyncio.CancelledError):
                await beating

    async def wait(self, job: ForgetRef, worker: str) -> ForgetRef:
        """Run the job here, or wait while another worker does (taking it over should that
        worker stop); the job as it ended."""
        while not job.finished:
            ran = await self.run(worker, job.id)
            job = ran if ran is not None else await self.get(job.id)
            if not job.finished:
                await asyncio.sleep(WAIT_POLL_SECONDS)
        return job

    async def _steps(self, job: ForgetRef) -> ForgetRef:
        person = UserRef(job.user_id, job.tenant_id, job.person, "", is_admin=False)
        for step in STEPS:
            if step in job.steps:
                continue
            removed: Removed = {}
            if step == ANSWERS:
                removed = await asyncio.to_thread(self._rows.forget_user, job.tenant_id, job.user_id)
            elif step == PERSONAL_INDEX:
                removed = await self._personal_index(person)
            elif step == SCRUB:
                await asyncio.to_thread(self._rows.scrub)
            else:
                await asyncio.to_thread(self._audit, job)
            job = await asyncio.to_thread(self._jobs.step_done, job.claim, step, removed)
        done = await asyncio.to_thread(self._jobs.finish, job.claim, JobState.SUCCEEDED)
        log.warning(
            "forgot user %s of workspace %s (job %s): removed %s",
            job.person,
            job.tenant_id,
            job.id,
            listed(done.removed),
        )
        return done

    async def _personal_index(self, person: UserRef) -> Removed:
        removed: Removed = {}
        owner = Place(person.tenant_id, person.id)
        services = self._services
        for index in await asyncio.to_thread(services.indexes.list_for_tenant, person.tenant_id):
            if index.scope == Scope.PERSONAL and index.owner_user_id == person.id:
                stats = await asyncio.to_thread(services.indexes.stats, index.id)
                await services.catalog.delete(owner, index)
                removed["personal index documents"] = stats.documents
                await asyncio.to_thread(services.vectors.compact)
        return removed

    def _audit(self, job: ForgetRef) -> None:
        """The entry of what went, as whoever asked for it, from where they asked."""
        try:
            surface = Surface(job.surface)
        except ValueError:
            surface = Surface.LORE
        with acting_from(Origin(surface, job.origin, job.actor)):
            self._services.audit.record_sync(
                job.tenant_id,
                job.requested_by,
                AuditAction.USER_FORGET,
                job.person,
                {"job": job.id, "removed": job.removed},
            )

    async def _beat(self, job: ForgetRef) -> None:
        every = max(0.5, self.stale.total_seconds() / 4)
        while True:
            await asyncio.sleep(every)
            if not await asyncio.to_thread(self._jobs.beat, job.claim):
                return


def listed(removed: Removed) -> str:
    return ", ".join(f"{name} {count}" for name, count in sorted(removed.items())) or "nothing"
