"""Notion attachments synced by the jobs machinery into a real index (SQLite, embedded Chroma,
the offline embedder) against the fake Notion: what a first sync indexes, with which links,
paths and facts; an unchanged re-sync that reads no block; edits, archived, trashed and
unshared pages reflected; a storm of 429s that slows a sync without losing a page; a failing
page skipped; a page tree or a database attached alone; and no token in any log."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest

from knowledge.answering.answer import Citation
from knowledge.sources.connectors import Credentials
from knowledge.sources.connectors.notion import NOTION
from knowledge.sources.connectors.notion_api import NOTION_VERSION
from knowledge.sources.connectors.service import ClientLimits
from storage.records import ConnectionRef, IndexRef, JobRef, SourceConfigRef
from storage.values import JobState
from tests.fakes.notion_server import TOKEN, FakeNotion, Seeded, seed
from tests.knowledge.conftest import Stack
from tests.knowledge.sources.connector_jobs import Jobs, connector_jobs

PAGES = [
    "Engineering Handbook",
    "Runbooks",
    "Payments runbook",
    "Onboarding",
    "Old notes",
    "Scratchpad",
    "Ledger database",
    "Use SQS for the refund queue",
]


@dataclass
class NotionSync:
    jobs: Jobs
    fake: FakeNotion
    seeded: Seeded
    index: IndexRef
    connection: ConnectionRef

    async def attach(self, *folders: str, index: IndexRef | None = None) -> SourceConfigRef:
        return await self.jobs.connections.attach(
            self.connection, index or self.index, [NOTION.parse_folder(f) for f in folders]
        )

    async def run(
        self, source: SourceConfigRef, trigger: str = "schedule", index: IndexRef | None = None
    ) -> JobRef:
        job = await self.jobs.run(index or self.index, source, trigger)
        assert job.state == JobState.SUCCEEDED, self.jobs.log(job) + str(job.error)
        return job

    def names(self, index: IndexRef | None = None) -> list[str]:
        return sorted(self.jobs.documents(index or self.index))

    async def top(self, question: str) -> tuple[str, str, str]:
        """The best hit's document, passage and citation link."""
        hit = (await self.jobs.stack.retriever.search([self.index], question)).hits[0]
        return hit.document.name, hit.text, Citation.from_hit(1, hit).url or ""


@pytest.fixture
async def notion(stack: Stack) -> AsyncIterator[NotionSync]:
    jobs = connector_jobs(stack, limits=ClientLimits(requests_per_second={"notion": 0}))
    index = stack.index("handbook")
    async with FakeNotion() as fake:
        seeded = seed(fake)
        connection, account = await jobs.connections.connect(
            "T1", fake.base_url, Credentials(TOKEN), kind="notion"
        )
        assert account == "Lore in Acme"
        yield NotionSync(jobs, fake, seeded, index, connection)


async def test_a_first_sync_indexes_pages_rows_and_child_pages_with_links_and_paths(
    notion: NotionSync,
) -> None:
    source = await notion.attach("workspace")
    job = await notion.run(source, trigger="manual")
    assert notion.names() == sorted(PAGES)
    documents = notion.jobs.documents(notion.index)
    fake, seeded = notion.fake, notion.seeded
    runbook = documents["Payments runbook"]
    assert runbook.url == fake.page_url(seeded.payments_runbook)
    assert runbook.meta["path"] == "Engineering Handbook > Runbooks", "where it lives: its heading path"
    assert runbook.author == "Grace Hopper" and runbook.meta["item_type"] == "page"
    assert runbook.meta["shared_via"] == seeded.handbook.id, (
        "shared with the integration through the handbook"
    )
    assert documents["Scratchpad"].meta["shared_via"] == seeded.scratch.id
    assert "public_url" not in runbook.meta, "not published to the web"
    ledger = documents["Ledger database"]
    assert (
        ledger.meta["path"] == "Engineering Handbook > Decisions"
        and ledger.meta["item_type"] == "database row"
    )
    assert ledger.meta["version"] == fake.page_json(seeded.ledger_decision)["last_edited_time"]
    assert job.counters["pages_found"] == 8 and job.counters["documents_added"] == 8

    name, text, link = await notion.top("when does the payments on-call rotation hand over")
    assert (name, link) == ("Payments runbook", runbook.url) and "09:30 on Mondays" in text, "inside a toggle"
    name, text, link = await notion.top("which database does the ledger run on")
    assert (name, link) == ("Ledger database", ledger.url) and "PostgreSQL 16" in text, "a row's property"
    assert "Owner: Ada Lovelace" in text and "Related: Use SQS for the refund queue" in text
    name, text, link = await notion.top("refund worker timeout seconds")
    assert name == "Engineering Handbook" and link == fake.page_url(seeded.handbook)
    assert "REFUND_WORKER_TIMEOUT_SECONDS = 45" in text, "a code block"
    name, text, _ = await notion.top("security contact email")
    assert "security@acme.test" in text and name in ("Onboarding", "Engineering Handbook"), "synced blocks"


