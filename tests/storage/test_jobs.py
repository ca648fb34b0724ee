"""Indexing jobs and attached sites against real SQL (SQLite and PostgreSQL): one worker per
job, interruption of jobs whose worker died, cancellation, the log and the pages handled."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest

from storage.db import Database, open_database
from storage.records import ClaimLost, JobClaim, NewChunk, NewDocument, NotFound
from storage.repositories.directory import Directory
from storage.repositories.documents import DocumentRepository
from storage.repositories.indexes import IndexRepository
from storage.repositories.jobs import JobRepository
from storage.repositories.sources import SourceRepository
from storage.values import JobState, Scope, SourceKind

MODEL, DIM = "local:test", 8


def an_index(database: Database) -> int:
    Directory(database).ensure_tenant("T1")
    return (
        IndexRepository(database)
        .create("T1", "docs", Scope.SHARED, embedding_model=MODEL, embedding_dimension=DIM)
        .id
    )


def new_document(index_id: int) -> NewDocument:
    return NewDocument(index_id, SourceKind.FILE, "a.md", "a.md", "text/markdown", "h", 1, 1)


def test_a_site_is_attached_once_and_detached_with_its_documents_unlinked(database: Database) -> None:
    index_id = an_index(database)
    sources = SourceRepository(database)
    site = sources.attach_site("T1", index_id, "docs.example.com/api", ["https://docs.example.com/api/"])
    again = sources.attach_site("T1", index_id, "docs.example.com/api", ["https://docs.example.com/api/"])
    assert again.id == site.id and site.schedule == "daily" and site.kind == "site"
    other = sources.attach_site(
        "T1", index_id, "blog.example.com", ["https://blog.example.com/"], schedule="weekly"
    )
    assert [s.name for s in sources.for_index(index_id)] == ["docs.example.com/api", "blog.example.com"]
    assert sources.set_schedule(other.id, "never").schedule == "never"

    documents = DocumentRepository(database)
    new = NewDocument(
        index_id=index_id,
        source_kind=SourceKind.URL,
        source_key="https://docs.example.com/api/a",
        name="A",
        mime_type="text/html",
        content_hash="h",
        size=1,
        characters=1,
        url="https://docs.example.com/api/a",
        source_config_id=site.id,
        meta={"etag": '"v1"'},
    )
    document, _ = documents.create_pending(new, [])
    documents.mark_ready(document.id)
    assert [d.url for d in sources.documents(site.id)] == ["https://docs.example.com/api/a"]
    documents.update_meta(document.id, {"missed_crawls": 1, "etag": None})
    assert documents.get(document.id).meta == {"missed_crawls": 1}

    job = JobRepository(database).create(index_id, site.id)
    sources.mark_refreshed(site.id)
    assert sources.get(site.id).last_refresh_at is not None
    sources.detach(site.id)
    with pytest.raises(NotFound):
        sources.get(site.id)
    assert JobRepository(database).get(job.id).source_config_id is None  # history kept
    assert documents.get(document.id).source_config_id is None


def test_a_job_is_claimed_once_beats_logs_and_finishes(database: Database) -> None:
    index_id = an_index(database)
    jobs = JobRepository(database)
    first = jobs.create(index_id, None, trigger="manual")
    second = jobs.create(index_id, None, trigger="schedule")
    assert first.state == JobState.QUEUED and not first.finished

    taken = jobs.claim("w1")
    assert taken is not None and taken.id == first.id and taken.state == JobState.RUNNING
    assert taken.worker == "w1" and taken.started_at is not None
    other = jobs.claim("w2")  # the second job
    assert other is not None and other.claim_token != taken.claim_token
    assert jobs.claim("w3") is None  # nothing left
    assert jobs.heartbeat(taken.claim) and not jobs.heartbeat(JobClaim(first.id, "forged"))

    jobs.log(first.id, "fetched /a")
    jobs.log(first.id, "fetched /b", "warning")
    lines = jobs.lines(first.id)
    assert [line.message for line in lines] == ["fetched /a", "fetched /b"]
    assert [line.message for line in jobs.lines(first.id, after_id=lines[0].id)] == ["fetched /b"]

    jobs.record_page(first.id, "https://x/a", "fetched", ["https://x/b"])
    jobs.record_page(first.id, "https://x/a", "failed", [])  # recorded twice: the first stays
    assert jobs.pages(first.id) == {"https://x/a": ["https://x/b"]}

    jobs.set_counters(first.id, {"pages_fetched": 2})
    done = jobs.finish(first.id, JobState.SUCCEEDED)
    assert done.finished and done.counters == {"pages_fetched": 2} and done.finished_at is not None
    assert [j.id for j in jobs.recent(index_ids=[index_id])] == [second.id, first.id]


def test_cancelling_a_queued_job_ends_it_and_a_running_one_is_asked_to_stop(database: Database) -> None:
    index_id = an_index(database)
    jobs = JobRepository(database)
    queued = jobs.create(index_id, None)
    assert jobs.request_cancel(queued.id).state == JobState.CANCELLED
    running = jobs.create(index_id, None)
    assert jobs.claim("w1") is not None
    asked = jobs.request_cancel(running.id)
    assert asked.state == JobState.RUNNING and asked.cancel_requested and jobs.cancel_requested(running.id)
    with pytest.raises(NotFound):
        jobs.request_cancel(9999)


def test_a_job_whose_worker_stopped_beating_is_interrupted_and_taken_again(database: Database) -> None:
    index_id = an_index(database)
    jobs = JobRepository(database)
    job = jobs.create(index_id, None)
    dead = jobs.claim("dead-worker")
    assert dead is not None
    assert jobs.interrupt_stale(timedelta(minutes=5)) == []  # still beating recently
    [stale] = jobs.interrupt_stale(timedelta(seconds=-1))  # every beat is now "too old"
    assert stale.id == job.id and stale.state == JobState.INTERRUPTED
    assert "interrupted" in jobs.lines(job.id)[-1].message
    resumed = jobs.claim("new-worker")
    assert resumed is not None and resumed.id == job.id and resumed.worker == "new-worker"
    assert resumed.started_at == stale.started_at  # a resumption, not a new start
    assert not jobs.heartbeat(dead.claim) and jobs.heartbeat(resumed.claim)


def test_a_worker_whose_job_was_taken_over_writes_nothing_more(database: Database) -> None:
    """The paused worker's writes carry its old claim: each is refused in its own
    transaction, and its `finish` leaves the job to the worker that holds it."""
    index_id = an_index(database)
    jobs, documents = JobRepository(database), DocumentRepository(database)
    job = jobs.create(index_id, None)
    paused = jobs.claim("paused")
    assert paused is not None
    jobs.log(job.id, "page 1", claim=paused.claim)
    [_] = jobs.interrupt_stale(timedelta(seconds=-1))
    with pytest.raises(ClaimLost):  # interrupted: the claim is gone before anyone takes it
        jobs.log(job.id, "page 2", claim=paused.claim)
    taker = jobs.claim("taker")
    assert taker is not None and taker.id == job.id

    refused = [
        lambda: jobs.log(job.id, "cancelled", claim=paused.claim),
        lambda: jobs.record_page(job.id, "https://x/p", "fetched", [], claim=paused.claim),
        lambda: jobs.set_counters(job.id, {"pages_fetched": 99}, claim=paused.claim),
        lambda: documents.create_pending(new_document(index_id), [NewChunk(0, "", "x")], claim=paused.claim),
    ]
    for write in refused:
        with pytest.raises(ClaimLost):
            write()
    assert not jobs.heartbeat(paused.claim)
    after = jobs.finish(job.id, JobState.CANCELLED, claim=paused.claim)
    assert after.state == JobState.RUNNING and after.worker == "taker"
    assert [
        line.message for line in jobs.lines(job.id) if "page" in line.message or "cancel" in line.message
    ] == ["page 1"]
    assert jobs.pages(job.id) == {} and jobs.get(job.id).counters == {}
    assert documents.unfinished() == []

    jobs.log(job.id, "mine now", claim=taker.claim)  # the holder writes as before
    assert jobs.finish(job.id, JobState.SUCCEEDED, claim=taker.claim).state == JobState.SUCCEEDED
    with pytest.raises(ClaimLost):  # a finished job holds no claim
        jobs.log(job.id, "late", claim=taker.claim)


def test_interrupting_leaves_a_job_that_beat_meanwhile_alone(database: Database) -> None:
    index_id = an_index(database)
    jobs = JobRepository(database)
    jobs.create(index_id, None)
    running = jobs.claim("w1")
    assert running is not None
    # Another process saw the job stale a moment ago; by the time it interrupts, a beat landed.
    assert jobs.interrupt_stale(timedelta(minutes=5)) == []
    assert jobs.get(running.id).state == JobState.RUNNING and jobs.heartbeat(running.claim)
    [first] = jobs.interrupt_stale(timedelta(seconds=-1))
    assert jobs.interrupt_stale(timedelta(seconds=-1)) == []  # a second interrupter finds nothing
    assert sum("interrupted" in line.message for line in jobs.lines(first.id)) == 1


def test_one_job_under_way_per_source(database: Database) -> None:
    index_id = an_index(database)
    sources = SourceRepository(database)
    site = sources.attach_site("T1", index_id, "docs", ["https://docs.example.com/"])
    jobs = JobRepository(database)
    first = jobs.create(index_id, site.id, trigger="schedule")
    again = jobs.create(index_id, site.id, trigger="schedule")  # a second worker's scheduler
    assert again.id == first.id
    assert [j.id for j in jobs.recent(source_config_id=site.id)] == [first.id]
    taken = jobs.claim("w1")
    assert taken is not None and jobs.create(index_id, site.id).id == first.id
    jobs.finish(first.id, JobState.SUCCEEDED, claim=taken.claim)
    assert jobs.create(index_id, site.id).id != first.id  # once it ended, a new one may start


@pytest.mark.postgres
def test_two_workers_racing_on_postgres_never_take_the_same_job(postgres_admin_url: str) -> None:
    from tests.support.postgres import create_database, drop_database

    url = create_database(postgres_admin_url)
    try:
        databases = [open_database(url) for _ in range(4)]
        index_id = an_index(databases[0])
        for _ in range(40):
            JobRepository(databases[0]).create(index_id, None)
        taken: dict[str, list[int]] = {}
        barrier = threading.Barrier(len(databases))

        def work(name: str, db: Database) -> None:
            jobs, mine = JobRepository(db), []
            barrier.wait()
            while (job := jobs.claim(name)) is not None:
                mine.append(job.id)
            taken[name] = mine

        threads = [threading.Thread(target=work, args=(f"w{n}", db)) for n, db in enumerate(databases)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        claimed = [job_id for ids in taken.values() for job_id in ids]
        assert len(claimed) == 40 and len(set(claimed)) == 40
        assert sum(1 for ids in taken.values() if ids) > 1  # they really did share the work
    finally:
        for db in databases:
            db.dispose()
        drop_database(postgres_admin_url, url)
