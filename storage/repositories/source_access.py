"""What connected sources say about people: their accounts with emails and their groups'
members (group sync), the principals an admin granted a Lore user, who a Lore user is in
each source of their workspace (`principals`), and when each permission and group sync
last ran, failed, or is running (a claim, so that two processes never run the same one).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, func, or_
from sqlmodel import Session, col, delete, select

from storage.db import Database
from storage.models import (
    AccessGrant,
    DocSource,
    Document,
    DocumentAccessEntry,
    SourceAccount,
    SourceGroupMember,
)
from storage.repositories.sync_runs import SyncRuns


@dataclass(frozen=True)
class Person:
    """One of a source's people: its id for them, their email (lower-cased) if known."""

    account_id: str
    email: str | None = None
    name: str = ""


class SourceAccessRepository(SyncRuns):
    def __init__(self, db: Database) -> None:
        self._db = db

    # -- people and groups (group sync) -------------------------------------------------

    def known_accounts(self, source_id: int) -> set[str]:
        with self._db.session() as session:
            query = select(SourceAccount.account_id).where(SourceAccount.source_id == source_id)
            return set(session.exec(query).all())

    def save_people(self, source_id: int, people: Iterable[Person]) -> None:
        """Add or update people (an email or name already known is kept when none is given)."""
        with self._db.session() as session:
            for found in {p.account_id: p for p in people}.values():
                row = session.get(SourceAccount, (source_id, found.account_id))
                if row is None:
                    row = SourceAccount(source_id=source_id, account_id=found.account_id)
                row.email = (found.email or "").strip().lower() or row.email
                row.name = found.name or row.name
                session.add(row)

    def replace_members(
        self, source_id: int, members: Mapping[str, Iterable[str]], *, read: Iterable[str] | None = None
    ) -> None:
        """The groups' members, as a group sync found them (every group of the source that is
        not in `members` has none); the groups it read (`read`, or those of `members`) are
        remembered (`groups_read`)."""
        with self._db.session() as session:
            session.exec(delete(SourceGroupMember).where(col(SourceGroupMember.source_id) == source_id))
            session.flush()
            for group, accounts in members.items():
                for account in sorted(set(accounts)):
                    session.add(SourceGroupMember(source_id=source_id, group_name=group, account_id=account))
            source = session.get(DocSource, source_id)
            if source is not None:
                source.config = {
                    **source.config,
                    "groups_read": sorted(members if read is None else set(read)),
                }
                session.add(source)

    def groups_read(self, source_id: int) -> set[str]:
        """The groups the source's last group sync read (empty ones too)."""
        with self._db.session() as session:
            source = session.get(DocSource, source_id)
            return set(source.config.get("groups_read") or ()) if source is not None else set()

    def referenced(self, source_id: int) -> set[str]:
        """The principals of the source that documents' access names (`7:group:finance` …)."""
        with self._db.session() as session:
            query = select(DocumentAccessEntry.principal).where(
                col(DocumentAccessEntry.principal).startswith(f"{source_id}:", autoescape=True)
            )
            return set(session.exec(query.distinct()).all())

    def forget_source(self, source_id: int) -> None:
        """Everything known of the source's people (it is being disconnected)."""
        with self._db.session() as session:
            session.exec(delete(SourceGroupMember).where(col(SourceGroupMember.source_id) == source_id))
            session.exec(delete(SourceAccount).where(col(SourceAccount.source_id) == source_id))

    # -- who someone is in the sources ------------------------------------------------------

    def principals(self, tenant_id: str, user_id: int | None, email: str | None) -> frozenset[str]:
        """Every principal a Lore user holds: in each connected source of their workspace,
        the account with their email and the accounts an admin mapped them to (granted), with
        those accounts' groups, and their email's domain where documents name it
        (`7:domain:acme.com`); and whatever else admins granted them."""
        found: set[str] = set()
        with self._db.session() as session:
            accounts = _accounts_by_email(session, tenant_id, email) if email else []
            if user_id is not None:
                grants = session.exec(
                    select(AccessGrant.principal).where(AccessGrant.user_id == user_id)
                ).all()
                found.update(grants)
                accounts += _granted_accounts(grants)
            found.update(f"{source_id}:user:{account}" for source_id, account in accounts)
            if email and "@" in email:
                found.update(self._domains(session, tenant_id, email))
            if accounts:
                found.update(_groups(session, accounts))
        return frozenset(found)

    @staticmethod
    def _domains(session: Any, tenant_id: str, email: str) -> set[str]:
        """The domain of a confirmed email (`7:domain:acme.com`: Google Drive's "anyone at
        acme.com") in each source of the workspace whose documents' access names it."""
        domain = email.strip().lower().rpartition("@")[2]
        sources = session.exec(select(DocSource.id).where(DocSource.tenant_id == tenant_id)).all()
        if not sources:
            return set()
        wanted = [f"{source_id}:domain:{domain}" for source_id in sources]
        named = select(DocumentAccessEntry.principal).where(col(DocumentAccessEntry.principal).in_(wanted))
        return set(session.exec(named.distinct()).all())

    def accounts_with_email(self, tenant_id: str, email: str) -> list[tuple[int, str]]:
        """(source id, account id) of the people of the workspace's sources with this email."""
        with self._db.session() as session:
            return [(int(s), str(a)) for s, a in _accounts_by_email(session, tenant_id, email)]

    # -- grants -----------------------------------------------------------------------------

    def grant(self, user_id: int, principal: str, *, granted_by: int | None = None) -> bool:
        """Grant a principal; False when it was already granted."""
        with self._db.session() as session:
            if session.get(AccessGrant, (user_id, principal)) is not None:
                return False
            session.add(AccessGrant(user_id=user_id, principal=principal, granted_by=granted_by))
            return True

    def revoke(self, user_id: int, principal: str) -> bool:
        with self._db.session() as session:
            row = session.get(AccessGrant, (user_id, principal))
            if row is None:
                return False
            session.delete(row)
            return True

    def grants(self, user_id: int) -> list[str]:
        with self._db.session() as session:
            query = select(AccessGrant.principal).where(AccessGrant.user_id == user_id)
            return sorted(session.exec(query).all())

    def mappings(self, source_ids: Iterable[int]) -> list[tuple[int, str]]:
        """(Lore user id, principal) of every person mapped to an account of those sources
        (a `N:user:ACCOUNT` grant), by source then account."""
        prefixes = [f"{source_id}:user:" for source_id in source_ids]
        if not prefixes:
            return []
        with self._db.session() as session:
            query = select(AccessGrant.user_id, AccessGrant.principal).where(
                or_(*(col(AccessGrant.principal).startswith(p, autoescape=True) for p in prefixes))
            )
            return sorted(((int(u), str(p)) for u, p in session.exec(query).all()), key=lambda r: r[1])

    def unmap(self, user_id: int, source_id: int) -> list[str]:
        """Take back every account of the source a person was mapped to; the principals removed."""
        with self._db.session() as session:
            rows = session.exec(
                select(AccessGrant).where(
                    AccessGrant.user_id == user_id,
                    col(AccessGrant.principal).startswith(f"{source_id}:user:", autoescape=True),
                )
            ).all()
            for row in rows:
                session.delete(row)
            return sorted(row.principal for row in rows)

    def restricted_count(self, config_id: int) -> int:
        """How many documents of the attachment its source restricts (or whose access is unknown)."""
        with self._db.session() as session:
            query = select(func.count(col(Document.id))).where(
                Document.source_config_id == config_id, Document.access_clauses != 0
            )
            return int(session.exec(query).one())


