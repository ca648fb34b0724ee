"""Google Drive attachments synced by the jobs machinery into a real index (SQLite, embedded
Chroma, the offline embedder) against the fake Google: a folder's Doc, every sheet of a
Sheet, a deck and a PDF indexed with their links, authors, paths and permissions; an
unchanged re-sync that costs one changes request; edits, trashing and moving out reflected
at the next sync; quota errors waited out; one failing file skipped and tried again; and
who may read each file following Drive's sharing (users by email, groups through the
Directory, domains, anyone with the link as the Workspace's domain), through the content
sync's change feed and the permission and group syncs, failing closed."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest

from knowledge.answering.answer import Citation
from knowledge.sources.connectors import FolderSpec
from knowledge.sources.connectors.access_sync import AccessSync
from knowledge.sources.connectors.google_keys import oauth_client, service_account
from storage.document_access import AccessFilter
from storage.records import ConnectionRef, IndexRef, JobRef, SourceConfigRef
from storage.repositories.source_access import SourceAccessRepository
from storage.repositories.sources import SourceRepository
from storage.values import JobState
from tests.fakes.google_server import (
    CLIENT_ID,
    CLIENT_SECRET,
    DOCUMENT,
    DOMAIN,
    FakeGoogle,
    Permission,
    Seeded,
    seed,
)
from tests.knowledge.conftest import Stack
from tests.knowledge.sources.connector_jobs import Jobs, connector_jobs

ADA = f"ada@{DOMAIN}"
HANDBOOK = ["Expenses policy", "Office directory", "Onboarding deck", "Salary bands", "Security policy.pdf"]
SHEETS = ["Office directory › Desks", "Office directory › Rooms"]
BOB, CY, DAN = f"bob@{DOMAIN}", f"cy@{DOMAIN}", f"dan@{DOMAIN}"
EXPENSES, DIRECTORY, DECK, PDF, SALARY = (
    "Expenses policy",
    "Office directory",
    "Onboarding deck",
    "Security policy.pdf",
    "Salary bands",
)
DIRECTORY_ALL = {DIRECTORY, *SHEETS}


@dataclass
class DriveSync:
    jobs: Jobs
    fake: FakeGoogle
    seeded: Seeded
    index: IndexRef
    connection: ConnectionRef

    async def attach(self, *folders: str) -> SourceConfigRef:
        return await self.jobs.connections.attach(
            self.connection, self.index, [FolderSpec(f) for f in folders]
        )

    async def run(self, source: SourceConfigRef, trigger: str = "schedule") -> JobRef:
        job = await self.jobs.run(self.index, source, trigger)
        assert job.state == JobState.SUCCEEDED, self.jobs.log(job) + str(job.error)
        return job

    def names(self) -> list[str]:
        return sorted(self.jobs.documents(self.index))

    @property
    def ada(self) -> AccessFilter:
        """Ada (who owns the Handbook), as a search on her behalf reads."""
        return AccessFilter(frozenset({f"{self.connection.id}:user:{ADA}"}))

    async def top(self, query: str) -> tuple[str, str, str]:
        """The best passage for `query` that Ada may read: its document, its text, the link
        it is cited with."""
        hit = (await self.jobs.stack.retriever.search([self.index], query, access=self.ada)).hits[0]
        return hit.document.name, hit.text, Citation.from_hit(1, hit).url or ""


@pytest.fixture
async def drive(stack: Stack) -> AsyncIterator[DriveSync]:
    jobs = connector_jobs(stack)
    index = stack.index("handbook")
    async with FakeGoogle() as fake:
        seeded = seed(fake)
        credentials = service_account(fake.service_account_key(), ADA)
        connection, account = await jobs.connections.connect(
            "T1", fake.drive_url, credentials, kind="google-drive"
        )
        assert account == f"Ada Lovelace ({ADA})"
        yield DriveSync(jobs, fake, seeded, index, connection)


async def test_a_first_sync_indexes_docs_every_sheet_slides_and_files_with_links(drive: DriveSync) -> None:
    source = await drive.attach(drive.seeded.handbook)
    job = await drive.run(source, trigger="manual")
    assert drive.names() == sorted([*HANDBOOK, *SHEETS]), drive.jobs.log(job)
    documents = drive.jobs.documents(drive.index)
    doc = documents["Expenses policy"]
    assert doc.url == f"https://docs.google.com/document/d/{drive.seeded.doc}/edit?usp=drivesdk"
    assert doc.author == "Ada Lovelace" and doc.meta["path"] == "Handbook"
    assert doc.meta["drive_access"] == f"domain:{DOMAIN} (with the link); user:{ADA}"
    assert documents["Security policy.pdf"].meta["path"] == "Handbook > HR"
    assert documents["Salary bands"].meta["drive_access"] == f"user:{ADA}; user:bob@{DOMAIN}"
    assert documents["Onboarding deck"].meta["drive_access"] == f"anyone (with the link); user:{ADA}"
    assert "Office map.png" not in documents, "pictures are left out"
    assert "1 files of kinds Lore can't read were left out" in drive.jobs.log(job)

    name, text, url = await drive.top("book trains over flights for short trips")
    assert name == "Expenses policy" and "four hours" in text and url.startswith(doc.url)
    name, text, url = await drive.top("how many seats in the Lovelace room")
    assert name == "Office directory › Rooms" and "Lovelace room" in text
    assert url.endswith(f"#gid={drive.fake.files[drive.seeded.sheet].sheets[1][0]}")
    name, text, _ = await drive.top("where are laptops collected")
    assert name == "Onboarding deck" and "IT desk on floor 2" in text
    name, text, url = await drive.top("badges worn visibly")
    assert name == "Security policy.pdf" and "Badges" in text and drive.seeded.pdf in url


async def test_an_unchanged_resync_makes_one_changes_request(drive: DriveSync) -> None:
    source = await drive.attach(drive.seeded.handbook)
    await drive.run(source, trigger="manual")
    before = len(drive.fake.api_requests())
    drive.fake.exports.clear()

    job = await drive.run(source)

    made = drive.fake.api_requests()[before:]
    assert [(r.path, r.status) for r in made] == [("/drive/v3/changes", 200)], made
    assert drive.fake.exports == []
    assert job.counters.get("pages_fetched", 0) == 0 and "changes since" in drive.jobs.log(job)


async def test_edits_trash_and_moves_out_are_reflected_at_the_next_sync(drive: DriveSync) -> None:
    fake, seeded = drive.fake, drive.seeded
    source = await drive.attach(seeded.handbook)
    await drive.run(source, trigger="manual")
    fake.edit(seeded.doc, "# Expenses\n\n## Travel\n\nTrains are booked for trips under six hours.\n")
    fake.trash(seeded.private_doc)
    fake.move(seeded.pdf, seeded.archive)
    fake.touch(seeded.slides)  # a new version, the same text
    fresh = fake.add("Holidays", DOCUMENT, seeded.hr, content="# Holidays\n\nThe office closes on May 1st.\n")
    fake.exports.clear()

    job = await drive.run(source)

    assert drive.names() == sorted(
        ["Expenses policy", "Holidays", "Office directory", "Onboarding deck", *SHEETS]
    ), drive.jobs.log(job)
    assert sorted(fake.exports) == sorted([seeded.doc, seeded.slides, fresh.id])
    name, text, _ = await drive.top("trips under six hours trains")
    assert name == "Expenses policy" and "six hours" in text
    assert job.counters["documents_removed"] == 2
    assert job.counters.get("documents_unchanged", 0) >= 1, (
        "the deck's text did not change: not embedded again"
    )
    log = drive.jobs.log(job)
    assert "removed: Salary bands" in log and "removed: Security policy.pdf" in log


async def test_quota_errors_are_waited_out_and_nothing_is_lost(drive: DriveSync) -> None:
    source = await drive.attach(drive.seeded.handbook)
    drive.fake.rate_limit(1, after=4)
    drive.fake.rate_limit(1, status=429)
    drive.fake.rate_limit(1, reason="rateLimitExceeded", after=3)
    job = await drive.run(source, trigger="manual")
    assert drive.names() == sorted([*HANDBOOK, *SHEETS])
    assert drive.jobs.waits.seconds == [1.0, 2.0, 1.0], drive.jobs.log(job)
    assert "Google answered 403 (userRateLimitExceeded); trying again in 1 s" in drive.jobs.log(job)


async def test_a_failing_file_is_skipped_and_tried_again_at_the_next_sync(drive: DriveSync) -> None:
    source = await drive.attach(drive.seeded.handbook)
    drive.fake.fail(f"/drive/v3/files/{drive.seeded.pdf}")
    job = await drive.run(source, trigger="manual")
    assert "Security policy.pdf" not in drive.names() and len(drive.names()) == len(HANDBOOK) + 1
    assert "skipped: Security policy.pdf" in drive.jobs.log(job) and job.counters["pages_failed"] == 1
    drive.fake.fail(f"/drive/v3/files/{drive.seeded.pdf}", times=0)
    await drive.run(source)
    assert "Security policy.pdf" in drive.names(), "tried again though the feed does not list it"


async def test_a_file_failing_early_in_a_long_listing_is_tried_again(drive: DriveSync) -> None:
    fake, seeded = drive.fake, drive.seeded
    for n in range(25):  # more than a fetch batch: the first batch is fetched while the listing runs
        fake.add(
            f"Note {n}", DOCUMENT, seeded.handbook, content=f"# Note {n}\n\nNote number {n} of the batch.\n"
        )
    source = await drive.attach(seeded.handbook)
    fake.fail(f"/drive/v3/files/{seeded.doc}/export")
    job = await drive.run(source, trigger="manual")
    assert "Expenses policy" not in drive.names() and job.counters["pages_failed"] == 1
    fake.fail(f"/drive/v3/files/{seeded.doc}/export", times=0)
    await drive.run(source)
    assert "Expenses policy" in drive.names(), "remembered though it failed before the listing ended"


async def test_a_redirect_elsewhere_is_refused_before_the_token_follows_it(drive: DriveSync) -> None:
    source = await drive.attach(drive.seeded.handbook)
    drive.fake.redirects[f"/drive/v3/files/{drive.seeded.pdf}"] = "http://127.0.0.2:9/steal"
    job = await drive.run(source, trigger="manual")
    assert "Security policy.pdf" not in drive.names() and len(drive.names()) == len(HANDBOOK) + 1
    assert "skipped: Security policy.pdf: Google redirected to another site (127.0.0.2)" in drive.jobs.log(
        job
    )


async def test_a_shared_drive_and_an_oauth_user(stack: Stack) -> None:
    jobs = connector_jobs(stack)
    index = stack.index("eng")
    async with FakeGoogle() as fake:
        seeded = seed(fake)
        token = fake.oauth_refresh_token(ADA)
        credentials = oauth_client(CLIENT_ID, CLIENT_SECRET, token, token_uri=fake.token_uri)
        connection, _ = await jobs.connections.connect("T1", fake.drive_url, credentials, kind="google-drive")
        assert "refresh token" in connection.credentials_hint and token not in connection.credentials_hint
        source = await jobs.connections.attach(connection, index, [FolderSpec(seeded.drive)])
        job = await jobs.run(index, source, trigger="manual")
        assert job.state == JobState.SUCCEEDED, jobs.log(job)
        documents = jobs.documents(index)
        assert list(documents) == ["Deploy runbook"], jobs.log(job) + str(fake.api_requests())
        runbook = documents["Deploy runbook"]
        assert runbook.meta["shared_drive_id"] == seeded.drive
        assert runbook.meta["drive_access"] == f"group:eng@{DOMAIN}; user:{ADA}", "the drive's members"

        fake.share(seeded.drive_doc, Permission("user", "reader", f"cy@{DOMAIN}"))
        job = await jobs.run(index, source)
        assert job.state == JobState.SUCCEEDED, jobs.log(job)
        runbook = jobs.documents(index)["Deploy runbook"]
        assert f"user:cy@{DOMAIN}" in runbook.meta["drive_access"], "a permission change reaches the document"

        # One user's OAuth client has no Directory: the group eng@ is unknown, no one reads
        # through it; the drive's member Ada and Cy, given the file since, do.
        db = stack.db
        syncer = AccessSync(
            jobs.connections, SourceAccessRepository(db), SourceRepository(db), stack.documents
        )
        grouped = await syncer.groups(connection)
        assert grouped.error is None and grouped.members == 0
        assert not [r for r in fake.api_requests() if r.path.startswith("/admin/")], "not even asked"
        people = SourceAccessRepository(db)
        for email, readable in ((ADA, True), (f"cy@{DOMAIN}", True), (BOB, False)):
            access = AccessFilter(people.principals("T1", None, email))
            assert bool(stack.documents.list_ready(index.id, access=access)) is readable, email

        # Drive fails to say who may open a changed file: nobody for now, the sync goes on.
        ada = AccessFilter(people.principals("T1", None, ADA))
        fake.edit(seeded.drive_doc, "# Deploys\n\nProduction deploys go out on Wednesdays.\n")
        fake.fail(f"/drive/v3/files/{seeded.drive_doc}/permissions")
        job = await jobs.run(index, source)
        assert job.state == JobState.SUCCEEDED and job.counters["pages_failed"] == 1, jobs.log(job)
        assert stack.documents.list_ready(index.id, access=ada) == [], "fail closed, never open"
        fake.fail(f"/drive/v3/files/{seeded.drive_doc}/permissions", times=0)
        job = await jobs.run(index, source)
        assert job.state == JobState.SUCCEEDED, jobs.log(job)
        hits = (await stack.retriever.search([index], "which day do deploys go out", access=ada)).hits
        assert "Wednesdays" in hits[0].text, "tried again, with who may open it"


async def test_no_key_or_token_reaches_a_log(drive: DriveSync, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    source = await drive.attach(drive.seeded.handbook)
    drive.fake.rate_limit(1)
    job = await drive.run(source, trigger="manual")
    drive.fake.revoke_access_tokens()
    drive.fake.users.pop(ADA)  # the user the key acts as is gone: no token any more
    failed = await drive.jobs.run(drive.index, source)
    assert failed.state == JobState.FAILED and failed.error is not None
    assert "Google refused the service account's token" in failed.error
    logged = caplog.text + drive.jobs.log(job) + drive.jobs.log(failed) + failed.error
    assert "403" in logged
    tokens = [*drive.fake.access_tokens]
    key = drive.jobs.connections.repository.credentials(drive.connection.id)["token"]
    assert "PRIVATE KEY" in key
    for secret in (*tokens, key.split("\\n")[1]):
        assert secret not in logged


def access_sync(drive: DriveSync) -> AccessSync:
    db = drive.jobs.stack.db
    return AccessSync(
        drive.jobs.connections, SourceAccessRepository(db), SourceRepository(db), drive.jobs.stack.documents
    )


def reads(drive: DriveSync, email: str | None) -> set[str]:
    """The documents of the index a Slack user with this confirmed email may read."""
    principals = SourceAccessRepository(drive.jobs.stack.db).principals("T1", None, email)
    listed = drive.jobs.stack.documents.list_ready(drive.index.id, limit=100, access=AccessFilter(principals))
    return {d.name for d in listed}


async def test_who_may_read_a_file_follows_drive_sharing_users_groups_and_the_domain(
    drive: DriveSync, caplog: pytest.LogCaptureFixture
) -> None:
    """The Handbook: Expenses shared with acme.com, the Office directory with the group eng@
    (Bob, and the group leads@ with Cy), the deck with anyone with the link, Salary bands
    with Bob, the PDF with nobody but Ada (its owner)."""
    fake, seeded = drive.fake, drive.seeded
    source = await drive.attach(seeded.handbook)
    await drive.run(source, trigger="manual")
    syncer = access_sync(drive)
    grouped = await syncer.groups(drive.connection)
    assert grouped.error is None and grouped.groups == 1 and grouped.members == 2, grouped
    everything = {*HANDBOOK, *SHEETS}
    assert reads(drive, ADA) == everything
    assert reads(drive, BOB) == {EXPENSES, DECK, SALARY, *DIRECTORY_ALL}
    assert reads(drive, CY) == {EXPENSES, DECK, *DIRECTORY_ALL}, "through the nested group"
    assert reads(drive, DAN) == {EXPENSES, DECK}, "anyone with the link: the domain"
    assert reads(drive, "mallory@elsewhere.example") == set(), "not the world"
    assert reads(drive, None) == set(), "a channel, or someone Slack confirms no email for"
    synced = await syncer.permissions(SourceRepository(drive.jobs.stack.db).get(source.id))
    assert synced.error is None and synced.changed == 0, "the permission sync agrees with the content sync"

    # Revoked and granted in Drive: the change feed brings it at the next content sync, for a
    # Google Doc (a new version, the same text) and a stored file (the same bytes) alike.
    fake.unshare(seeded.private_doc, BOB)
    fake.share(seeded.pdf, Permission("user", "reader", CY))
    fake.exports.clear()
    job = await drive.run(source)
    assert reads(drive, BOB) == {EXPENSES, DECK, *DIRECTORY_ALL}, drive.jobs.log(job)
    assert PDF in reads(drive, CY) and seeded.pdf not in fake.exports, "not downloaded again"
    assert job.counters.get("chunks", 0) == 0, "nothing embedded again"

    fake.groups[f"leads@{DOMAIN}"].remove(CY)  # a group sync is enough
    fake.suspended.add(BOB)  # suspended in the Workspace: no longer an active member
    await syncer.groups(drive.connection)
    assert reads(drive, CY) == {EXPENSES, DECK, PDF}
    assert reads(drive, BOB) == {EXPENSES, DECK}
    fake.suspended.discard(BOB)
    await syncer.groups(drive.connection)
    assert reads(drive, BOB) == {EXPENSES, DECK, *DIRECTORY_ALL}

    caplog.set_level(logging.INFO)
    fake.admins.discard(ADA)  # the Directory refuses: the group is unknown, no one reads through it
    refused = await syncer.groups(drive.connection)
    assert refused.error is None and refused.members == 0
    assert reads(drive, BOB) == {EXPENSES, DECK}
    assert f"group eng@{DOMAIN}: the Directory won't list its members" in caplog.text

    fake.fail(f"/drive/v3/files/{seeded.handbook}")  # Drive won't list the folder: nobody reads it
    failed = await syncer.permissions(SourceRepository(drive.jobs.stack.db).get(source.id))
    assert failed.error is not None and "500" in failed.error
    assert reads(drive, ADA) == set(), "fail closed, never open"


async def test_anyone_with_the_link_is_public_only_when_the_attachment_says_so(drive: DriveSync) -> None:
    source = await drive.jobs.connections.attach(
        drive.connection, drive.index, [FolderSpec(drive.seeded.hr)], selection={"link_sharing": "public"}
    )
    await drive.run(source, trigger="manual")
    await access_sync(drive).groups(drive.connection)  # who Ada is: her email, Drive's id for her
    assert reads(drive, None) == {DECK}, "shared with anyone, and the attachment says public"
    assert reads(drive, DAN) == {DECK} and reads(drive, ADA) == {DECK, PDF}
    synced = await access_sync(drive).permissions(SourceRepository(drive.jobs.stack.db).get(source.id))
    assert synced.error is None and synced.changed == 0 and synced.restricted == 1


async def test_a_file_whose_permissions_drive_wont_give_is_read_by_nobody(stack: Stack) -> None:
    """Acting as Bob, who may open Ada's memo but not share it: Drive gives him neither its
    permissions in the listing nor `permissions.list` (403), so no one reads it in Lore."""
    jobs = connector_jobs(stack)
    index = stack.index("bob")
    async with FakeGoogle() as fake:
        seed(fake)
        memo = fake.add("Board memo", DOCUMENT, None, content="# Board memo\n\nThe board meets in June.\n")
        fake.share(memo.id, Permission("user", "reader", BOB))
        credentials = service_account(fake.service_account_key(), BOB)
        connection, _ = await jobs.connections.connect("T1", fake.drive_url, credentials, kind="google-drive")
        source = await jobs.connections.attach(connection, index, [FolderSpec("shared-with-me")])
        job = await jobs.run(index, source, trigger="manual")
        assert job.state == JobState.SUCCEEDED, jobs.log(job)
        [document] = stack.documents.list_ready(index.id, access=None)
        assert document.name == "Board memo" and document.meta["drive_access"] == "unknown"
        assert stack.documents.access(document.id).unknown
        assert "Board memo: Google Drive did not say who may read it" in jobs.log(job)
        principals = SourceAccessRepository(stack.db).principals("T1", None, BOB)
        assert stack.documents.readable([document.id], AccessFilter(principals)) == set(), "not even Bob"
        refused = [r.path for r in fake.api_requests() if r.status == 403]
        assert refused == [f"/drive/v3/files/{memo.id}/permissions"]


async def test_sharing_from_the_change_feed_keeps_the_attachments_restriction_to_slack_groups(
    drive: DriveSync,
) -> None:
    """An attachment restricted to #eng (issue 41): a file shared anew, its content the same,
    takes its new sharing from the change feed and still the #eng clause."""
    fake, seeded = drive.fake, drive.seeded
    sources = SourceRepository(drive.jobs.stack.db)
    source = sources.set_options((await drive.attach(seeded.hr)).id, {"restricted_to": ["channel:CENG"]})
    await drive.run(source, trigger="manual")
    fake.share(seeded.pdf, Permission("user", "reader", CY))  # the same bytes: not fetched again
    fake.exports.clear()
    await drive.run(source)
    assert seeded.pdf not in fake.exports
    documents = drive.jobs.stack.documents
    [pdf] = [d for d in documents.list_ready(drive.index.id, access=None) if d.name == PDF]
    cy = f"{drive.connection.id}:user:{CY}"
    assert not documents.access(pdf.id).readable_by({cy}), "Drive lets Cy; #eng does not know him"
    assert documents.access(pdf.id).readable_by({cy, "slack:channel:CENG"})
