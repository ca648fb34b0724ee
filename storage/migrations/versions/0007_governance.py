"""governance: who added a document, a conversation's settings lock, channels shared with
another organisation, a partner user's own organisation, guests, documents-only indexes

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op


revision = '0007'
down_revision = '0006'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('user', schema=None) as batch_op:
        batch_op.add_column(sa.Column('home_team', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True))
        batch_op.add_column(sa.Column('is_guest', sa.Boolean(), nullable=False, server_default=sa.false()))

    with op.batch_alter_table('channel', schema=None) as batch_op:
        batch_op.add_column(
            sa.Column('is_shared_externally', sa.Boolean(), nullable=False, server_default=sa.false())
        )

    with op.batch_alter_table('conversation', schema=None) as batch_op:
        batch_op.add_column(sa.Column('settings_locked', sa.Boolean(), nullable=False, server_default=sa.false()))

    with op.batch_alter_table('knowledge_index', schema=None) as batch_op:
        batch_op.add_column(sa.Column('documents_only', sa.Boolean(), nullable=False, server_default=sa.false()))

    with op.batch_alter_table('document', schema=None) as batch_op:
        batch_op.add_column(sa.Column('added_by', sa.Integer(), nullable=True))
        batch_op.create_foreign_key('fk_document_added_by_user', 'user', ['added_by'], ['id'])


def downgrade() -> None:
    with op.batch_alter_table('document', schema=None) as batch_op:
        batch_op.drop_constraint('fk_document_added_by_user', type_='foreignkey')
        batch_op.drop_column('added_by')

    with op.batch_alter_table('knowledge_index', schema=None) as batch_op:
        batch_op.drop_column('documents_only')

    with op.batch_alter_table('conversation', schema=None) as batch_op:
        batch_op.drop_column('settings_locked')

    with op.batch_alter_table('channel', schema=None) as batch_op:
        batch_op.drop_column('is_shared_externally')

    with op.batch_alter_table('user', schema=None) as batch_op:
        batch_op.drop_column('is_guest')
        batch_op.drop_column('home_team')
