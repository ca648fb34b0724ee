"""Who may read a Confluence page, as the connector reads it from the fake Confluence (Cloud
and Data Center), and permission and group syncs keeping a real index (SQLite, embedded
Chroma) in step: inherited view restrictions add up, anonymous spaces are public, a lifted
restriction opens the page at the next permission sync without fetching or embedding it
again, group members follow the group sync, and failures leave pages unreadable."""

from __future__ import annotations

from datetime import timedelta

import pytest

from knowledge.sources.connectors import Credentials
from knowledge.sources.connectors.access_sync import AccessPolicy, AccessSync, PermissionReport
from knowledge.sources.connectors.confluence import parse_space
from knowledge.sources.connectors.permissions import AccessReader, SourceAccess
from storage.document_access import AccessFilter, DocumentAccess
from storage.repositories.source_access import SourceAccessRepository
from storage.repositories.sources import SourceRepository
from storage.values import JobState
from tests.fakes.confluence_server import EMAIL, TOKEN
from tests.knowledge.sources.conftest import Sync

PAT = "dc-personal-access-token-0123456789"


def restrict_engineering(sync: Sync) -> None:
    """ENG readable by confluence-users (not anonymously); Runbooks restricted to `ops`,
    and under it Deploy to Ada alone; ops = Ada and Bob."""
    fake = sync.fake
    fake.add_user("acc-ada", "ada@example.com", "Ada")
    fake.add_user("acc-bob", "bob@example.com", "Bob")
    fake.add_group("confluence-users", ["acc-ada", "acc-bob"])
    fake.add_group("ops", ["acc-ada", "acc-bob"])
    fake.spaces["ENG"].anonymous = False
    fake.spaces["ENG"].viewers = ["group:confluence-users"]
    fake.restrict(sync.pages.runbooks, "group:ops")
    fake.restrict(sync.pages.deploy, "user:acc-ada")


def access_sync(sync: Sync) -> AccessSync:
    db = sync.stack.db
    return AccessSync(
        sync.connections, SourceAccessRepository(db), SourceRepository(db), sync.stack.documents
    )


def principal(sync: Sync, grantee: str) -> str:
    return f"{sync.connection.id}:{grantee}"


async def item_access(sync: Sync, credentials: Credentials, *folders: str) -> dict[str, SourceAccess]:
    async with sync.connections.client(sync.fake.base_url, credentials) as connector:
        assert isinstance(connector, AccessReader)
        return {i: a async for i, a in connector.item_access([parse_space(f) for f in folders])}


@pytest.mark.parametrize("flavour", ["cloud", "data center"])
async def test_view_restrictions_are_inherited_and_add_up_to_the_space_permission(
    sync: Sync, flavour: str
) -> None:
    restrict_engineering(sync)
    credentials = Credentials(TOKEN, EMAIL) if flavour == "cloud" else Credentials(PAT)
    sync.fake.pat = PAT
    found = await item_access(sync, credentials, "ENG", "OPS")
    pages = sync.pages
    space = frozenset({"group:confluence-users"})
    assert found[pages.home] == SourceAccess((space,))
    assert found[pages.runbooks] == SourceAccess((space, frozenset({"group:ops"})))
    assert found[pages.deploy] == SourceAccess((space, frozenset({"group:ops"}), frozenset({"user:acc-ada"})))
    assert found[pages.rollback] == found[pages.runbooks]  # inherits Runbooks' restriction
    assert found[pages.oncall] == SourceAccess.public()  # OPS: anonymous users may view it
    deploy = found[pages.deploy].document_access(sync.connection.id)
    assert deploy.readable_by(
        {
            principal(sync, "group:confluence-users"),
            principal(sync, "group:ops"),
            principal(sync, "user:acc-ada"),
        }
    )
    assert not deploy.readable_by({principal(sync, "group:confluence-users"), principal(sync, "group:ops")})


