"""GitHub attachments synced by the jobs machinery into a real index (SQLite, embedded Chroma,
the offline embedder) against the fake GitHub: what a first sync indexes and with which
facts and links, an unchanged re-sync that fetches no blob and no issue body, edits, renames
and deletions reflected at the next sync, rate limits that delay without losing anything,
one failing item skipped, a GitHub App's tokens renewed, no secret in any log; and who may
read a private repository (collaborators, teams, verified emails) following GitHub."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from knowledge.answering.answer import Citation
from knowledge.sources.connectors import Credentials, FolderSpec
from knowledge.sources.connectors.access_sync import AccessSync
from storage.document_access import AccessFilter
from storage.records import ConnectionRef, IndexRef, JobRef, SourceConfigRef
from storage.repositories.source_access import SourceAccessRepository
from storage.repositories.sources import SourceRepository
from storage.values import JobState
from tests.fakes.github_server import APP_ID, INSTALLATION_ID, TOKEN, FakeGitHub, Seeded, blob_sha, seed
from tests.knowledge.conftest import Stack
from tests.knowledge.sources.connector_jobs import Jobs, connector_jobs

REPO = "acme/payments"
ISSUE, PULL, CLOSED = (
    "Refunds time out (#1)",
    "Retry refunds on gateway timeouts (#2)",
    "Old currency table (#3)",
)
DISCUSSION = "How do we rotate the webhook secret? (#4)"
FILES = ["README.md", "docs/architecture.rst", "docs/deploy.md", "docs/fraud.ipynb"]
KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
PEM = KEY.private_bytes(
    serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()
).decode()


@dataclass
class GitHubSync:
    jobs: Jobs
    fake: FakeGitHub
    seeded: Seeded
    index: IndexRef
    connection: ConnectionRef

    async def attach(self, *folders: str, **selection: Any) -> SourceConfigRef:
        return await self.jobs.connections.attach(
            self.connection, self.index, [FolderSpec(f) for f in folders], selection=selection or None
        )

    async def run(self, source: SourceConfigRef, trigger: str = "schedule") -> JobRef:
        job = await self.jobs.run(self.index, source, trigger)
        assert job.state == JobState.SUCCEEDED, self.jobs.log(job) + str(job.error)
        return job

    @property
    def reader(self) -> AccessFilter:
        """A collaborator of acme/payments (private), as a search on their behalf reads."""
        return AccessFilter(frozenset({f"{self.connection.id}:user:ada"}))

    def names(self) -> list[str]:
        return sorted(self.jobs.documents(self.index))


@pytest.fixture
async def github(stack: Stack) -> AsyncIterator[GitHubSync]:
    jobs = connector_jobs(stack)
    index = stack.index("eng")
    async with FakeGitHub(app_key=KEY.public_key()) as fake:
        seeded = seed(fake)
        fake.share(REPO, users={"ada": "admin"})
        connection, account = await jobs.connections.connect(
            "T1", fake.base_url, Credentials(TOKEN), kind="github"
        )
        assert account == "ada"
        yield GitHubSync(jobs, fake, seeded, index, connection)


async def test_a_first_sync_indexes_docs_issues_and_discussions_with_their_links(github: GitHubSync) -> None:
    source = await github.attach(REPO)
    job = await github.run(source, trigger="manual")
    assert github.names() == sorted([*FILES, ISSUE, PULL, CLOSED, DISCUSSION])
    documents = github.jobs.documents(github.index)
    web = f"{github.fake.web_url}/{REPO}"
    deploy = documents["docs/deploy.md"]
    assert deploy.url == f"{web}/blob/main/docs/deploy.md" and deploy.mime_type == "text/markdown"
    assert deploy.meta["version"] == blob_sha(github.fake.repo(REPO).files["docs/deploy.md"])
    assert (deploy.meta["repository"], deploy.meta["visibility"], deploy.meta["item_type"]) == (
        REPO,
        "private",
        "file",
    ), "what a permission sync needs: the repository and who may see it"
    assert deploy.meta["repository_id"] == github.fake.repo(REPO).id
    issue = documents[ISSUE]
    assert issue.url == f"{web}/issues/1" and issue.meta["state"] == "open" and issue.author == "ada"
    assert issue.meta["relevance_tags"] == ["bug", "refunds"]
    assert documents[PULL].url == f"{web}/pull/2" and documents[PULL].meta["item_type"] == "pull_request"
    assert documents[DISCUSSION].meta["answered"] is True
    assert "print('secret code cell')" not in str(documents), "a notebook's code cells are not read"
    assert job.counters["pages_found"] == 8 and job.counters["documents_added"] == 8

    retriever = github.jobs.stack.retriever
    comment = (
        await retriever.search([github.index], "refund worker timeout raised in March", access=github.reader)
    ).hits[0]
    assert comment.document.name == ISSUE and "45 seconds" in comment.text
    assert Citation.from_hit(1, comment).url == f"{web}/issues/1#issuecomment-{github.seeded.timeout_comment}"
    answer = (
        await retriever.search([github.index], "rotate the webhook secret command", access=github.reader)
    ).hits[0]
    assert answer.document.name == DISCUSSION and "payments-cli secrets rotate" in answer.text
    assert Citation.from_hit(1, answer).url == f"{web}/discussions/4#discussioncomment-{github.seeded.answer}"
    fact = (
        await retriever.search([github.index], "when do production deploys go out", access=github.reader)
    ).hits[0]
    assert fact.document.name == "docs/deploy.md" and Citation.from_hit(1, fact).url == deploy.url


async def test_an_unchanged_resync_fetches_no_blob_and_no_issue_body(github: GitHubSync) -> None:
    source = await github.attach(REPO)
    await github.run(source, trigger="manual")
    github.fake.blobs_served.clear()
    github.fake.issue_bodies_served.clear()
    before = len(github.fake.api_requests())

    job = await github.run(source)

    made = github.fake.api_requests()[before:]
    assert github.fake.blobs_served == [] and github.fake.issue_bodies_served == []
    assert not [r for r in made if "/comments" in r.path and "/issues/comments" not in r.path]
    queries = [r.body for r in made if r.path == "/api/graphql"]
    assert len(queries) == 1 and "discussions(first" in queries[0], "the listing only; no discussion is read"
    assert {r.status for r in made if r.path.endswith(("/git/trees/main", "/issues", REPO))} == {304}
    assert job.counters["pages_unchanged"] == 8 and job.counters.get("pages_fetched", 0) == 0
    assert "changes since" in github.jobs.log(job)


async def test_edits_renames_and_deletions_are_reflected_at_the_next_sync(github: GitHubSync) -> None:
    fake, seeded = github.fake, github.seeded
    source = await github.attach(REPO)
    await github.run(source, trigger="manual")
    fake.write(
        REPO, "docs/deploy.md", "# Deploying\n\nDeploys go out on Thursdays through the canary pipeline.\n"
    )
    fake.rename(REPO, "docs/architecture.rst", "docs/design.rst")
    fake.delete(REPO, "README.md")
    fake.edit_comment(
        REPO, seeded.timeout_issue, seeded.timeout_comment, "The refund worker's timeout is now 90 seconds."
    )
    fake.delete_issue(REPO, seeded.closed_issue)
    fake.edit_reply(
        REPO, seeded.discussion, seeded.answer, "Rotate it from the vault UI; old secrets die at once."
    )
    fake.blobs_served.clear()
    fake.issue_bodies_served.clear()

    job = await github.run(source)  # scheduled: incremental

    assert github.names() == sorted(
        ["docs/deploy.md", "docs/design.rst", "docs/fraud.ipynb", ISSUE, PULL, DISCUSSION]
    )
    assert sorted(fake.blobs_served) == ["docs/deploy.md", "docs/design.rst"]
    retriever = github.jobs.stack.retriever
    assert (
        "Thursdays"
        in (await retriever.search([github.index], "which day do deploys go out", access=github.reader))
        .hits[0]
        .text
    )
    timeout = (
        await retriever.search(
            [github.index], "refund worker's timeout is now 90 seconds", access=github.reader
        )
    ).hits
    assert any(h.document.name == ISSUE and "90 seconds" in h.text for h in timeout[:3]), github.jobs.log(
        job
    ) + str([h.text for h in timeout])
    vault = (await retriever.search([github.index], "rotate the webhook secret", access=github.reader)).hits[
        0
    ]
    assert "vault UI" in vault.text
    assert job.counters["documents_removed"] == 3, "README.md, the old name of design.rst, the deleted issue"
    assert "removed: Old currency table (#3)" in github.jobs.log(job)


async def test_rate_limits_delay_a_sync_without_losing_anything(github: GitHubSync) -> None:
    source = await github.attach(REPO)
    github.fake.secondary_limit(1, retry_after="3")
    github.fake.secondary_limit(1, retry_after="5", status=429)
    github.fake.primary_limit(1, reset_in=40)
    job = await github.run(source, trigger="manual")
    assert github.names() == sorted([*FILES, ISSUE, PULL, CLOSED, DISCUSSION])
    waits = github.jobs.waits.seconds
    assert waits[:2] == [3.0, 5.0] and 35 <= waits[2] <= 42, waits
    log = github.jobs.log(job)
    assert "GitHub answered 403; waiting 3 s" in log and "GitHub answered 429; waiting 5 s" in log


async def test_a_failing_item_is_reported_and_skipped_the_rest_go_on(github: GitHubSync) -> None:
    source = await github.attach(REPO)
    deploy = blob_sha(github.fake.repo(REPO).files["docs/deploy.md"])
    github.fake.fail(f"/repos/{REPO}/git/blobs/{deploy}")
    job = await github.run(source, trigger="manual")
    assert "docs/deploy.md" not in github.names() and len(github.names()) == 7
    assert "skipped: docs/deploy.md: GitHub at 127.0.0.1 answered 500" in github.jobs.log(job)
    assert job.counters["pages_failed"] == 1
    github.fake.fail(f"/repos/{REPO}/git/blobs/{deploy}", times=0)
    await github.run(source)
    assert "docs/deploy.md" in github.names(), "tried again at the next sync, though nothing changed"


async def test_an_owner_attaches_every_repository_and_a_selection_narrows_it(github: GitHubSync) -> None:
    source = await github.attach("acme", parts=["docs", "issues"], closed=False)
    await github.run(source, trigger="manual")
    assert github.names() == sorted([*FILES, ISSUE, "README.md"]) or github.names() == sorted({*FILES, ISSUE})
    documents = github.jobs.documents(github.index)
    assert {d.meta["repository"] for d in documents.values()} == {REPO, "acme/website"}
    website = [d for d in documents.values() if d.meta["repository"] == "acme/website"]
    assert [d.meta["visibility"] for d in website] == ["public"]
    source = await github.attach("acme", parts=["docs"])
    job = await github.run(source)
    assert ISSUE not in github.names() and "complete listing (first sync)" in github.jobs.log(job)


async def test_a_github_app_syncs_with_tokens_renewed_when_refused(stack: Stack) -> None:
    jobs = connector_jobs(stack)
    async with FakeGitHub(app_key=KEY.public_key()) as fake:
        seed(fake)
        index = stack.index("eng")
        app = Credentials(PEM, app_id=APP_ID, installation_id=INSTALLATION_ID)
        connection, account = await jobs.connections.connect("T1", fake.base_url, app, kind="github")
        assert account == "Lore Reader (installed on acme)"
        assert (
            connection.credentials_hint
            == f"GitHub App {APP_ID}, installation {INSTALLATION_ID} (private key sealed)"
        )
        source = await jobs.connections.attach(connection, index, [FolderSpec(REPO)])
        before = len(fake.api_requests())
        fake.secondary_limit(1, retry_after="1", after=2)  # after the exchange and a request with its token

        async def revoke() -> None:
            fake.revoke_installation_tokens()  # while the sync waits: its token stops working

        jobs.waits.then.append(revoke)
        job = await jobs.run(index, source, trigger="manual")
        assert job.state == JobState.SUCCEEDED, jobs.log(job)
        assert len(jobs.documents(index)) == 8
        made = fake.api_requests()[before:]
        exchanges = [r for r in made if r.path.endswith("/access_tokens")]
        assert len(exchanges) == 2, "one when the sync began, one when GitHub refused the token"
        assert [r.status for r in made].count(401) == 1, "refused once, then renewed"
        assert all(r.headers["Authorization"].startswith("Bearer ey") for r in exchanges), "a JWT, not a key"
        assert PEM.splitlines()[1] not in str([r.headers for r in made] + [r.body for r in made])


async def test_no_secret_reaches_a_log(github: GitHubSync, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    source = await github.attach(REPO)
    github.fake.secondary_limit(1, retry_after="1")
    first = await github.run(source, trigger="manual")
    github.fake.token = "rotated-on-github"
    failed = await github.jobs.run(github.index, source)
    assert failed.state == JobState.FAILED and failed.error is not None
    assert failed.error.startswith("GitHub at 127.0.0.1 refused the credentials (401)")
    logged = caplog.text + github.jobs.log(first) + github.jobs.log(failed) + failed.error
    assert "403" in logged and "401" in logged
    for secret in (TOKEN, TOKEN[-8:]):
        assert secret not in logged


DEPLOY, WEBSITE = f"{REPO}:docs/deploy.md", "acme/website:README.md"


def access_sync(github: GitHubSync) -> AccessSync:
    db = github.jobs.stack.db
    return AccessSync(
        github.jobs.connections, SourceAccessRepository(db), SourceRepository(db), github.jobs.stack.documents
    )


async def test_a_private_repository_is_read_by_its_collaborators_and_teams_and_follows_them(
    github: GitHubSync,
) -> None:
    """acme/payments (private): Ada a direct collaborator, the payments team (Grace) given
    read; acme/website public. People are tied to Slack by their verified acme emails."""
    fake, stack = github.fake, github.jobs.stack
    fake.add_team("acme", "payments-team", ["grace"])
    fake.share(REPO, teams={"payments-team": "read"})
    for login in ("ada", "grace", "heidi"):
        fake.verified_emails[("acme", login)] = [f"{login}@acme.example"]
    fake.verified_emails[("acme", "ada")] = ["Ada@ACME.example"]
    source = await github.attach(REPO, "acme/website")
    await github.run(source, trigger="manual")
    every = stack.documents.list_ready(github.index.id, limit=100, access=None)
    named = {f"{d.meta['repository']}:{d.name}": d for d in every}
    deploy, website = named[DEPLOY], named[WEBSITE]
    assert deploy.restricted and not website.restricted, "access is set as items are fetched"
    assert stack.documents.access(named[f"{REPO}:{ISSUE}"].id) == stack.documents.access(deploy.id)
    syncer, people = access_sync(github), SourceAccessRepository(stack.db)
    blobs, bodies = len(fake.blobs_served), len(fake.issue_bodies_served)
    synced = await syncer.permissions(SourceRepository(stack.db).get(source.id))
    assert synced.error is None and synced.restricted == len(every) - 1
    assert (len(fake.blobs_served), len(fake.issue_bodies_served)) == (blobs, bodies), "nothing fetched again"
    grouped = await syncer.groups(github.connection)
    assert grouped.error is None and grouped.groups == 1

    async def reads(email: str | None) -> set[str]:
        access = AccessFilter(people.principals("T1", None, email))
        hits = (
            await stack.retriever.search([github.index], "when do production deploys go out", access=access)
        ).hits
        return {f"{h.document.meta['repository']}:{h.document.name}" for h in hits} & {DEPLOY, WEBSITE}

    assert await reads("ada@acme.example") == {DEPLOY, WEBSITE}, "a collaborator, mapped by email"
    assert await reads("grace@acme.example") == {DEPLOY, WEBSITE}, "through the team"
    assert await reads("heidi@acme.example") == {WEBSITE}, "no access: the public repository only"
    assert await reads("mallory@elsewhere.example") == {WEBSITE}, "unmapped: public only"
    assert people.principals("T1", None, "grace@acme.example") >= {
        f"{github.connection.id}:user:grace", f"{github.connection.id}:group:acme/payments-team"
    }  # fmt: skip

    fake.teams[("acme", "payments-team")].append("heidi")  # a group sync is enough
    await syncer.groups(github.connection)
    assert DEPLOY in await reads("heidi@acme.example")

    fake.teams[("acme", "payments-team")].remove("grace")  # revoked: at the next syncs
    fake.unshare(REPO, users=["ada"])
    await syncer.refresh("T1")
    assert await reads("grace@acme.example") == {WEBSITE}
    assert await reads("ada@acme.example") == {WEBSITE}

    fake.fail(f"/repos/{REPO}/collaborators")  # GitHub won't say: nobody reads it
    failed = await syncer.permissions(SourceRepository(stack.db).get(source.id))
    assert failed.error is not None and "500" in failed.error
    assert await reads("heidi@acme.example") == set(), "fail closed: the whole attachment"


async def test_items_whose_repository_access_github_wont_give_are_indexed_unreadable(
    github: GitHubSync,
) -> None:
    github.fake.fail(f"/repos/{REPO}/teams")
    source = await github.attach(REPO, "acme/website")
    await github.run(source, trigger="manual")
    stack = github.jobs.stack
    every = stack.documents.list_ready(github.index.id, limit=100, access=None)
    payments = [d for d in every if d.meta["repository"] == REPO]
    assert len(payments) == 8 and all(stack.documents.access(d.id).unknown for d in payments)
    assert [d.meta["repository"] for d in every if not d.restricted] == ["acme/website"]
    assert stack.documents.readable([d.id for d in payments], github.reader) == set(), "not even Ada"
