"""The members of the Slack channels and user groups that connector attachments are
restricted to (`lore access restrict`), as Lore last read them from Slack, and when.

A group is keyed `channel:C…` or `usergroup:S…` within its workspace. A read that failed
leaves the group with no members (fail closed: nobody reads through it until a read
succeeds) and says why.
"""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import suppress
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import update
from sqlalchemy.exc import IntegrityError
from sqlmodel import col, delete, select

from storage.db import Database
from storage.models import SlackGroup, SlackGroupMember, utcnow
from storage.repositories._rows import aware


@dataclass(frozen=True)
class GroupState:
    """When a group's members were last read (None: never), and why the last read failed."""

    key: str
    read_at: datetime | None
    error: str | None
    members: int

    @property
    def readable(self) -> bool:
        """Its members are known: read once at least, and not failed since."""
        return self.read_at is not None and self.error is None


class SlackGroupRepository:
    def __init__(self, db: Database) -> None:
        self._db = db

    def replace(
        self, tenant_id: str, key: str, members: Iterable[str] | None, error: str | None = None
    ) -> None:
        """The group's members as a read found them; with `error` (members None), none."""
        with self._db.session() as session:
            session.exec(
                delete(SlackGroupMember).where(
                    col(SlackGroupMember.tenant_id) == tenant_id, col(SlackGroupMember.group_key) == key
                )
            )
            session.flush()
            for member in sorted(set(members or ())):
                session.add(SlackGroupMember(tenant_id=tenant_id, group_key=key, user_external_id=member))
            row = session.get(SlackGroup, (tenant_id, key)) or SlackGroup(tenant_id=tenant_id, group_key=key)
            now = utcnow()
            if error is None:
                row.read_at = now
            row.error, row.failed_at = error, (now if error else None)
            row.claimed_by = row.claimed_until = None
            session.add(row)

    def groups_of(self, tenant_id: str, user_external_id: str) -> set[str]:
        """The groups of the workspace this Slack user is a member of, as last read."""
        with self._db.session() as session:
            query = select(SlackGroupMember.group_key).where(
                SlackGroupMember.tenant_id == tenant_id, SlackGroupMember.user_external_id == user_external_id
            )
            return set(session.exec(query).all())

    def state(self, tenant_id: str, key: str) -> GroupState:
        with self._db.session() as session:
            row = session.get(SlackGroup, (tenant_id, key))
            count = len(
                session.exec(
                    select(SlackGroupMember.user_external_id).where(
                        SlackGroupMember.tenant_id == tenant_id, SlackGroupMember.group_key == key
                    )
                ).all()
            )
            if row is None:
                return GroupState(key, None, None, 0)
            return GroupState(key, aware(row.read_at), row.error, count)

    def due(self, tenant_id: str, keys: Iterable[str], every: timedelta, retry_after: timedelta) -> list[str]:
        """Those of the groups not read within `every` (never read first); a failed one once
        `retry_after` passed."""
        wanted = sorted(set(keys))
        if not wanted:
            return []
        now = utcnow()
        with self._db.session() as session:
            rows = {
                r.group_key: r
                for r in session.exec(
                    select(SlackGroup).where(
                        SlackGroup.tenant_id == tenant_id, col(SlackGroup.group_key).in_(wanted)
                    )
                ).all()
            }
        found = []
        for key in wanted:
            row = rows.get(key)
            read, failed = (aware(row.read_at), aware(row.failed_at)) if row else (None, None)
            fresh = read is not None and read >= now - every
            waiting = failed is not None and failed >= now - retry_after
            if not fresh and not waiting:
                found.append(key)
        return found

    def claim_due(
        self,
        tenant_id: str,
        keys: Iterable[str],
        every: timedelta,
        retry_after: timedelta,
        worker: str,
        until: datetime,
    ) -> list[str]:
        """Those of the groups due a read (`due`) that `worker` takes, till `until` or till it
        stores what it read: each is taken by a conditional update (still due, claimed by
        nobody or by a process whose claim ran out), so of several processes on one database
        (`lore run`, `lore worker`s) one reads it."""
        now = utcnow()
        due = (
            (col(SlackGroup.read_at).is_(None) | (col(SlackGroup.read_at) < now - every))
            & (col(SlackGroup.failed_at).is_(None) | (col(SlackGroup.failed_at) < now - retry_after))
            & (col(SlackGroup.claimed_until).is_(None) | (col(SlackGroup.claimed_until) < now))
        )
        taken = []
        for key in self.due(tenant_id, keys, every, retry_after):
            with suppress(IntegrityError), self._db.session() as session:  # never read: no row yet
                if session.get(SlackGroup, (tenant_id, key)) is None:
                    session.add(SlackGroup(tenant_id=tenant_id, group_key=key))
            with self._db.session() as session:
                claimed = session.exec(
                    update(SlackGroup)
                    .where(col(SlackGroup.tenant_id) == tenant_id, col(SlackGroup.group_key) == key, due)
                    .values(claimed_by=worker, claimed_until=until)
                )
                if claimed.rowcount:
                    taken.append(key)
        return taken

    def forget_unused(self, tenant_id: str, keep: Iterable[str]) -> None:
        """Forget the groups (and members) of the workspace that no restriction names now."""
        kept = sorted(set(keep))
        with self._db.session() as session:
            for table in (SlackGroupMember, SlackGroup):
                query = delete(table).where(col(table.tenant_id) == tenant_id)
                if kept:
                    query = query.where(col(table.group_key).not_in(kept))
                session.exec(query)