async def test_a_page_tree_reads_the_restrictions_of_ancestors_outside_it(sync: Sync) -> None:
    restrict_engineering(sync)
    found = await item_access(sync, Credentials(TOKEN, EMAIL), f"ENG/{sync.pages.deploy}")
    assert list(found) == [sync.pages.deploy]
    assert frozenset({"group:ops"}) in found[sync.pages.deploy].clauses  # from Runbooks, not listed
    asked = [r.path for r in sync.fake.requests.snapshot() if "/restriction/" in r.path]
    assert any(sync.pages.runbooks in path for path in asked)


async def test_synced_pages_carry_their_access_and_a_permission_sync_follows_changes_without_refetching(
    sync: Sync,
) -> None:
    restrict_engineering(sync)
    source = await sync.attach("ENG")
    job = await sync.run(source, trigger="manual")
    assert job.state == JobState.SUCCEEDED, sync.log(job)
    documents = sync.stack.documents
    every = {d.name: d for d in documents.list_ready(sync.index.id, limit=100, access=None)}
    assert every["Deploy"].restricted and every["checklist.md"].restricted  # an attachment: its page's
    assert documents.access(every["checklist.md"].id) == documents.access(every["Deploy"].id)
    assert documents.list_ready(sync.index.id, limit=100) == []  # public only: nothing in ENG is

    sync.fake.restrict(sync.pages.deploy)  # Ada's restriction lifted; ops still applies
    sync.fake.spaces["ENG"].anonymous = True
    sync.fake.restrict(sync.pages.runbooks)
    bodies = len(sync.fake.bodies_served)
    report = await access_sync(sync).permissions(SourceRepository(sync.stack.db).get(source.id))
    assert report.error is None and report.documents == 7 and report.restricted == 0
    assert len(sync.fake.bodies_served) == bodies  # nothing fetched again
    assert {d.name for d in documents.list_ready(sync.index.id, limit=100)} == set(every)


async def test_a_failed_permission_sync_leaves_every_page_of_the_attachment_unreadable(sync: Sync) -> None:
    source = await sync.attach("ENG")  # an anonymous space: everything public
    assert (await sync.run(source, trigger="manual")).state == JobState.SUCCEEDED
    documents = sync.stack.documents
    assert len(documents.list_ready(sync.index.id, limit=100)) == 7
    sync.fake.fail_permissions = True
    report = await access_sync(sync).permissions(SourceRepository(sync.stack.db).get(source.id))
    assert report.error is not None and "500" in report.error
    assert documents.list_ready(sync.index.id, limit=100) == []
    every = documents.list_ready(sync.index.id, limit=100, access=None)
    assert all(documents.access(d.id) == DocumentAccess.nobody() for d in every)
    repository = SourceAccessRepository(sync.stack.db)
    assert repository.permissions_state(source.id).error == report.error
    sync.fake.fail_permissions = False
    assert (await access_sync(sync).permissions(SourceRepository(sync.stack.db).get(source.id))).error is None
    assert len(documents.list_ready(sync.index.id, limit=100)) == 7
    assert repository.permissions_state(source.id).error is None


async def test_group_sync_ties_emails_to_accounts_and_groups_and_follows_membership(sync: Sync) -> None:
    restrict_engineering(sync)
    sync.fake.add_user("acc-cy", "cy@example.com", "Cy", email_visible=False)
    sync.fake.groups["ops"].members.append("acc-cy")
    source = await sync.attach("ENG")
    assert (await sync.run(source, trigger="manual")).state == JobState.SUCCEEDED
    syncer = access_sync(sync)
    report = await syncer.groups(sync.connection)
    assert report.error is None and report.groups == 2
    repository = SourceAccessRepository(sync.stack.db)
    bob = repository.principals("T1", None, "BOB@example.com")
    assert bob == {
        principal(sync, "user:acc-bob"),
        principal(sync, "group:ops"),
        principal(sync, "group:confluence-users"),
    }
    assert repository.principals("T1", None, "cy@example.com") == frozenset()  # Confluence hides Cy's email
    assert repository.principals("T2", None, "bob@example.com") == frozenset()  # another workspace's
    rollback = next(
        d for d in sync.stack.documents.list_ready(sync.index.id, access=None) if d.name == "Rollback"
    )
    assert sync.stack.documents.readable([rollback.id], AccessFilter(bob)) == {rollback.id}

    sync.fake.groups["ops"].members.remove("acc-bob")
    await syncer.groups(sync.connection)
    bob = repository.principals("T1", None, "bob@example.com")
    assert principal(sync, "group:ops") not in bob
    assert sync.stack.documents.readable([rollback.id], AccessFilter(bob)) == set()

    sync.fake.fail_permissions = True  # a failed group sync: groups count as empty
    failed = await syncer.groups(sync.connection)
    assert failed.error is not None
    assert repository.principals("T1", None, "ada@example.com") == {principal(sync, "user:acc-ada")}


