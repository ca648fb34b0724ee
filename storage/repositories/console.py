"""The console's sign-in links and sessions. Only hashes of their secrets are stored, so a
copy of the database opens no session; a link works once, before it expires."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import update
from sqlmodel import col

from storage.db import Database
from storage.models import ConsoleGrant, ConsoleSession, utcnow
from storage.repositories._rows import aware


@dataclass(frozen=True)
class Grant:
    """Who a one-time link signs in: a person of a workspace, by Slack user id (or shell name)."""

    tenant_id: str
    user_external_id: str


@dataclass(frozen=True)
class SessionRecord:
    tenant_id: str
    user_id: int
    csrf: str
    via: str
    expires_at: datetime


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


class ConsoleAccess:
    def __init__(self, db: Database) -> None:
        self._db = db

    def grant(self, tenant_id: str, user_external_id: str, *, lasts: timedelta) -> str:
        """A new one-time link's secret (shown once, kept only as a hash)."""
        secret = secrets.token_urlsafe(32)
        with self._db.session() as session:
            session.add(
                ConsoleGrant(
                    token_hash=digest(secret),
                    tenant_id=tenant_id,
                    user_external_id=user_external_id,
                    expires_at=utcnow() + lasts,
                )
            )
        return secret

    def redeem(self, secret: str) -> Grant | None:
        """Who the link signs in, once (None: unknown, used or expired). Atomic: of two
        uses at once, one wins."""
        hashed, now = digest(secret), utcnow()
        with self._db.session() as session:
            result = session.execute(
                update(ConsoleGrant)
                .where(col(ConsoleGrant.token_hash) == hashed)
                .where(col(ConsoleGrant.used_at).is_(None))
                .where(col(ConsoleGrant.expires_at) > now)
                .values(used_at=now)
            )
            if getattr(result, "rowcount", 0) != 1:
                return None
            row = session.get(ConsoleGrant, hashed)
            assert row is not None
            return Grant(row.tenant_id, row.user_external_id)

    def open_session(
        self, tenant_id: str, user_id: int, *, via: str, lasts: timedelta
    ) -> tuple[str, SessionRecord]:
        """A new session: its secret (for the cookie) and what it holds."""
        secret = secrets.token_urlsafe(32)
        row = ConsoleSession(
            id_hash=digest(secret),
            tenant_id=tenant_id,
            user_id=user_id,
            csrf=secrets.token_urlsafe(32),
            via=via,
            expires_at=utcnow() + lasts,
        )
        with self._db.session() as session:
            session.add(row)
            session.flush()
            return secret, _session(row)

    def session(self, secret: str) -> SessionRecord | None:
        """The live session of that secret (None: unknown, ended or expired)."""
        with self._db.session() as session:
            row = session.get(ConsoleSession, digest(secret))
            if row is None or row.ended_at is not None or aware(row.expires_at) <= utcnow():
                return None
            return _session(row)

    def end(self, secret: str) -> None:
        with self._db.session() as session:
            session.execute(
                update(ConsoleSession)
                .where(col(ConsoleSession.id_hash) == digest(secret))
                .values(ended_at=utcnow())
            )


def _session(row: ConsoleSession) -> SessionRecord:
    return SessionRecord(row.tenant_id, row.user_id, row.csrf, row.via, aware(row.expires_at))
