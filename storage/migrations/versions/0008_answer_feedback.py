"""answer feedback: one verdict per person per answer (with what was wrong and a comment),
the indexes each answer searched, and the answer's text

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op


revision = '0008'
down_revision = '0007'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('answer_index',
    sa.Column('answer_id', sa.Integer(), nullable=False),
    sa.Column('index_id', sa.Integer(), nullable=False),
    sa.Column('cited', sa.Boolean(), nullable=False),
    sa.ForeignKeyConstraint(['answer_id'], ['answer_log.id'], ),
    sa.ForeignKeyConstraint(['index_id'], ['knowledge_index.id'], ),
    sa.PrimaryKeyConstraint('answer_id', 'index_id')
    )
    with op.batch_alter_table('answer_index', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_answer_index_index_id'), ['index_id'], unique=False)

    op.create_table('answer_feedback',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('answer_id', sa.Integer(), nullable=False),
    sa.Column('tenant_id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('helpful', sa.Boolean(), nullable=False),
    sa.Column('reason', sqlmodel.sql.sqltypes.AutoString(length=32), nullable=True),
    sa.Column('comment', sa.Text(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['answer_id'], ['answer_log.id'], ),
    sa.ForeignKeyConstraint(['tenant_id'], ['tenant.id'], ),
    sa.ForeignKeyConstraint(['user_id'], ['user.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('answer_id', 'user_id')
    )
    with op.batch_alter_table('answer_feedback', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_answer_feedback_answer_id'), ['answer_id'], unique=False)

    # Feedback given so far moves to its own table (anonymous presses had no user: dropped).
    op.execute(
        "INSERT INTO answer_feedback (answer_id, tenant_id, user_id, helpful, created_at, updated_at) "
        "SELECT id, tenant_id, feedback_user_id, feedback = 'helpful', feedback_at, feedback_at "
        "FROM answer_log WHERE feedback IS NOT NULL AND feedback_user_id IS NOT NULL "
        "AND feedback_at IS NOT NULL"
    )
    with op.batch_alter_table('answer_log', schema=None) as batch_op:
        batch_op.add_column(sa.Column('text', sa.Text(), nullable=True))
        batch_op.drop_column('feedback_at')
        batch_op.drop_column('feedback_user_id')
        batch_op.drop_column('feedback')


def downgrade() -> None:
    with op.batch_alter_table('answer_log', schema=None) as batch_op:
        batch_op.add_column(sa.Column('feedback', sqlmodel.sql.sqltypes.AutoString(length=16), nullable=True))
        batch_op.add_column(sa.Column('feedback_user_id', sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column('feedback_at', sa.DateTime(timezone=True), nullable=True))
        batch_op.create_foreign_key('fk_answer_log_feedback_user', 'user', ['feedback_user_id'], ['id'])
        batch_op.drop_column('text')

    with op.batch_alter_table('answer_feedback', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_answer_feedback_answer_id'))
    op.drop_table('answer_feedback')

    with op.batch_alter_table('answer_index', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_answer_index_index_id'))
    op.drop_table('answer_index')
