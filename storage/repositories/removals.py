"""Workspaces Lore was removed from: their removals, scheduled, cancelled, claimed, and the
purge of every row a workspace owns.

Which rows a tenant owns is read from the schema itself, not listed by hand: a table with a
`tenant_id` column holds the tenant's rows by that column; any other table holds those whose
foreign keys point at the tenant's rows (a chunk through its index, a job's log through its
job). So a table added later is purged too, with no change here. Slack's installation rows
of the workspace (normally gone already, dropped when Lore was uninstalled) go with them.

On SQLite the purge overwrites what it deletes (`secure_delete`), the keyword index is
merged so no segment keeps the words of deleted passages, and the write-ahead log is
truncated: a removed workspace's text is not left in the database's files.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import ColumnElement, Connection, MetaData, Table, false, or_, text, update
from sqlalchemy import select as sa_select
from sqlmodel import SQLModel, col, select

from storage.db import Database
from storage.keyword import KeywordIndex
from storage.models import Tenant, TenantRemoval
from storage.repositories._rows import aware
from storage.schema import SLACK_BOTS, SLACK_INSTALLATIONS
from storage.values import utcnow


@dataclass(frozen=True)
class Removal:
    """A scheduled (or done) removal of one workspace's data."""

    id: int
    tenant_id: str
    enterprise_id: str | None
    reason: str
    requested_at: datetime
    purge_after: datetime
    purged_at: datetime | None
    removed: dict[str, int]


class Removals:
    def __init__(self, db: Database) -> None:
        self._db = db

    def note_enterprise(self, tenant_id: str, enterprise_id: str | None) -> None:
        """Remember the Enterprise Grid organisation a tenant is reached through (an
        org-wide install), so that uninstalling from the organisation finds its workspaces."""
        with self._db.session() as session:
            session.execute(
                update(Tenant)
                .where(col(Tenant.id) == tenant_id)
                .where(or_(col(Tenant.enterprise_id).is_(None), col(Tenant.enterprise_id) != enterprise_id))
                .values(enterprise_id=enterprise_id)
            )

    def enterprise_of(self, tenant_id: str) -> str | None:
        with self._db.session() as session:
            row = session.get(Tenant, tenant_id)
            return row.enterprise_id if row is not None else None

    def tenants_of(self, enterprise_id: str) -> list[str]:
        with self._db.session() as session:
            found = session.exec(select(Tenant.id).where(col(Tenant.enterprise_id) == enterprise_id)).all()
            return sorted(found)

    def schedule(
        self, tenant_id: str, *, reason: str, grace: timedelta, enterprise_id: str | None = None
    ) -> Removal:
        """The workspace's pending removal, scheduled `grace` from now (an existing pending
        one is kept as it is: a second notice of one uninstall does not postpone it)."""
        with self._db.session() as session:
            pending = session.exec(
                select(TenantRemoval)
                .where(TenantRemoval.tenant_id == tenant_id)
                .where(col(TenantRemoval.purged_at).is_(None))
                .where(col(TenantRemoval.cancelled_at).is_(None))
            ).first()
            row = pending
            if row is None:
                now = utcnow()
                row = TenantRemoval(
                    tenant_id=tenant_id,
                    enterprise_id=enterprise_id,
                    reason=reason,
                    requested_at=now,
                    purge_after=now + grace,
                )
                session.add(row)
                session.flush()
            return _removal(row)

    def cancel(self, tenant_ids: Sequence[str]) -> int:
        """Lore was installed again: the pending removals of these workspaces are called off.
        How many were."""
        if not tenant_ids:
            return 0
        with self._db.session() as session:
            result = session.execute(
                update(TenantRemoval)
                .where(col(TenantRemoval.tenant_id).in_(list(tenant_ids)))
                .where(col(TenantRemoval.purged_at).is_(None))
                .where(col(TenantRemoval.cancelled_at).is_(None))
                .values(cancelled_at=utcnow())
            )
            return int(getattr(result, "rowcount", 0) or 0)

    def pending(self, tenant_id: str) -> Removal | None:
        with self._db.session() as session:
            found = session.exec(
                select(TenantRemoval)
                .where(TenantRemoval.tenant_id == tenant_id)
                .where(col(TenantRemoval.purged_at).is_(None))
                .where(col(TenantRemoval.cancelled_at).is_(None))
            ).first()
            return _removal(found) if found is not None else None

    def history(self, tenant_id: str) -> list[Removal]:
        """Every removal of the workspace, done or not, oldest first (the audit record)."""
        with self._db.session() as session:
            rows = session.exec(
                select(TenantRemoval)
                .where(TenantRemoval.tenant_id == tenant_id)
                .order_by(col(TenantRemoval.id))
            ).all()
            return [_removal(row) for row in rows]

    def claim_due(self, worker: str, *, stale: timedelta) -> list[Removal]:
        """The removals whose grace period is over, each claimed by `worker` (one worker
        purges a workspace; a claim older than `stale` was abandoned and is taken over)."""
        now = utcnow()
        with self._db.session() as session:
            rows = session.exec(
                select(TenantRemoval.id)
                .where(col(TenantRemoval.purge_after) <= now)
                .where(col(TenantRemoval.purged_at).is_(None))
                .where(col(TenantRemoval.cancelled_at).is_(None))
            ).all()
        claimed = []
        for removal_id in rows:
            with self._db.session() as session:
                result = session.execute(
                    update(TenantRemoval)
                    .where(col(TenantRemoval.id) == removal_id)
                    .where(col(TenantRemoval.purged_at).is_(None))
                    .where(col(TenantRemoval.cancelled_at).is_(None))
                    .where(
                        or_(
                            col(TenantRemoval.claimed_at).is_(None),
                            col(TenantRemoval.claimed_at) < now - stale,
                        )
                    )
                    .values(claimed_by=worker, claimed_at=now)
                )
                if getattr(result, "rowcount", 0) == 1:
                    row = session.get(TenantRemoval, removal_id)
                    assert row is not None
                    claimed.append(_removal(row))
        return claimed

    def purge_rows(self, tenant_id: str) -> dict[str, int]:
        """Delete every row the tenant owns, in one transaction; the rows deleted per table."""
        tables = owned_rows(SQLModel.metadata, tenant_id)
        removed: dict[str, int] = {}
        with self._db.engine.connect() as connection:
            # SQLite's pragmas go straight to the driver's connection (autocommit), outside
            # the transaction SQLAlchemy would otherwise begin for them; each connection
            # already overwrites what it deletes (`secure_delete`, set in `storage.db`).
            raw = connection.connection.driver_connection if connection.dialect.name == "sqlite" else None
            with connection.begin():
                for table, owned in tables:
                    count = connection.execute(table.delete().where(owned)).rowcount
                    if count:
                        removed[table.name] = int(count)
                removed.update(_slack_rows(connection, tenant_id))
            if raw is not None:
                KeywordIndex.merge(connection)
                raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return removed

    def record_purge(self, removal_id: int, removed: dict[str, int]) -> Removal:
        with self._db.session() as session:
            row = session.get(TenantRemoval, removal_id)
            assert row is not None
            row.purged_at = utcnow()
            row.removed = dict(removed)
            session.add(row)
            session.flush()
            return _removal(row)