async def test_an_unchanged_resync_reads_no_block(notion: NotionSync) -> None:
    source = await notion.attach("workspace")
    await notion.run(source, trigger="manual")
    notion.fake.children_served.clear()
    before = len(notion.fake.api_requests())

    job = await notion.run(source)

    made = notion.fake.api_requests()[before:]
    assert notion.fake.children_served == []
    assert {r.path for r in made} == {"/v1/search"}, "the listing (and the trash's) only"
    assert job.counters["pages_unchanged"] == 8 and job.counters.get("pages_fetched", 0) == 0
    assert "changes since" in notion.jobs.log(job)


async def test_edits_archives_and_trash_are_reflected_at_the_next_sync(notion: NotionSync) -> None:
    fake, seeded = notion.fake, notion.seeded
    source = await notion.attach("workspace")
    await notion.run(source, trigger="manual")
    fake.edit_text(seeded.deploy_paragraph, "Production deploys of the payments API go out every Thursday.")
    fake.edit_property(
        seeded.ledger_decision, "Summary", {"rich_text": ["The ledger moved to PostgreSQL 17 in May."]}
    )
    fake.archive(seeded.old_notes)
    fake.trash(seeded.queue_decision)
    fake.children_served.clear()

    job = await notion.run(source)  # scheduled: incremental

    read = {item for item in fake.children_served if item in fake.pages}
    assert read == {seeded.handbook.id, seeded.ledger_decision.id}, "the edited pages, only"
    assert "Old notes" not in notion.names() and "Use SQS for the refund queue" not in notion.names()
    _, text, _ = await notion.top("which day do production deploys of the payments API go out")
    assert "every Thursday" in text and "Tuesday" not in text
    _, text, _ = await notion.top("which PostgreSQL does the ledger run on")
    assert "PostgreSQL 17" in text
    assert job.counters["documents_removed"] == 2 and "changes since" in notion.jobs.log(job)


async def test_an_unshared_page_goes_at_the_next_complete_listing(notion: NotionSync) -> None:
    fake, seeded = notion.fake, notion.seeded
    source = await notion.attach("workspace")
    await notion.run(source, trigger="manual")
    fake.unshare(seeded.scratch.id)
    await notion.run(source)
    assert "Scratchpad" in notion.names(), "an incremental listing cannot see what it no longer sees"
    fake.incomplete_search = True
    await notion.run(source, trigger="refresh")
    assert "Scratchpad" in notion.names(), (
        "Notion said its results were incomplete: nothing is pruned on them"
    )
    fake.incomplete_search = False
    job = await notion.run(source, trigger="refresh")
    assert "Scratchpad" not in notion.names() and len(notion.names()) == 7
    assert "removed: Scratchpad" in notion.jobs.log(job)


async def test_a_storm_of_429s_slows_a_sync_without_losing_a_page(notion: NotionSync) -> None:
    source = await notion.attach("workspace")
    notion.fake.rate_limit(10, retry_after="2")
    job = await notion.run(source, trigger="manual")
    assert notion.names() == sorted(PAGES)
    assert notion.jobs.waits.seconds == [2.0] * 10
    assert "Notion answered 429; waiting 2 s" in notion.jobs.log(job)
    assert [r.status for r in notion.fake.api_requests()].count(429) == 10


