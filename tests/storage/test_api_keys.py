"""API keys in storage: only a hash is kept, secrets authenticate until revoked."""

from __future__ import annotations

import pytest
from sqlmodel import select

from storage.db import Database
from storage.models import ApiKey
from storage.records import NameTaken, NotFound
from storage.repositories.api_keys import AmbiguousKey, ApiKeyRepository, hash_secret
from storage.repositories.directory import Directory


@pytest.fixture
def keys(database: Database) -> ApiKeyRepository:
    directory = Directory(database)
    for tenant in ("T1", "T2"):
        directory.ensure_tenant(tenant)
    return ApiKeyRepository(database)


def test_the_secret_is_shown_once_and_stored_as_a_hash(keys: ApiKeyRepository, database: Database) -> None:
    issued = keys.create("T1", "ci")
    assert issued.secret.startswith("lore_") and len(issued.secret) >= 40
    assert issued.key.prefix == issued.secret[:12]
    with database.session() as session:
        row = session.exec(select(ApiKey)).one()
    assert row.key_hash == hash_secret(issued.secret)
    assert issued.secret not in {row.key_hash, row.prefix, row.name}


def test_a_secret_authenticates_its_key_until_it_is_revoked(keys: ApiKeyRepository) -> None:
    issued = keys.create("T1", "ci")
    found = keys.authenticate(issued.secret)
    assert found is not None and found.id == issued.key.id and found.last_used_at is not None
    assert keys.authenticate(issued.secret + "x") is None
    assert keys.authenticate("not-even-the-prefix") is None
    revoked = keys.revoke(str(issued.key.id))
    assert revoked.revoked_at is not None and not revoked.active
    assert keys.authenticate(issued.secret) is None


def test_names_are_unique_among_a_tenants_active_keys(keys: ApiKeyRepository) -> None:
    keys.create("T1", "ci")
    with pytest.raises(NameTaken):
        keys.create("T1", "ci")
    keys.create("T2", "ci")  # another tenant
    keys.revoke("ci", tenant_id="T1")
    keys.create("T1", "ci")  # a revoked key's name is free again


def test_revoking_by_a_name_several_tenants_use_asks_for_the_id(keys: ApiKeyRepository) -> None:
    one, two = keys.create("T1", "deploy"), keys.create("T2", "deploy")
    with pytest.raises(AmbiguousKey, match=f"{one.key.id} \\(T1\\), {two.key.id} \\(T2\\)"):
        keys.revoke("deploy")
    assert keys.revoke("deploy", tenant_id="T2").id == two.key.id
    assert keys.revoke("deploy").id == one.key.id  # the only active one left
    with pytest.raises(NotFound):
        keys.revoke("deploy")


def test_a_key_for_a_missing_tenant_is_refused_clearly(keys: ApiKeyRepository) -> None:
    with pytest.raises(NotFound, match="no tenant 'T9'"):
        keys.create("T9", "ghost")


def test_listing_shows_every_key_oldest_first(keys: ApiKeyRepository) -> None:
    keys.create("T1", "a")
    keys.create("T2", "b")
    keys.revoke("a")
    assert [(k.name, k.active) for k in keys.list_keys()] == [("a", False), ("b", True)]
    assert [k.name for k in keys.list_keys("T2")] == ["b"]
