"""Jobs that forget a person: queued once per person, taken by one worker, resumed by another
when the first stops beating, each step's removals added up as it ends.

Taking a job is a conditional update (still queued, or running with a heartbeat older than
the stale time) that draws a claim token; each later write checks the token in the same
statement, so a worker that comes back after its job was taken over writes nothing
(`ClaimLost`). A partial unique index keeps one job under way per person: asking again
while one is queued or running gets that one.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import or_
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlmodel import col, select, update

from storage.db import Database
from storage.models import ForgetJob
from storage.records import ClaimLost, JobClaim, NotFound
from storage.repositories._rows import aware, held
from storage.values import JobState, utcnow

UNDER_WAY = (JobState.QUEUED, JobState.RUNNING)


@dataclass(frozen=True)
class ForgetRef:
    """One job forgetting one person, and what it has removed so far."""

    id: int
    tenant_id: str
    user_id: int
    person: str
    requested_by: int | None
    surface: str
    origin: str
    actor: str | None
    state: JobState
    steps: tuple[str, ...]
    removed: dict[str, int]
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    worker: str | None
    error: str | None
    claim_token: str | None = None

    @property
    def claim(self) -> JobClaim:
        return JobClaim(self.id, self.claim_token or "")

    @property
    def finished(self) -> bool:
        return self.state not in UNDER_WAY


@dataclass(frozen=True)
class ForgetRequest:
    """Who is to be forgotten, and who asked, from where (for the audit entry)."""

    tenant_id: str
    user_id: int
    person: str
    requested_by: int | None
    surface: str
    origin: str = ""
    actor: str | None = None


class ForgetJobs:
    def __init__(self, db: Database) -> None:
        self._db = db

    def request(self, asked: ForgetRequest) -> tuple[ForgetRef, bool]:
        """A queued job forgetting the person; the one already under way if there is one
        (False: this call queued nothing)."""
        try:
            with self._db.session() as session:
                row = ForgetJob(
                    tenant_id=asked.tenant_id,
                    user_id=asked.user_id,
                    person=asked.person,
                    requested_by=asked.requested_by,
                    surface=asked.surface,
                    origin=asked.origin[:255],
                    actor=asked.actor,
                )
                session.add(row)
                session.flush()
                return _ref(row), True
        except IntegrityError:
            found = self.under_way(asked.tenant_id, asked.user_id)
            if found is None:
                raise
            return found, False

    def under_way(self, tenant_id: str, user_id: int) -> ForgetRef | None:
        with self._db.session() as session:
            row = session.exec(
                select(ForgetJob).where(
                    col(ForgetJob.tenant_id) == tenant_id,
                    col(ForgetJob.user_id) == user_id,
                    col(ForgetJob.state).in_(UNDER_WAY),
                )
            ).first()
            return _ref(row) if row is not None else None

    def take(self, worker: str, *, stale: timedelta, job_id: int | None = None) -> ForgetRef | None:
        """Take the oldest job that is queued, or running under a worker silent for `stale`
        (it died: this one resumes it); only `job_id` when given. None when there is none,
        or another worker took it first."""
        now = utcnow()
        takeable = or_(
            col(ForgetJob.state) == JobState.QUEUED,
            (col(ForgetJob.state) == JobState.RUNNING)
            & (col(ForgetJob.heartbeat_at).is_(None) | (col(ForgetJob.heartbeat_at) < now - stale)),
        )
        try:
            with self._db.session() as session:
                query = select(ForgetJob.id).where(takeable).order_by(col(ForgetJob.id)).limit(1)
                if job_id is not None:
                    query = query.where(col(ForgetJob.id) == job_id)
                found = session.exec(query.with_for_update(skip_locked=True)).first()
                if found is None:
                    return None
                token = secrets.token_hex(16)
                taken = session.exec(
                    update(ForgetJob)
                    .where(col(ForgetJob.id) == found, takeable)
                    .values(state=JobState.RUNNING, worker=worker, heartbeat_at=now, claim=token)
                )
                if taken.rowcount != 1:
                    return None
                row = session.get(ForgetJob, found)
                assert row is not None
                if row.started_at is None:
                    row.started_at = now
                    session.add(row)
                    session.flush()
                return _ref(row)
        except OperationalError:  # SQLite: another process wrote first; try again later
            return None

    def beat(self, claim: JobClaim) -> bool:
        """The claim's worker is alive; False if the job was taken over."""
        with self._db.session() as session:
            done = session.exec(held(ForgetJob, update(ForgetJob), claim).values(heartbeat_at=utcnow()))
            return bool(done.rowcount == 1)

    def step_done(self, claim: JobClaim, step: str, removed: dict[str, int]) -> ForgetRef:
        """Record a step as done, adding what it removed (`ClaimLost` if the job was taken over)."""
        with self._db.session() as session:
            row = session.exec(held(ForgetJob, select(ForgetJob), claim).with_for_update()).first()
            if row is None:
                raise ClaimLost(f"forget job {claim.job_id} was taken over by another worker")
            total = dict(row.removed)
            for name, count in removed.items():
                if count:
                    total[name] = total.get(name, 0) + int(count)
            row.removed = total
            row.steps = [*row.steps, step] if step not in row.steps else list(row.steps)
            row.heartbeat_at = utcnow()
            session.add(row)
            session.flush()
            return _ref(row)

    def finish(self, claim: JobClaim, state: JobState, error: str | None = None) -> ForgetRef:
        with self._db.session() as session:
            session.exec(
                held(ForgetJob, update(ForgetJob), claim).values(
                    state=state, error=error, finished_at=utcnow(), claim=None
                )
            )
        return self.get(claim.job_id)

    def get(self, job_id: int) -> ForgetRef:
        with self._db.session() as session:
            row = session.get(ForgetJob, job_id)
            if row is None:
                raise NotFound(f"no forget job {job_id}")
            return _ref(row)

    def recent(self, tenant_id: str | None = None, *, limit: int = 10) -> list[ForgetRef]:
        """Newest first; every workspace's unless `tenant_id` is given."""
        query = select(ForgetJob)
        if tenant_id is not None:
            query = query.where(col(ForgetJob.tenant_id) == tenant_id)
        with self._db.session() as session:
            rows = session.exec(query.order_by(col(ForgetJob.id).desc()).limit(limit)).all()
            return [_ref(row) for row in rows]


def _ref(row: ForgetJob) -> ForgetRef:
    assert row.id is not None
    return ForgetRef(
        id=row.id,
        tenant_id=row.tenant_id,
        user_id=row.user_id,
        person=row.person,
        requested_by=row.requested_by,
        surface=row.surface,
        origin=row.origin,
        actor=row.actor,
        state=JobState(row.state),
        steps=tuple(row.steps),
        removed={str(k): int(v) for k, v in dict(row.removed).items()},
        created_at=aware(row.created_at),
        started_at=aware(row.started_at),
        finished_at=aware(row.finished_at),
        worker=row.worker,
        error=row.error,
        claim_token=row.claim,
    )
