"""many processes on one database: document leases, job claims, one active job per source,
one index per channel, the deployment id, keyword search bounded on PostgreSQL

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-27
"""

from __future__ import annotations

import secrets
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0016"
branch_labels = None
depends_on = None

ACTIVE_JOB = "state IN ('queued', 'running', 'interrupted') AND source_config_id IS NOT NULL"
OWNED_ONCE = "scope IN ('channel', 'personal')"


def upgrade() -> None:
    op.create_table(
        "deployment",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("legacy_collections_adopted", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    bind = op.get_bind()
    existing = bind.execute(sa.text("SELECT count(*) FROM knowledge_index")).scalar_one()
    bind.execute(
        sa.text(
            "INSERT INTO deployment (id, legacy_collections_adopted, created_at) VALUES (:id, :adopted, :now)"
        ),
        {"id": secrets.token_hex(6), "adopted": existing == 0, "now": datetime.now(UTC)},
    )
    with op.batch_alter_table("document", schema=None) as batch_op:
        batch_op.add_column(sa.Column("writer", sa.String(length=128), nullable=True))
        batch_op.add_column(sa.Column("lease_expires_at", sa.DateTime(timezone=True), nullable=True))
    with op.batch_alter_table("indexing_job", schema=None) as batch_op:
        batch_op.add_column(sa.Column("claim", sa.String(length=32), nullable=True))
    _one_active_job_per_source(bind)
    _one_index_per_owner(bind)
    op.create_index(
        "ux_indexing_job_active_source",
        "indexing_job",
        ["source_config_id"],
        unique=True,
        sqlite_where=sa.text(ACTIVE_JOB),
        postgresql_where=sa.text(ACTIVE_JOB),
    )
    op.create_index(
        "ux_knowledge_index_owner",
        "knowledge_index",
        ["tenant_id", "owner_key"],
        unique=True,
        sqlite_where=sa.text(OWNED_ONCE),
        postgresql_where=sa.text(OWNED_ONCE),
    )
    if bind.dialect.name == "postgresql":
        _keyword_search_bounded(bind)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("ALTER TABLE chunk RESET (toast_tuple_target)")
        op.execute("DROP INDEX IF EXISTS ix_chunk_tsv")
        op.execute("CREATE INDEX ix_chunk_tsv ON chunk USING GIN (tsv)")
    op.drop_index("ux_knowledge_index_owner", table_name="knowledge_index")
    op.drop_index("ux_indexing_job_active_source", table_name="indexing_job")
    # In place (SQLite 3.35+ and PostgreSQL alike): a batch copy of these tables would drop
    # them, which SQLite refuses while other tables' foreign keys point at their rows.
    for table, column in (("indexing_job", "claim"), ("document", "lease_expires_at"), ("document", "writer")):
        op.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
    op.drop_table("deployment")


def _one_active_job_per_source(bind: sa.Connection) -> None:
    """Jobs queued twice for one source (refreshes scheduled by two workers at once): the
    oldest stays, the others are cancelled."""
    duplicates = bind.execute(
        sa.text(
            f"SELECT id FROM indexing_job AS j WHERE {ACTIVE_JOB} AND EXISTS ("  # noqa: S608 (constant)
            "SELECT 1 FROM indexing_job AS o WHERE o.source_config_id = j.source_config_id "
            "AND o.state IN ('queued', 'running', 'interrupted') AND o.id < j.id)"
        )
    ).scalars()
    for job_id in list(duplicates):
        bind.execute(
            sa.text("UPDATE indexing_job SET state = 'cancelled', error = :why WHERE id = :id"),
            {"id": job_id, "why": "a second job for the same source (cancelled at upgrade)"},
        )


def _one_index_per_owner(bind: sa.Connection) -> None:
    """A channel given two indexes by two replicas at once (or a user two personal ones): the
    oldest stays the channel's own; the others keep their documents, their scope and their
    channel (so who may see them does not change) under an owner key of their own."""
    duplicates = bind.execute(
        sa.text(
            f"SELECT id, owner_key FROM knowledge_index AS i WHERE {OWNED_ONCE} AND EXISTS ("  # noqa: S608
            "SELECT 1 FROM knowledge_index AS o WHERE o.tenant_id = i.tenant_id "
            "AND o.owner_key = i.owner_key AND o.scope = i.scope AND o.id < i.id)"
        )
    ).all()
    for index_id, key in duplicates:
        bind.execute(
            sa.text("UPDATE knowledge_index SET owner_key = :key WHERE id = :id"),
            {"id": index_id, "key": f"{key}:extra-{index_id}"[:80]},
        )


def _keyword_search_bounded(bind: sa.Connection) -> None:
    """PostgreSQL's keyword index reads one index's postings of a term (a GIN index on
    `(index_id, tsv)`, with the `btree_gin` extension that ships with PostgreSQL; where it
    cannot be created, the index on `tsv` alone stays), and chunk rows keep their text and
    `tsv` out of line, so reading a posting's row is a small read (`toast_tuple_target`;
    rows written before keep their layout until the table is rewritten)."""
    try:
        with bind.begin_nested():
            bind.execute(sa.text("CREATE EXTENSION IF NOT EXISTS btree_gin"))
    except sa.exc.DBAPIError:  # not installed, or not ours to create: the plain index stays
        pass
    else:
        bind.execute(sa.text("DROP INDEX IF EXISTS ix_chunk_tsv"))
        bind.execute(sa.text("CREATE INDEX ix_chunk_tsv ON chunk USING GIN (index_id, tsv)"))
    bind.execute(sa.text("ALTER TABLE chunk SET (toast_tuple_target = 128)"))
