"""Confluence attachments synced by the jobs machinery into a real index (SQLite, embedded
Chroma, the offline embedder), against the fake Confluence: a complete first sync with
every page's facts, incremental syncs that fetch only changed pages, complete listings
that prune deleted and moved-out pages, rate limits, and credentials that never reach a log."""

from __future__ import annotations

import base64
import logging
from datetime import timedelta

import pytest

from knowledge.sources.connectors.sync import SyncPolicy, complete_listing_reason
from storage.records import SourceConfigRef
from storage.repositories.sources import SourceRepository
from storage.values import JobState, utcnow
from tests.fakes.confluence_server import EMAIL, TOKEN
from tests.knowledge.sources.conftest import Sync


async def test_a_first_sync_indexes_every_page_with_its_facts(sync: Sync) -> None:
    source = await sync.attach("ENG")
    job = await sync.run(source, trigger="manual")
    assert job.state == JobState.SUCCEEDED, sync.log(job)
    documents = sync.documents()
    assert sorted(documents) == [
        "API Gateway", "Architecture", "Deploy", "Engineering Home", "Rollback", "Runbooks", "checklist.md"
    ]  # fmt: skip
    deploy = documents["Deploy"]
    assert deploy.url == f"{sync.fake.base_url}/spaces/ENG/pages/{sync.pages.deploy}/Deploy"
    assert (deploy.author, deploy.external_id, deploy.mime_type) == (
        "Ada Lovelace",
        sync.pages.deploy,
        "text/markdown",
    )
    assert deploy.doc_timestamp is not None and deploy.doc_timestamp.year == 2024
    assert deploy.meta["relevance_tags"] == ["runbook", "deploy"]
    assert deploy.meta["path"] == "Engineering Home > Runbooks"
    assert (deploy.meta["space"], deploy.meta["version"], deploy.meta["title"]) == ("ENG", 1, "Deploy")
    hits = await sync.stack.retriever.search([sync.index], "blue-green pipeline on Tuesday")
    assert hits.hits[0].document.name == "Deploy"
    assert hits.hits[0].heading.startswith("Engineering Home > Runbooks > Deploy")
    checklist = documents["checklist.md"]
    assert (checklist.external_id, checklist.meta["page_id"]) == (
        f"attachment:{sync.pages.checklist}",
        sync.pages.deploy,
    )
    assert job.counters["pages_found"] == job.counters["pages_fetched"] == 6
    assert (job.counters["documents_added"], job.counters["attachments_added"]) == (6, 1)
    assert "diagram.png" not in sync.log(job) and sync.fake.downloads == [sync.pages.checklist]
    source = sync.stack_source(source.id)
    assert source.sync_cursor is not None and source.last_full_sync_at == source.sync_cursor
    assert "complete listing (first sync)" in sync.log(job)


async def test_an_incremental_sync_fetches_only_what_changed(sync: Sync) -> None:
    source = await sync.attach("ENG")
    await sync.run(source, trigger="manual")
    sync.fake.bodies_served.clear()
    sync.fake.edit_page(sync.pages.rollback, "<p>To roll back, page the release captain first.</p>")
    sync.fake.delete_page(sync.pages.gateway)
    searches_before = len(sync.fake.searches())

    job = await sync.run(source)

    assert job.state == JobState.SUCCEEDED, sync.log(job)
    assert sync.fake.bodies_served == [sync.pages.rollback], "no body of an unchanged page went out"
    [listing, fetch] = sync.fake.searches()[searches_before:]
    assert 'lastmodified >= "' in listing.query["cql"] and listing.query["expand"] == "version"
    assert fetch.query["cql"] == f"id in ({sync.pages.rollback})"
    assert sync.fake.downloads == [sync.pages.checklist], (
        "an unchanged page's attachments are not downloaded again"
    )
    documents = sync.documents()
    assert documents["Rollback"].meta["version"] == 2
    assert "API Gateway" in documents, "an incremental sync cannot see deletions; the complete listing prunes"
    hits = await sync.stack.retriever.search([sync.index], "release captain")
    assert hits.hits[0].document.name == "Rollback"
    assert (job.counters["pages_fetched"], job.counters["documents_updated"]) == (1, 1)
    assert "changes since" in sync.log(job)


async def test_a_complete_listing_prunes_deleted_and_moved_out_pages(sync: Sync) -> None:
    source = await sync.attach(f"ENG/{sync.pages.runbooks}")
    await sync.run(source, trigger="manual")
    assert sorted(sync.documents()) == ["Deploy", "Rollback", "Runbooks", "checklist.md"]
    sync.fake.bodies_served.clear()
    sync.fake.move_page(sync.pages.rollback, sync.pages.architecture)  # out of the tree
    sync.fake.delete_page(sync.pages.deploy)

    scheduled = await sync.run(source)
    assert sorted(sync.documents()) == ["Deploy", "Rollback", "Runbooks", "checklist.md"]

    job = await sync.run(source, trigger="refresh")
    assert job.state == JobState.SUCCEEDED, sync.log(job)
    assert sorted(sync.documents()) == ["Runbooks"]
    assert job.counters["documents_removed"] == 3, "Deploy, its attachment, and the moved Rollback"
    assert sync.fake.bodies_served == []
    assert "removed: Rollback (no longer in ENG/" in sync.log(job)
    assert "complete listing (refresh asked for)" in sync.log(job)
    assert scheduled.counters.get("documents_removed", 0) == 0


