"""help channels and verified answers: a conversation's help mode, its confidence and its
experts; where an answer was given, its brief and its escalation; verified answers

Revision ID: 0017
Revises: 0015
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op


revision = '0017'
down_revision = '0015'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('conversation', schema=None) as batch_op:
        batch_op.add_column(sa.Column('help_channel', sa.Boolean(), nullable=False, server_default=sa.false()))
        batch_op.add_column(sa.Column('help_confidence', sa.Float(), nullable=True))
        batch_op.add_column(sa.Column('experts', sa.JSON(), nullable=False, server_default='[]'))

    with op.batch_alter_table('answer_log', schema=None) as batch_op:
        batch_op.add_column(sa.Column('brief', sa.Text(), nullable=True))
        batch_op.add_column(sa.Column('thread', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True))
        batch_op.add_column(sa.Column('escalated_at', sa.DateTime(timezone=True), nullable=True))

    op.create_table(
        'verified_answer',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('tenant_id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column('index_id', sa.Integer(), nullable=False),
        sa.Column('source_key', sqlmodel.sql.sqltypes.AutoString(length=255), nullable=False),
        sa.Column('question', sa.Text(), nullable=False),
        sa.Column('answer', sa.Text(), nullable=False),
        sa.Column('question_vector', sa.JSON(), nullable=False),
        sa.Column('embedding_model', sqlmodel.sql.sqltypes.AutoString(length=120), nullable=False),
        sa.Column('answered_by', sqlmodel.sql.sqltypes.AutoString(length=255), nullable=False),
        sa.Column('verified_by', sa.Integer(), nullable=False),
        sa.Column('verified_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('link', sqlmodel.sql.sqltypes.AutoString(length=2048), nullable=True),
        sa.Column('cited', sa.JSON(), nullable=False),
        sa.Column('answer_id', sa.Integer(), nullable=True),
        sa.Column('review_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('flagged', sqlmodel.sql.sqltypes.AutoString(length=32), nullable=True),
        sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['answer_id'], ['answer_log.id']),
        sa.ForeignKeyConstraint(['index_id'], ['knowledge_index.id']),
        sa.ForeignKeyConstraint(['tenant_id'], ['tenant.id']),
        sa.ForeignKeyConstraint(['verified_by'], ['user.id']),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('index_id', 'source_key'),
    )
    with op.batch_alter_table('verified_answer', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_verified_answer_index_id'), ['index_id'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('verified_answer', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_verified_answer_index_id'))
    op.drop_table('verified_answer')

    with op.batch_alter_table('answer_log', schema=None) as batch_op:
        batch_op.drop_column('escalated_at')
        batch_op.drop_column('thread')
        batch_op.drop_column('brief')

    with op.batch_alter_table('conversation', schema=None) as batch_op:
        batch_op.drop_column('experts')
        batch_op.drop_column('help_confidence')
        batch_op.drop_column('help_channel')