async def test_syncs_run_when_due_and_a_failed_one_waits_before_trying_again(sync: Sync) -> None:
    restrict_engineering(sync)
    source = await sync.attach("ENG")
    assert (await sync.run(source, trigger="manual")).state == JobState.SUCCEEDED
    syncer = access_sync(sync)
    first = await syncer.run_due()  # never synced: both run, groups since pages name some
    assert sorted(type(r).__name__ for r in first) == ["GroupReport", "PermissionReport"]
    assert await syncer.run_due() == []  # synced just now: nothing due
    sync.fake.restrict(sync.pages.home, "group:architects")  # a group no group sync has read
    await syncer.permissions(SourceRepository(sync.stack.db).get(source.id))
    [groups] = await syncer.run_due()
    assert type(groups).__name__ == "GroupReport" and groups.error is None
    repository = SourceAccessRepository(sync.stack.db)
    assert "architects" in repository.groups_read(sync.connection.id)

    sync.fake.fail_permissions = True
    failed = await syncer.refresh("T1")  # an admin's refresh runs whatever the schedule says
    assert [type(r).__name__ for r in failed if r.error] == ["PermissionReport"]
    stale = AccessSync(
        sync.connections,
        repository,
        SourceRepository(sync.stack.db),
        sync.stack.documents,
        AccessPolicy(permissions_every=timedelta(0), groups_every=timedelta(0)),
    )
    waiting = [r for r in await stale.run_due() if isinstance(r, PermissionReport)]
    assert waiting == []  # due by the clock, but a failed permission sync waits `retry_after`
    waited = AccessSync(
        sync.connections,
        repository,
        SourceRepository(sync.stack.db),
        sync.stack.documents,
        AccessPolicy(permissions_every=timedelta(0), groups_every=timedelta(0), retry_after=timedelta(0)),
    )
    sync.fake.fail_permissions = False
    retried = await waited.run_due()
    assert [r.error for r in retried if isinstance(r, PermissionReport)] == [None]


async def test_a_restriction_to_slack_groups_narrows_what_the_source_lets_through(sync: Sync) -> None:
    """An attachment restricted to #eng (issue 41): its content sync and its permission sync
    both add the clause, on top of Confluence's own; lifting it restores Confluence's alone."""
    restrict_engineering(sync)
    sources = SourceRepository(sync.stack.db)
    source = sources.set_options((await sync.attach("ENG")).id, {"restricted_to": ["channel:CENG"]})
    assert (await sync.run(source, trigger="manual")).state == JobState.SUCCEEDED
    documents = sync.stack.documents
    deploy = next(
        d for d in documents.list_ready(sync.index.id, limit=100, access=None) if d.name == "Deploy"
    )
    ada = {
        principal(sync, "user:acc-ada"),
        principal(sync, "group:ops"),
        principal(sync, "group:confluence-users"),
    }
    assert not documents.access(deploy.id).readable_by(ada), "Confluence lets Ada; #eng does not know her"
    assert documents.access(deploy.id).readable_by(ada | {"slack:channel:CENG"})
    assert not documents.access(deploy.id).readable_by({"slack:channel:CENG"})

    sources.set_options(source.id, {"restricted_to": []})
    report = await access_sync(sync).permissions(sources.get(source.id))
    assert report.error is None and report.changed == 7
    assert documents.access(deploy.id).readable_by(ada)
