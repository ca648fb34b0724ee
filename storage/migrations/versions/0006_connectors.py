"""connectors: a doc source's API root and masked credentials hint; a connector
attachment's sync cursor and last full listing

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op


revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('doc_source', schema=None) as batch_op:
        batch_op.add_column(sa.Column('base_url', sqlmodel.sql.sqltypes.AutoString(length=2048), nullable=True))
        batch_op.add_column(sa.Column('credentials_hint', sqlmodel.sql.sqltypes.AutoString(length=255), nullable=True))

    with op.batch_alter_table('doc_source_config', schema=None) as batch_op:
        batch_op.add_column(sa.Column('sync_cursor', sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column('last_full_sync_at', sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('doc_source_config', schema=None) as batch_op:
        batch_op.drop_column('last_full_sync_at')
        batch_op.drop_column('sync_cursor')

    with op.batch_alter_table('doc_source', schema=None) as batch_op:
        batch_op.drop_column('credentials_hint')
        batch_op.drop_column('base_url')