async def test_a_failing_page_is_reported_and_skipped_the_rest_go_on(notion: NotionSync) -> None:
    runbook = notion.seeded.payments_runbook
    notion.fake.fail(f"/v1/blocks/{runbook.id}/children")
    source = await notion.attach("workspace")
    job = await notion.run(source, trigger="manual")
    assert "Payments runbook" not in notion.names() and len(notion.names()) == 7
    assert "skipped: Payments runbook: Notion at 127.0.0.1 answered 500" in notion.jobs.log(job)
    assert job.counters["pages_failed"] == 1
    notion.fake.fail(f"/v1/blocks/{runbook.id}/children", times=0)
    await notion.run(source)
    assert "Payments runbook" in notion.names(), "tried again at the next sync, though nothing changed"


async def test_a_page_tree_or_a_database_can_be_attached_alone(notion: NotionSync) -> None:
    seeded = notion.seeded
    tree = await notion.attach(notion.fake.page_url(seeded.runbooks))  # a link, as people paste them
    await notion.run(tree, trigger="manual")
    assert notion.names() == ["Payments runbook", "Runbooks"]
    decisions = notion.jobs.stack.index("decisions")
    source = await notion.attach(seeded.decisions.id.replace("-", ""), index=decisions)
    job = await notion.run(source, trigger="manual", index=decisions)
    assert notion.names(decisions) == ["Ledger database", "Use SQS for the refund queue"]
    row = notion.jobs.documents(decisions)["Ledger database"]
    assert (
        row.meta["shared_via"] == seeded.handbook.id
        and row.meta["path"] == "Engineering Handbook > Decisions"
    )
    notion.fake.edit_property(
        seeded.ledger_decision, "Status", {"select": {"id": "s2", "name": "Superseded", "color": "gray"}}
    )
    notion.fake.children_served.clear()
    before = len(notion.fake.api_requests())
    job = await notion.run(source, index=decisions)
    assert job.counters["pages_fetched"] == 1 and notion.fake.children_served == [seeded.ledger_decision.id]
    queries = [r for r in notion.fake.api_requests()[before:] if r.path.endswith("/query")]
    assert queries and all('"on_or_after"' in r.body for r in queries), "rows edited since, only"


async def test_the_token_goes_to_notion_with_its_version_and_into_no_log(
    notion: NotionSync, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    source = await notion.attach("workspace")
    notion.fake.rate_limit(1)
    first = await notion.run(source, trigger="manual")
    made = notion.fake.api_requests()
    assert {r.headers["Notion-Version"] for r in made} == {NOTION_VERSION}
    assert {r.headers["Authorization"] for r in made} == {f"Bearer {TOKEN}"}
    notion.fake.token = "rotated-in-notion"
    failed = await notion.jobs.run(notion.index, source)
    assert failed.state == JobState.FAILED and failed.error is not None
    assert failed.error.startswith("Notion at 127.0.0.1 refused the integration token (401)")
    logged = caplog.text + notion.jobs.log(first) + notion.jobs.log(failed) + failed.error
    for secret in (TOKEN, TOKEN[-8:]):
        assert secret not in logged


async def test_a_database_shared_alone_is_where_its_rows_sharing_begins(notion: NotionSync) -> None:
    fake, seeded = notion.fake, notion.seeded
    fake.unshare(seeded.handbook.id)
    fake.share(seeded.decisions.id)
    source = await notion.attach("workspace")
    await notion.run(source, trigger="manual")
    documents = notion.jobs.documents(notion.index)
    assert sorted(documents) == ["Ledger database", "Scratchpad", "Use SQS for the refund queue"]
    ledger = documents["Ledger database"]
    assert ledger.meta["shared_via"] == seeded.decisions.id, "the handbook above it is not shared"
    assert ledger.meta["path"] == "Decisions", "the path starts where the integration may read"