def test_when_a_complete_listing_is_due() -> None:
    policy = SyncPolicy(full_every=timedelta(days=7))
    now = utcnow()
    base = SourceConfigRef(
        1, 1, 1, "confluence", "x", ["ENG"], {"listed_folders": ["ENG"]}, "daily", now, now
    )
    synced = _with(base, sync_cursor=now, last_full_sync_at=now)
    assert complete_listing_reason(base, "schedule", policy) == "first sync"
    assert complete_listing_reason(synced, "schedule", policy) is None
    assert complete_listing_reason(synced, "refresh", policy) == "refresh asked for"
    assert (
        complete_listing_reason(_with(synced, start_urls=["ENG", "OPS"]), "schedule", policy)
        == "folders changed"
    )
    week_old = _with(synced, last_full_sync_at=now - timedelta(days=8))
    assert complete_listing_reason(week_old, "schedule", policy) == "last complete listing over 7 days ago"


def _with(source: SourceConfigRef, **changes: object) -> SourceConfigRef:
    from dataclasses import replace

    return replace(source, **changes)  # type: ignore[arg-type]


async def test_rate_limits_slow_a_sync_down_without_failing_it(sync: Sync) -> None:
    source = await sync.attach("OPS")
    sync.fake.rate_limit(2, retry_after="2")
    job = await sync.run(source, trigger="manual")
    assert job.state == JobState.SUCCEEDED, sync.log(job)
    assert sync.waits == [2.0, 2.0]
    assert "Confluence answered 429; trying again in 2 s" in sync.log(job)
    assert sorted(sync.documents()) == ["On-call", "Operations Home"]


async def test_bad_credentials_fail_the_job_with_a_clear_message(sync: Sync) -> None:
    source = await sync.attach("OPS")
    sync.fake.token = "rotated-on-the-confluence-side"
    job = await sync.run(source, trigger="manual")
    assert job.state == JobState.FAILED
    assert job.error is not None and job.error.startswith(
        "Confluence at 127.0.0.1 refused the credentials (401)"
    )


async def test_credentials_never_reach_a_log(sync: Sync, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    source = await sync.attach("ENG", "OPS")
    sync.fake.rate_limit(1, retry_after="1")
    first = await sync.run(source, trigger="manual")
    sync.fake.edit_page(sync.pages.deploy, "<p>Deploys now need two approvals.</p>")
    second = await sync.run(source)
    sync.fake.token = "rotated-on-the-confluence-side"
    failed = await sync.run(source)
    assert (first.state, second.state, failed.state) == (
        JobState.SUCCEEDED,
        JobState.SUCCEEDED,
        JobState.FAILED,
    )
    basic = base64.b64encode(f"{EMAIL}:{TOKEN}".encode()).decode()
    logged = caplog.text + "".join(sync.log(job) for job in (first, second, failed)) + str(failed.error)
    assert "429" in logged and "401" in logged, "the logs did see the whole story"
    for secret in (TOKEN, basic, TOKEN[-8:]):
        assert secret not in logged


async def test_a_sync_is_cancelled_between_pages_and_keeps_what_it_indexed(sync: Sync) -> None:
    source = sync.stack_source((await sync.attach("ENG")).id)
    job = await sync.jobs.start_indexing_job(sync.index, source, trigger="manual")
    sync.fake.rate_limit(1, retry_after="1")
    sync.on_wait.append(lambda: sync.jobs.cancel(job.id))  # cancelled while it waits
    ended = await sync.run_job(job)
    assert ended.state == JobState.CANCELLED, sync.log(ended)
    assert 1 <= len(sync.documents()) < 7 and "cancelled" in sync.log(ended)
    assert sync.stack_source(source.id).sync_cursor is None, "a cancelled sync moves no cursor"
    again = await sync.run(source, trigger="manual")
    assert again.state == JobState.SUCCEEDED and len(sync.documents()) == 7


async def test_an_interrupted_sync_resumes_without_fetching_again(sync: Sync) -> None:
    source = sync.stack_source((await sync.attach("OPS")).id)
    job = await sync.jobs.start_indexing_job(sync.index, source, trigger="manual")
    sync.jobs.repository.record_page(job.id, f"page:{sync.pages.ops_home}", "fetched", [])  # before a crash
    ended = await sync.run_job(job)
    assert ended.state == JobState.SUCCEEDED
    assert sync.fake.bodies_served == [sync.pages.oncall]
    assert "resuming after 1 pages" in sync.log(ended)


async def test_schedules_queue_incremental_syncs(sync: Sync) -> None:
    source = await sync.attach("OPS")
    await sync.run(source, trigger="manual")
    assert await sync.jobs.enqueue_due() == [], "refreshed just now"
    SourceRepository(sync.stack.db).mark_refreshed(source.id, utcnow() - timedelta(days=2))
    [queued] = await sync.jobs.enqueue_due()
    ended = await sync.run_job(queued)
    assert (ended.trigger, ended.state) == ("schedule", JobState.SUCCEEDED)
    assert "changes since" in sync.log(ended) and ended.counters.get("pages_fetched", 0) == 0
