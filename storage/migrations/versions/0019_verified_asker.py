"""verified answers: who asked the question in its words, so that forgetting them removes
the wording (the answer stays, awaiting a question from the experts)

Revision ID: 0019
Revises: 0022
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op


revision = '0019'
down_revision = '0022'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('verified_answer', schema=None) as batch_op:
        batch_op.add_column(sa.Column('asked_by', sa.Integer(), nullable=True))
        batch_op.create_foreign_key('fk_verified_answer_asked_by_user', 'user', ['asked_by'], ['id'])


def downgrade() -> None:
    with op.batch_alter_table('verified_answer', schema=None) as batch_op:
        batch_op.drop_constraint('fk_verified_answer_asked_by_user', type_='foreignkey')
        batch_op.drop_column('asked_by')
