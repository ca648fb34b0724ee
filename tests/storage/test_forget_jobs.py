"""Jobs forgetting a person, against real SQL (SQLite and PostgreSQL): queued once per person,
taken by one worker, taken over when its worker went silent, and a worker that lost its job
writes nothing more."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import update

from storage.db import Database
from storage.models import ForgetJob
from storage.records import ClaimLost
from storage.repositories.directory import Directory
from storage.repositories.forget_jobs import ForgetJobs, ForgetRequest
from storage.values import JobState, utcnow

STALE = timedelta(seconds=30)


def asked(database: Database, who: str = "U1") -> ForgetRequest:
    directory = Directory(database)
    person = directory.ensure_user("T1", who, "someone")
    admin = directory.ensure_user("T1", "UADMIN", "admin", is_admin=True)
    return ForgetRequest("T1", person.id, who, admin.id, "cli", actor="cli:ops")


def test_asking_twice_queues_one_job_per_person(database: Database) -> None:
    jobs = ForgetJobs(database)
    first, queued = jobs.request(asked(database))
    again, queued_again = jobs.request(asked(database))
    other, _ = jobs.request(asked(database, "U2"))
    assert queued and not queued_again and again.id == first.id and other.id != first.id
    assert first.state == JobState.QUEUED and first.actor == "cli:ops"
    # once it is done, asking again queues a new one
    taken = jobs.take("w1", stale=STALE, job_id=first.id)
    assert taken is not None
    jobs.finish(taken.claim, JobState.SUCCEEDED)
    later, queued_later = jobs.request(asked(database))
    assert queued_later and later.id not in (first.id, other.id)


def test_one_worker_takes_a_job_and_a_silent_one_is_taken_over(database: Database) -> None:
    jobs = ForgetJobs(database)
    job, _ = jobs.request(asked(database))
    mine = jobs.take("w1", stale=STALE)
    assert mine is not None and mine.id == job.id and mine.state == JobState.RUNNING
    assert jobs.take("w2", stale=STALE) is None  # w1 is beating
    done = jobs.step_done(mine.claim, "answers", {"answer_log": 2, "answer_feedback": 0})
    assert done.steps == ("answers",) and done.removed == {"answer_log": 2}

    with database.session() as session:  # w1 went silent (killed) a minute ago
        session.exec(
            update(ForgetJob)
            .where(ForgetJob.id == job.id)
            .values(heartbeat_at=utcnow() - timedelta(minutes=1))  # type: ignore[arg-type]
        )
    theirs = jobs.take("w2", stale=STALE)
    assert theirs is not None and theirs.worker == "w2" and theirs.steps == ("answers",)
    with pytest.raises(ClaimLost):  # w1 comes back: its writes are refused
        jobs.step_done(mine.claim, "personal index", {"personal index documents": 1})
    assert not jobs.beat(mine.claim)
    theirs = jobs.step_done(theirs.claim, "answers", {"answer_log": 1})  # a step done again adds up
    assert theirs.steps == ("answers",) and theirs.removed == {"answer_log": 3}
    ended = jobs.finish(theirs.claim, JobState.SUCCEEDED)
    assert ended.finished and ended.finished_at is not None
    assert [j.id for j in jobs.recent("T1")] == [job.id] and jobs.recent("T9") == []
