"""indexing jobs

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op


revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('indexing_job_page',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('job_id', sa.Integer(), nullable=False),
    sa.Column('url', sqlmodel.sql.sqltypes.AutoString(length=2048), nullable=False),
    sa.Column('outcome', sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
    sa.Column('links', sa.JSON(), nullable=False),
    sa.Column('at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['job_id'], ['indexing_job.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('job_id', 'url')
    )
    with op.batch_alter_table('indexing_job_page', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_indexing_job_page_job_id'), ['job_id'], unique=False)

    with op.batch_alter_table('indexing_job', schema=None) as batch_op:
        batch_op.add_column(sa.Column('conversation_id', sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column('trigger', sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False, server_default='manual'))
        batch_op.add_column(sa.Column('cancel_requested', sa.Boolean(), nullable=False, server_default=sa.false()))
        batch_op.create_index(batch_op.f('ix_indexing_job_conversation_id'), ['conversation_id'], unique=False)
        batch_op.create_foreign_key('fk_indexing_job_conversation_id', 'conversation', ['conversation_id'], ['id'])



def downgrade() -> None:
    with op.batch_alter_table('indexing_job', schema=None) as batch_op:
        batch_op.drop_constraint('fk_indexing_job_conversation_id', type_='foreignkey')
        batch_op.drop_index(batch_op.f('ix_indexing_job_conversation_id'))
        batch_op.drop_column('cancel_requested')
        batch_op.drop_column('trigger')
        batch_op.drop_column('conversation_id')

    with op.batch_alter_table('indexing_job_page', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_indexing_job_page_job_id'))

    op.drop_table('indexing_job_page')