def _accounts_by_email(session: Session, tenant_id: str, email: str) -> list[tuple[int, str]]:
    """(source id, account id) of the people of the workspace's sources with this email."""
    rows = session.exec(
        select(SourceAccount.source_id, SourceAccount.account_id)
        .join(DocSource, col(DocSource.id) == SourceAccount.source_id)
        .where(DocSource.tenant_id == tenant_id, SourceAccount.email == email.strip().lower())
    ).all()
    return list(rows)


def _granted_accounts(grants: Iterable[str]) -> list[tuple[int, str]]:
    """The source accounts among granted principals (`7:user:<account>`)."""
    accounts = []
    for granted in grants:
        source, _, rest = granted.partition(":")
        kind, _, account = rest.partition(":")
        if source.isdigit() and kind == "user" and account:
            accounts.append((int(source), account))
    return accounts


def _groups(session: Session, accounts: Sequence[tuple[int, str]]) -> set[str]:
    """The groups (`7:group:<name>`) these source accounts are members of."""
    memberships = session.exec(
        select(SourceGroupMember.source_id, SourceGroupMember.group_name).where(
            or_(
                *(
                    and_(
                        col(SourceGroupMember.source_id) == source_id,
                        col(SourceGroupMember.account_id) == account,
                    )
                    for source_id, account in accounts
                )
            )
        )
    ).all()
    return {f"{source_id}:group:{group}" for source_id, group in memberships}
