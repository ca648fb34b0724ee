"""API keys: issued once, stored as a sha256 hash, looked up by the secret, revoked by id or name.

A secret looks like `lore_<43 url-safe characters>` (256 random bits). Only its hash and its
first characters (`prefix`, for people to tell keys apart) are stored, so a leaked database
gives away no usable key.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import update
from sqlalchemy.exc import IntegrityError
from sqlmodel import col, select

from storage.db import Database
from storage.models import ApiKey, utcnow
from storage.records import NameTaken, NotFound, StorageError
from storage.repositories._rows import aware

SECRET_PREFIX = "lore_"  # noqa: S105 - the prefix every secret starts with, not a secret
SHOWN_CHARACTERS = 12
TOUCH_EVERY = timedelta(minutes=1)
"""`last_used_at` is written at most this often per key, not on every request."""


class AmbiguousKey(StorageError):
    """A name given to revoke matches keys of several tenants; the message lists their ids."""


@dataclass(frozen=True)
class ApiKeyRef:
    id: int
    tenant_id: str
    name: str
    prefix: str
    user_id: int | None
    created_at: datetime
    revoked_at: datetime | None
    last_used_at: datetime | None
    reads_audit: bool = False
    """May read its workspace's audit log (a SIEM's key)."""

    @property
    def active(self) -> bool:
        return self.revoked_at is None


@dataclass(frozen=True)
class IssuedKey:
    """A new key and its secret; the secret exists nowhere else, show it once."""

    key: ApiKeyRef
    secret: str


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


class ApiKeyRepository:
    def __init__(self, db: Database) -> None:
        self._db = db

    def create(
        self, tenant_id: str, name: str, *, user_id: int | None = None, reads_audit: bool = False
    ) -> IssuedKey:
        """A new key; raises `NameTaken` if the tenant has an active key of that name."""
        secret = SECRET_PREFIX + secrets.token_urlsafe(32)
        with self._db.session() as session:
            clash = session.exec(
                select(ApiKey).where(
                    ApiKey.tenant_id == tenant_id,
                    ApiKey.name == name,
                    col(ApiKey.revoked_at).is_(None),
                )
            ).first()
            if clash is not None:
                raise NameTaken(f"tenant {tenant_id} already has an active API key named {name!r}")
            row = ApiKey(
                tenant_id=tenant_id,
                name=name,
                key_hash=hash_secret(secret),
                prefix=secret[:SHOWN_CHARACTERS],
                user_id=user_id,
                reads_audit=reads_audit,
            )
            session.add(row)
            try:
                session.flush()
            except IntegrityError:
                raise NotFound(f"no tenant {tenant_id!r} (or no such user) to create a key for") from None
            return IssuedKey(_ref(row), secret)

    def authenticate(self, secret: str) -> ApiKeyRef | None:
        """The active key whose secret this is, or None; notes when it was last used."""
        if not secret.startswith(SECRET_PREFIX):
            return None
        with self._db.session() as session:
            row = session.exec(select(ApiKey).where(ApiKey.key_hash == hash_secret(secret))).first()
            if row is None or row.revoked_at is not None:
                return None
            now = utcnow()
            last = aware(row.last_used_at)
            if last is None or now - last >= TOUCH_EVERY:
                session.exec(update(ApiKey).where(col(ApiKey.id) == row.id).values(last_used_at=now))
                row.last_used_at = now
            return _ref(row)

    def get(self, key_id: int) -> ApiKeyRef:
        with self._db.session() as session:
            row = session.get(ApiKey, key_id)
            if row is None:
                raise NotFound(f"no API key with id {key_id}")
            return _ref(row)

    def list_keys(self, tenant_id: str | None = None) -> list[ApiKeyRef]:
        """Every key (of one tenant, if given), oldest first, revoked ones included."""
        query = select(ApiKey).order_by(col(ApiKey.id))
        if tenant_id is not None:
            query = query.where(ApiKey.tenant_id == tenant_id)
        with self._db.session() as session:
            return [_ref(row) for row in session.exec(query).all()]

    def revoke(self, id_or_name: str, *, tenant_id: str | None = None) -> ApiKeyRef:
        """Revoke the key with this id, or the active key with this name. Raises `NotFound`,
        or `AmbiguousKey` when the name is used in several tenants and none was given."""
        row = self._find(id_or_name, tenant_id)
        if row.revoked_at is None:
            with self._db.session() as session:
                session.exec(update(ApiKey).where(col(ApiKey.id) == row.id).values(revoked_at=utcnow()))
        return self.get(row.id or 0)

    def _find(self, id_or_name: str, tenant_id: str | None) -> ApiKey:
        with self._db.session() as session:
            if id_or_name.isdigit():
                row = session.get(ApiKey, int(id_or_name))
                if row is not None and tenant_id in (None, row.tenant_id):
                    return row
            query = select(ApiKey).where(ApiKey.name == id_or_name, col(ApiKey.revoked_at).is_(None))
            if tenant_id is not None:
                query = query.where(ApiKey.tenant_id == tenant_id)
            rows = list(session.exec(query).all())
        if not rows:
            raise NotFound(f"no active API key with id or name {id_or_name!r}")
        if len(rows) > 1:
            found = ", ".join(f"{r.id} ({r.tenant_id})" for r in rows)
            raise AmbiguousKey(f"several keys are named {id_or_name!r}: {found}; revoke one by its id")
        return rows[0]


def _ref(row: ApiKey) -> ApiKeyRef:
    assert row.id is not None, "API key read from the database has no id"
    return ApiKeyRef(
        id=row.id,
        tenant_id=row.tenant_id,
        name=row.name,
        prefix=row.prefix,
        user_id=row.user_id,
        created_at=aware(row.created_at),
        revoked_at=aware(row.revoked_at),
        last_used_at=aware(row.last_used_at),
        reads_audit=row.reads_audit,
    )
