"""Indexing jobs: queued, taken by exactly one worker, beating while they run, with a log and
the pages they have handled (so an interrupted job resumes where it stopped).

Taking a job is a conditional update (`state` still queued or interrupted), after a
`SELECT … FOR UPDATE SKIP LOCKED` on PostgreSQL, so several worker processes never take
the same job. Taking it draws a claim token; every write a run makes (`JobClaim` given)
first locks the job row and checks the token in the same transaction (`hold`), so a worker
that was paused past the stale time and comes back finds its claim gone and writes
nothing (`ClaimLost`). Interrupting a stale job clears the token, and only rows still
stale are interrupted. At most one job per source is under way: a partial unique index
says so, and `create` returns the job already under way when it loses that race.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from sqlalchemy import func
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlmodel import Session, col, select, update

from storage.db import Database
from storage.models import IndexingJob, IndexingJobLog, IndexingJobPage, JobState, utcnow
from storage.records import ClaimLost, JobClaim, JobLine, JobRef, NotFound
from storage.repositories._rows import aware, held, insert_ignoring_conflict

TAKEABLE = (JobState.QUEUED, JobState.INTERRUPTED)
ACTIVE = (JobState.QUEUED, JobState.RUNNING, JobState.INTERRUPTED)


class JobRepository:
    def __init__(self, db: Database) -> None:
        self._db = db

    # -- lifecycle -------------------------------------------------------------------------

    def create(
        self,
        index_id: int,
        source_config_id: int | None,
        *,
        conversation_id: int | None = None,
        trigger: str = "manual",
    ) -> JobRef:
        """A new queued job; for an attached source that already has a job under way
        (another process queued it a moment ago), that job instead."""
        return self.queue(index_id, source_config_id, conversation_id=conversation_id, trigger=trigger)[0]

    def queue(
        self,
        index_id: int,
        source_config_id: int | None,
        *,
        conversation_id: int | None = None,
        trigger: str = "manual",
    ) -> tuple[JobRef, bool]:
        """`create`, saying whether this call queued the job (False: it was under way)."""
        try:
            with self._db.session() as session:
                job = IndexingJob(
                    index_id=index_id,
                    source_config_id=source_config_id,
                    conversation_id=conversation_id,
                    trigger=trigger,
                )
                session.add(job)
                session.flush()
                return job_ref(job), True
        except IntegrityError:
            active = self.active_for_source(source_config_id) if source_config_id is not None else None
            if active is None:
                raise
            return active, False

    def claim(self, worker: str) -> JobRef | None:
        """Take the oldest queued or interrupted job for `worker`; None when there is none
        (or another worker won the race for it)."""
        try:
            with self._db.session() as session:
                candidate = session.exec(
                    select(IndexingJob)
                    .where(col(IndexingJob.state).in_(TAKEABLE))
                    .order_by(col(IndexingJob.id))
                    .limit(1)
                    .with_for_update(skip_locked=True)
                ).first()
                if candidate is None:
                    return None
                now = utcnow()
                taken = session.exec(
                    update(IndexingJob)
                    .where(col(IndexingJob.id) == candidate.id, col(IndexingJob.state).in_(TAKEABLE))
                    .values(state=JobState.RUNNING, worker=worker, heartbeat_at=now)
                    .values(started_at=candidate.started_at or now, claim=secrets.token_hex(16))
                )
                if taken.rowcount != 1:
                    return None
        except OperationalError:  # SQLite: another process wrote first; try again later
            return None
        return self.get(candidate.id or 0)

    def heartbeat(self, claim: JobClaim) -> bool:
        """Record that the claim's worker is alive on the job; False if the claim is lost."""
        with self._db.session() as session:
            result = session.exec(held(IndexingJob, update(IndexingJob), claim).values(heartbeat_at=utcnow()))
            return bool(result.rowcount == 1)

    def interrupt_stale(self, stale_after: timedelta) -> list[JobRef]:
        """Running jobs whose worker has not beaten for `stale_after` (its process died or
        stopped): marked interrupted, to be taken again and resumed. Each is interrupted by
        an update that checks it is still stale, so a job whose worker beat in the meantime,
        or that another process interrupted first, is left alone; its claim is cleared."""
        cutoff = utcnow() - stale_after
        stale_now = (col(IndexingJob.heartbeat_at) < cutoff) | col(IndexingJob.heartbeat_at).is_(None)
        with self._db.session() as session:
            candidates = session.exec(
                select(IndexingJob.id).where(col(IndexingJob.state) == JobState.RUNNING, stale_now)
            ).all()
        interrupted = []
        for job_id in (found for found in candidates if found is not None):
            with self._db.session() as session:
                done = session.exec(
                    update(IndexingJob)
                    .where(
                        col(IndexingJob.id) == job_id, col(IndexingJob.state) == JobState.RUNNING, stale_now
                    )
                    .values(state=JobState.INTERRUPTED, claim=None)
                )
                if done.rowcount != 1:
                    continue
                job = session.get(IndexingJob, job_id)
                assert job is not None
                session.add(
                    IndexingJobLog(
                        job_id=job_id,
                        level="warning",
                        message=f"interrupted: worker {job.worker or '?'} stopped; resuming",
                    )
                )
                interrupted.append(job_ref(job))
        return interrupted

    def set_counters(self, job_id: int, counters: dict[str, int], *, claim: JobClaim | None = None) -> None:
        """Save the job's counters (refused with `ClaimLost` if `claim` is no longer held)."""
        with self._db.session() as session:
            hold(session, claim)
            session.exec(
                update(IndexingJob).where(col(IndexingJob.id) == job_id).values(counters=dict(counters))
            )

    def finish(
        self, job_id: int, state: JobState, error: str | None = None, *, claim: JobClaim | None = None
    ) -> JobRef:
        """End the job in `state`. With `claim`, only while it is held: a run whose job was
        taken over leaves it to the new worker (and gets the job as it is)."""
        with self._db.session() as session:
            statement = update(IndexingJob).where(col(IndexingJob.id) == job_id)
            if claim is not None:
                statement = held(IndexingJob, statement, claim)
            session.exec(statement.values(state=state, error=error, finished_at=utcnow(), claim=None))
        return self.get(job_id)

    def request_cancel(self, job_id: int) -> JobRef:
        """Ask a job to stop; a job no worker has taken yet is cancelled at once."""
        with self._db.session() as session:
            job = session.get(IndexingJob, job_id)
            if job is None:
                raise NotFound(f"no indexing job {job_id}")
            if job.state in ACTIVE:
                job.cancel_requested = True
                if job.state != JobState.RUNNING:
                    job.state, job.finished_at = JobState.CANCELLED, utcnow()
                session.add(job)
        return self.get(job_id)

    def cancel_requested(self, job_id: int) -> bool:
        with self._db.session() as session:
            job = session.get(IndexingJob, job_id)
            return job is None or job.cancel_requested

    # -- reading ---------------------------------------------------------------------------

    def get(self, job_id: int) -> JobRef:
        with self._db.session() as session:
            job = session.get(IndexingJob, job_id)
            if job is None:
                raise NotFound(f"no indexing job {job_id}")
            return job_ref(job)

    def count_by_state(self) -> dict[str, int]:
        """How many jobs are in each state (the HTTP API's /metrics)."""
        with self._db.session() as session:
            rows = session.exec(
                select(IndexingJob.state, func.count()).group_by(col(IndexingJob.state))
            ).all()
            return {str(state): int(count) for state, count in rows}

    def recent(
        self,
        *,
        index_ids: Sequence[int] | None = None,
        conversation_id: int | None = None,
        source_config_id: int | None = None,
        limit: int = 10,
    ) -> list[JobRef]:
        """Newest first, filtered by whichever of the arguments are given."""
        query = select(IndexingJob)
        if index_ids is not None:
            query = query.where(col(IndexingJob.index_id).in_(list(index_ids)))
        if conversation_id is not None:
            query = query.where(col(IndexingJob.conversation_id) == conversation_id)
        if source_config_id is not None:
            query = query.where(col(IndexingJob.source_config_id) == source_config_id)
        with self._db.session() as session:
            rows = session.exec(query.order_by(col(IndexingJob.id).desc()).limit(limit)).all()
            return [job_ref(job) for job in rows]

    def active_for_source(self, source_config_id: int) -> JobRef | None:
        with self._db.session() as session:
            job = session.exec(
                select(IndexingJob).where(
                    col(IndexingJob.source_config_id) == source_config_id,
                    col(IndexingJob.state).in_(ACTIVE),
                )
            ).first()
            return job_ref(job) if job else None

    # -- log and pages ---------------------------------------------------------------------

    def log(self, job_id: int, message: str, level: str = "info", *, claim: JobClaim | None = None) -> None:
        """Add a line to the job's log (refused with `ClaimLost` if `claim` is no longer held)."""
        with self._db.session() as session:
            hold(session, claim)
            session.add(IndexingJobLog(job_id=job_id, level=level, message=message))

    def lines(self, job_id: int, *, after_id: int = 0, limit: int = 500) -> list[JobLine]:
        with self._db.session() as session:
            rows = session.exec(
                select(IndexingJobLog)
                .where(col(IndexingJobLog.job_id) == job_id, col(IndexingJobLog.id) > after_id)
                .order_by(col(IndexingJobLog.id))
                .limit(limit)
            ).all()
            return [JobLine(row.id or 0, row.job_id, aware(row.at), row.level, row.message) for row in rows]

    def record_page(
        self, job_id: int, url: str, outcome: str, links: Sequence[str], *, claim: JobClaim | None = None
    ) -> None:
        """Remember a handled page; recording it twice keeps the first (refused with
        `ClaimLost` if `claim` is no longer held)."""
        with self._db.session() as session:
            hold(session, claim)
            insert_ignoring_conflict(
                session,
                IndexingJobPage,
                {"job_id": job_id, "url": url, "outcome": outcome, "links": list(links), "at": utcnow()},
            )

    def pages(self, job_id: int) -> dict[str, list[str]]:
        """The pages the job has handled, with their links."""
        with self._db.session() as session:
            rows = session.exec(select(IndexingJobPage).where(col(IndexingJobPage.job_id) == job_id)).all()
            return {row.url: list(row.links) for row in rows}


def hold(session: Session, claim: JobClaim | None) -> None:
    """Lock the claim's job row for this transaction, or raise `ClaimLost` if the claim is
    no longer held (another worker took the job, or it was interrupted or ended). The lock
    makes a takeover wait for the write in flight, and a write wait for a takeover in
    flight (then see it). Nothing to check without a claim."""
    if claim is None:
        return
    found = session.exec(held(IndexingJob, select(IndexingJob.id), claim).with_for_update()).first()
    if found is None:
        raise ClaimLost(f"indexing job {claim.job_id} was taken over by another worker")


def job_ref(job: IndexingJob) -> JobRef:
    assert job.id is not None
    counters: dict[str, Any] = dict(job.counters)
    return JobRef(
        id=job.id,
        index_id=job.index_id,
        source_config_id=job.source_config_id,
        conversation_id=job.conversation_id,
        trigger=job.trigger,
        state=JobState(job.state),
        counters={k: int(v) for k, v in counters.items()},
        created_at=aware(job.created_at),
        started_at=aware(job.started_at),
        finished_at=aware(job.finished_at),
        heartbeat_at=aware(job.heartbeat_at),
        worker=job.worker,
        error=job.error,
        cancel_requested=job.cancel_requested,
        claim_token=job.claim,
    )
