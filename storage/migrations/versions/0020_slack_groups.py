"""slack groups: the members of the Slack channels and user groups that connector attachments
are restricted to, as Lore last read them

Revision ID: 0020
Revises: 0021
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op


revision = '0020'
down_revision = '0021'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'slack_group',
        sa.Column('tenant_id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column('group_key', sqlmodel.sql.sqltypes.AutoString(length=80), nullable=False),
        sa.Column('read_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('error', sa.Text(), nullable=True),
        sa.Column('failed_at', sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(['tenant_id'], ['tenant.id'], ),
        sa.PrimaryKeyConstraint('tenant_id', 'group_key'),
    )
    op.create_table(
        'slack_group_member',
        sa.Column('tenant_id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column('group_key', sqlmodel.sql.sqltypes.AutoString(length=80), nullable=False),
        sa.Column('user_external_id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.ForeignKeyConstraint(['tenant_id'], ['tenant.id'], ),
        sa.PrimaryKeyConstraint('tenant_id', 'group_key', 'user_external_id'),
    )
    with op.batch_alter_table('slack_group_member', schema=None) as batch_op:
        batch_op.create_index('ix_slack_group_member_user', ['tenant_id', 'user_external_id'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('slack_group_member', schema=None) as batch_op:
        batch_op.drop_index('ix_slack_group_member_user')
    op.drop_table('slack_group_member')
    op.drop_table('slack_group')
