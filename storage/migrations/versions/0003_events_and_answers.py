"""events and answers

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op


revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None


def upgrade() -> None:

    op.create_table('processed_event',
    sa.Column('key', sqlmodel.sql.sqltypes.AutoString(length=255), nullable=False),
    sa.Column('seen_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('key')
    )
    with op.batch_alter_table('processed_event', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_processed_event_seen_at'), ['seen_at'], unique=False)

    op.create_table('answer_log',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('tenant_id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('conversation_id', sa.Integer(), nullable=True),
    sa.Column('user_id', sa.Integer(), nullable=True),
    sa.Column('question', sa.Text(), nullable=False),
    sa.Column('mode', sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
    sa.Column('fallback', sqlmodel.sql.sqltypes.AutoString(length=32), nullable=True),
    sa.Column('abstained', sa.Boolean(), nullable=False),
    sa.Column('cited', sa.JSON(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('feedback', sqlmodel.sql.sqltypes.AutoString(length=16), nullable=True),
    sa.Column('feedback_user_id', sa.Integer(), nullable=True),
    sa.Column('feedback_at', sa.DateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['conversation_id'], ['conversation.id'], ),
    sa.ForeignKeyConstraint(['feedback_user_id'], ['user.id'], ),
    sa.ForeignKeyConstraint(['tenant_id'], ['tenant.id'], ),
    sa.ForeignKeyConstraint(['user_id'], ['user.id'], ),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('answer_log', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_answer_log_tenant_id'), ['tenant_id'], unique=False)




def downgrade() -> None:

    with op.batch_alter_table('answer_log', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_answer_log_tenant_id'))

    op.drop_table('answer_log')
    with op.batch_alter_table('processed_event', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_processed_event_seen_at'))

    op.drop_table('processed_event')

