"""chunks record their quotable units, read once at ingest

A chunk's sentences, list items and code blocks were read from its markup at every question;
ingest now reads them once (`knowledge.indexing.units`) and stores them here, as JSON.
Existing chunks keep NULL until the repair at start reads them (`Ingestor.repair`): reading
them is the engine's work, which a migration of storage/ does not import.

Revision ID: 0022
Revises: 0020
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op


revision = '0022'
down_revision = '0020'
branch_labels = None
depends_on = None


WITHOUT_UNITS = sa.text('units IS NULL')


def upgrade() -> None:
    with op.batch_alter_table('chunk', schema=None) as batch_op:
        batch_op.add_column(sa.Column('units', sa.Text(), nullable=True))
    # Only the chunks still to read: empty once the repair read them, so every start's look
    # for them (`DocumentRepository.without_units`) reads nothing, however many chunks there are.
    op.create_index(
        'ix_chunk_without_units',
        'chunk',
        ['document_id'],
        sqlite_where=WITHOUT_UNITS,
        postgresql_where=WITHOUT_UNITS,
    )


def downgrade() -> None:
    op.drop_index('ix_chunk_without_units', table_name='chunk')
    with op.batch_alter_table('chunk', schema=None) as batch_op:
        batch_op.drop_column('units')
