"""verified answers: who wrote the answer (their Lore user), so that forgetting them blanks
the name kept with it; Slack groups: which process is reading a group's members, till when

Revision ID: 0024
Revises: 0019
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op


revision = '0024'
down_revision = '0019'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('verified_answer', schema=None) as batch_op:
        batch_op.add_column(sa.Column('answered_by_user', sa.Integer(), nullable=True))
        batch_op.create_foreign_key(
            'fk_verified_answer_answered_by_user', 'user', ['answered_by_user'], ['id']
        )
    with op.batch_alter_table('slack_group', schema=None) as batch_op:
        batch_op.add_column(sa.Column('claimed_by', sa.String(length=128), nullable=True))
        batch_op.add_column(sa.Column('claimed_until', sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('slack_group', schema=None) as batch_op:
        batch_op.drop_column('claimed_until')
        batch_op.drop_column('claimed_by')
    with op.batch_alter_table('verified_answer', schema=None) as batch_op:
        batch_op.drop_constraint('fk_verified_answer_answered_by_user', type_='foreignkey')
        batch_op.drop_column('answered_by_user')
