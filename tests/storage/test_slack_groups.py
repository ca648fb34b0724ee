"""The members of Slack groups that attachments are restricted to, in SQL (SQLite and
PostgreSQL): a read replaces them, a failed read leaves none (fail closed) and says why, a
user's groups stay in their workspace, a group is due once its read is old (a failed one only
after its wait), and groups no restriction names are forgotten."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import update
from sqlmodel import col

from storage.db import Database
from storage.document_access import DocumentAccess, restriction, slack_principal
from storage.models import SlackGroup
from storage.repositories.directory import Directory
from storage.repositories.slack_groups import SlackGroupRepository
from storage.values import utcnow

HOUR = timedelta(hours=1)


def test_reads_replace_members_and_a_failed_read_leaves_none(database: Database) -> None:
    for tenant in ("T1", "T2"):
        Directory(database).ensure_tenant(tenant)
    groups = SlackGroupRepository(database)
    groups.replace("T1", "channel:CENG", ["U1", "U2"])
    groups.replace("T2", "channel:CENG", ["U3"])
    groups.replace("T1", "usergroup:SSRE", ["U1"])
    assert groups.groups_of("T1", "U1") == {"channel:CENG", "usergroup:SSRE"}
    assert groups.groups_of("T1", "U3") == set(), "another workspace's channel of the same id"
    state = groups.state("T1", "channel:CENG")
    assert state.readable and state.members == 2 and state.error is None

    groups.replace("T1", "channel:CENG", None, "Slack said missing_scope")
    failed = groups.state("T1", "channel:CENG")
    assert not failed.readable and failed.members == 0 and failed.error == "Slack said missing_scope"
    assert groups.groups_of("T1", "U2") == set()
    assert failed.read_at is not None, "when it last succeeded is kept"

    assert groups.due("T1", ["channel:CENG", "usergroup:SSRE", "channel:CNEW"], HOUR, HOUR) == [
        "channel:CNEW"
    ]
    assert groups.due("T1", ["channel:CENG", "usergroup:SSRE"], timedelta(0), timedelta(0)) == [
        "channel:CENG",
        "usergroup:SSRE",
    ]
    groups.forget_unused("T1", ["usergroup:SSRE"])
    assert groups.groups_of("T1", "U1") == {"usergroup:SSRE"}
    assert groups.state("T1", "channel:CENG").read_at is None
    assert groups.groups_of("T2", "U3") == {"channel:CENG"}, "other workspaces untouched"


def test_a_due_read_is_claimed_by_one_process_at_a_time(database: Database) -> None:
    """`lore run` and `lore worker`s each check on schedule: one takes a due group (never read
    ones too), the others find it taken until its reader stores what it read (then it is not
    due) or its claim runs out (its process stopped)."""
    Directory(database).ensure_tenant("T1")
    groups = SlackGroupRepository(database)
    groups.replace("T1", "channel:CENG", ["U1"])
    keys, soon, later = ["channel:CENG", "usergroup:SNEW"], utcnow() + HOUR, utcnow() + 2 * HOUR
    assert groups.claim_due("T1", keys, timedelta(0), HOUR, "run:1", soon) == keys
    assert groups.claim_due("T1", keys, timedelta(0), HOUR, "worker:2", later) == []
    groups.replace("T1", "usergroup:SNEW", ["U2"])
    assert groups.claim_due("T1", keys, HOUR, HOUR, "worker:2", later) == [], "read now: not due"
    assert groups.claim_due("T1", keys, timedelta(0), HOUR, "worker:2", later) == ["usergroup:SNEW"]
    with database.session() as session:  # run:1 stopped: its claim ran out
        session.exec(
            update(SlackGroup)
            .values(claimed_until=utcnow() - HOUR)
            .where(col(SlackGroup.claimed_by) == "run:1")
        )
    assert groups.claim_due("T1", keys, timedelta(0), HOUR, "worker:2", later) == ["channel:CENG"]


def test_a_restriction_is_one_more_clause_of_every_documents_access() -> None:
    narrowed = restriction({"restricted_to": ["channel:CENG", "usergroup:SSRE"]})
    assert narrowed == {slack_principal("channel:CENG"), "slack:usergroup:SSRE"}
    assert restriction({}) is None and restriction({"restricted_to": []}) is None
    public = DocumentAccess.public().also(narrowed)
    assert public.readable_by({"slack:channel:CENG"}) and not public.readable_by({"7:user:ada"})
    both = DocumentAccess.restricted({"7:user:ada"}).also(narrowed)
    assert both.readable_by({"7:user:ada", "slack:usergroup:SSRE"})
    assert not both.readable_by({"7:user:ada"}) and not both.readable_by({"slack:channel:CENG"})
    assert DocumentAccess.nobody().also(narrowed).unknown
    assert DocumentAccess.public().also(None).is_public
