"""What sources say about people, in SQL (SQLite and PostgreSQL): a Lore user's principals
from their email (their account and its groups, in their workspace's sources only) and
their grants; the principals documents name; claims two processes cannot both win; when a
sync is due, and a failure's wait."""

from __future__ import annotations

from datetime import timedelta

from sqlmodel import Session

from storage.db import Database
from storage.document_access import DocumentAccess
from storage.models import DocSource, DocSourceConfig
from storage.records import NewChunk
from storage.repositories.directory import Directory
from storage.repositories.documents import DocumentRepository
from storage.repositories.indexes import IndexRepository
from storage.repositories.source_access import Person, SourceAccessRepository
from storage.values import Scope
from tests.storage.test_repositories import DIM, MODEL, new_doc

HOUR = timedelta(hours=1)


def sources(database: Database) -> tuple[int, int, int]:
    """Two Confluence sites of T1 and one of T2; the first attached to an index."""
    directory = Directory(database)
    for tenant in ("T1", "T2"):
        directory.ensure_tenant(tenant)
    index = IndexRepository(database).create(
        "T1", "wiki", Scope.SHARED, embedding_model=MODEL, embedding_dimension=DIM
    )
    with Session(database.engine) as session:
        rows = [
            DocSource(tenant_id=t, kind="confluence", name=t, base_url=f"https://{t}.{n}")
            for n, t in enumerate(("T1", "T1", "T2"))
        ]
        session.add_all(rows)
        session.flush()
        session.add(DocSourceConfig(index_id=index.id, source_id=rows[0].id, folders=["ENG"]))
        session.commit()
        return rows[0].id, rows[1].id, rows[2].id  # type: ignore[return-value]


def test_a_users_principals_come_from_their_email_in_their_workspaces_sources(database: Database) -> None:
    first, second, elsewhere = sources(database)
    repository = SourceAccessRepository(database)
    for source in (first, second, elsewhere):
        repository.save_people(
            source, [Person("acc-ada", "Ada@Example.com", "Ada"), Person("acc-bob", None, "Bob")]
        )
    repository.replace_members(first, {"finance": ["acc-ada"], "ops": ["acc-bob"]})
    repository.replace_members(elsewhere, {"finance": ["acc-ada"]})
    ada = directory_user(database, "UADA")
    assert repository.principals("T1", ada, "ada@example.com") == {
        f"{first}:user:acc-ada",
        f"{first}:group:finance",
        f"{second}:user:acc-ada",
    }
    assert repository.principals("T1", ada, None) == frozenset()  # no email: nothing
    assert repository.grant(ada, f"{second}:group:finance") and not repository.grant(
        ada, f"{second}:group:finance"
    )
    assert f"{second}:group:finance" in repository.principals("T1", ada, None)
    assert repository.revoke(ada, f"{second}:group:finance") and repository.grants(ada) == []
    repository.save_people(first, [Person("acc-ada", None, "")])  # nothing new: the email stays
    assert repository.accounts_with_email("T1", "ADA@example.com") == [
        (first, "acc-ada"),
        (second, "acc-ada"),
    ]
    repository.replace_members(first, {}, read=["finance", "ops"])
    assert repository.groups_read(first) == {"finance", "ops"}
    assert f"{first}:group:finance" not in repository.principals("T1", ada, "ada@example.com")
    repository.forget_source(first)
    assert repository.known_accounts(first) == set()


def test_a_person_mapped_to_a_source_user_holds_that_users_groups(database: Database) -> None:
    """An admin's mapping (a granted `user:` principal, for a GitHub login with no verified
    email): the account and its groups, in that source only; revoked, both go."""
    first, second, _ = sources(database)
    repository = SourceAccessRepository(database)
    repository.replace_members(first, {"acme/payments-team": ["octocat"], "acme/ops": ["hubot"]})
    repository.replace_members(second, {"acme/payments-team": ["someone"]})
    cy = directory_user(database, "UCY")
    assert repository.principals("T1", cy, None) == frozenset()
    assert repository.grant(cy, f"{first}:user:octocat")
    assert repository.principals("T1", cy, None) == {
        f"{first}:user:octocat",
        f"{first}:group:acme/payments-team",
    }
    assert repository.revoke(cy, f"{first}:user:octocat")
    assert repository.principals("T1", cy, None) == frozenset()


def directory_user(database: Database, slack_id: str) -> int:
    return Directory(database).ensure_user("T1", slack_id).id


def test_the_principals_documents_name_per_source(database: Database) -> None:
    first, second, _ = sources(database)
    documents = DocumentRepository(database)
    index = IndexRepository(database).list_for_tenant("T1")[0]
    access = DocumentAccess.restricted({f"{first}:group:staff"}, {f"{first}:user:acc-1", f"{second}:group:x"})
    documents.create_pending(new_doc(index.id, access=access), [NewChunk(0, "", "text")])
    repository = SourceAccessRepository(database)
    assert repository.referenced(first) == {f"{first}:group:staff", f"{first}:user:acc-1"}
    assert repository.referenced(second) == {f"{second}:group:x"}


def test_claims_and_when_syncs_are_due(database: Database) -> None:
    first, second, elsewhere = sources(database)
    repository = SourceAccessRepository(database)
    config = repository.permissions_due(["confluence"], HOUR, HOUR)
    assert len(config) == 1  # never synced
    assert repository.claim_permissions(config[0], stale_after=HOUR)
    assert not repository.claim_permissions(config[0], stale_after=HOUR)  # another process holds it
    assert repository.claim_permissions(config[0], stale_after=timedelta(0))  # a stale claim is taken over
    repository.record_permissions(config[0], None)
    assert repository.permissions_due(["confluence"], HOUR, HOUR) == []
    assert repository.permissions_due(["confluence"], timedelta(0), HOUR) == config
    assert repository.claim_permissions(config[0], stale_after=HOUR)
    repository.record_permissions(config[0], "Confluence answered 500")
    assert repository.permissions_state(config[0]).error == "Confluence answered 500"
    assert repository.permissions_due(["confluence"], timedelta(0), HOUR) == []  # a failure waits
    assert repository.permissions_due(["confluence"], timedelta(0), timedelta(0)) == config
    assert repository.permissions_due(["github"], timedelta(0), timedelta(0)) == []
    assert sorted(repository.groups_due(["confluence"], HOUR, HOUR)) == sorted([first, second, elsewhere])
    repository.record_groups(first, None)
    assert first not in repository.groups_due(["confluence"], HOUR, HOUR)