def owned_rows(metadata: MetaData, tenant_id: str) -> list[tuple[Table, ColumnElement[bool]]]:
    """Each table holding rows of the tenant, children before parents (the order they can
    be deleted in), with the condition that picks the tenant's rows."""
    owned: dict[str, ColumnElement[bool]] = {}
    for table in metadata.sorted_tables:  # parents first
        if table.name == Tenant.__tablename__:
            owned[table.name] = table.c.id == tenant_id
        elif "tenant_id" in table.c and table.name != TenantRemoval.__tablename__:
            owned[table.name] = table.c.tenant_id == tenant_id
        else:
            through = [
                key.parent.in_(sa_select(key.column).where(owned[key.column.table.name]))
                for key in table.foreign_keys
                if key.column.table.name in owned
            ]
            if through:
                owned[table.name] = or_(false(), *through)
    return [(table, owned[table.name]) for table in reversed(metadata.sorted_tables) if table.name in owned]


def _slack_rows(connection: Connection, tenant_id: str) -> dict[str, int]:
    """Slack's installation rows of a single-workspace install of `tenant_id` (an org-wide
    install belongs to the organisation, not to one of its workspaces)."""
    removed = {}
    for name in (SLACK_INSTALLATIONS, SLACK_BOTS):
        result = connection.execute(
            text(f"DELETE FROM {name} WHERE team_id = :team AND is_enterprise_install = :no"),  # noqa: S608
            {"team": tenant_id, "no": False},
        )
        if result.rowcount:
            removed[name] = int(result.rowcount)
    return removed


def _removal(row: TenantRemoval) -> Removal:
    assert row.id is not None
    return Removal(
        id=row.id,
        tenant_id=row.tenant_id,
        enterprise_id=row.enterprise_id,
        reason=row.reason,
        requested_at=aware(row.requested_at),
        purge_after=aware(row.purge_after),
        purged_at=aware(row.purged_at),
        removed=dict(row.removed or {}),
    )
