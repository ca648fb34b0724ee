"""installs into any workspace: Slack's installation and OAuth state tables (slack_sdk's
SQLAlchemy stores, their tokens kept sealed, so wider), a tenant's Enterprise Grid
organisation, and the removals of workspaces Lore was uninstalled from

Revision ID: 0013
Revises: 0009
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op


revision = '0013'
down_revision = '0009'
branch_labels = None
depends_on = None

SEALED = sa.Text()
"""Tokens are stored sealed with LORE_SECRET_KEY: longer than slack_sdk's String(200)."""


def upgrade() -> None:
    op.create_table('slack_installations',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('client_id', sa.String(length=32), nullable=False),
    sa.Column('app_id', sa.String(length=32), nullable=False),
    sa.Column('enterprise_id', sa.String(length=32), nullable=True),
    sa.Column('enterprise_name', sa.String(length=200), nullable=True),
    sa.Column('enterprise_url', sa.String(length=200), nullable=True),
    sa.Column('team_id', sa.String(length=32), nullable=True),
    sa.Column('team_name', sa.String(length=200), nullable=True),
    sa.Column('bot_token', SEALED, nullable=True),
    sa.Column('bot_id', sa.String(length=32), nullable=True),
    sa.Column('bot_user_id', sa.String(length=32), nullable=True),
    sa.Column('bot_scopes', sa.String(length=1000), nullable=True),
    sa.Column('bot_refresh_token', SEALED, nullable=True),
    sa.Column('bot_token_expires_at', sa.DateTime(), nullable=True),
    sa.Column('user_id', sa.String(length=32), nullable=False),
    sa.Column('user_token', SEALED, nullable=True),
    sa.Column('user_scopes', sa.String(length=1000), nullable=True),
    sa.Column('user_refresh_token', SEALED, nullable=True),
    sa.Column('user_token_expires_at', sa.DateTime(), nullable=True),
    sa.Column('incoming_webhook_url', sa.String(length=200), nullable=True),
    sa.Column('incoming_webhook_channel', sa.String(length=200), nullable=True),
    sa.Column('incoming_webhook_channel_id', sa.String(length=200), nullable=True),
    sa.Column('incoming_webhook_configuration_url', sa.String(length=200), nullable=True),
    sa.Column('is_enterprise_install', sa.Boolean(), nullable=False),
    sa.Column('token_type', sa.String(length=32), nullable=True),
    sa.Column('installed_at', sa.DateTime(), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index('slack_installations_idx', 'slack_installations',
                    ['client_id', 'enterprise_id', 'team_id', 'user_id', 'installed_at'], unique=False)
    op.create_table('slack_bots',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('client_id', sa.String(length=32), nullable=False),
    sa.Column('app_id', sa.String(length=32), nullable=False),
    sa.Column('enterprise_id', sa.String(length=32), nullable=True),
    sa.Column('enterprise_name', sa.String(length=200), nullable=True),
    sa.Column('team_id', sa.String(length=32), nullable=True),
    sa.Column('team_name', sa.String(length=200), nullable=True),
    sa.Column('bot_token', SEALED, nullable=True),
    sa.Column('bot_id', sa.String(length=32), nullable=True),
    sa.Column('bot_user_id', sa.String(length=32), nullable=True),
    sa.Column('bot_scopes', sa.String(length=1000), nullable=True),
    sa.Column('bot_refresh_token', SEALED, nullable=True),
    sa.Column('bot_token_expires_at', sa.DateTime(), nullable=True),
    sa.Column('is_enterprise_install', sa.Boolean(), nullable=False),
    sa.Column('installed_at', sa.DateTime(), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index('slack_bots_idx', 'slack_bots',
                    ['client_id', 'enterprise_id', 'team_id', 'installed_at'], unique=False)
    op.create_table('slack_oauth_states',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('state', sa.String(length=200), nullable=False),
    sa.Column('expire_at', sa.DateTime(), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )

    with op.batch_alter_table('tenant', schema=None) as batch_op:
        batch_op.add_column(sa.Column('enterprise_id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True))
        batch_op.create_index(batch_op.f('ix_tenant_enterprise_id'), ['enterprise_id'], unique=False)

    op.create_table('tenant_removal',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('tenant_id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('enterprise_id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True),
    sa.Column('reason', sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
    sa.Column('requested_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('purge_after', sa.DateTime(timezone=True), nullable=False),
    sa.Column('cancelled_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('claimed_by', sqlmodel.sql.sqltypes.AutoString(length=128), nullable=True),
    sa.Column('claimed_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('purged_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('removed', sa.JSON(), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('tenant_removal', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_tenant_removal_tenant_id'), ['tenant_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_tenant_removal_purge_after'), ['purge_after'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('tenant_removal', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_tenant_removal_purge_after'))
        batch_op.drop_index(batch_op.f('ix_tenant_removal_tenant_id'))
    op.drop_table('tenant_removal')
    with op.batch_alter_table('tenant', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_tenant_enterprise_id'))
        batch_op.drop_column('enterprise_id')
    op.drop_table('slack_oauth_states')
    op.drop_index('slack_bots_idx', table_name='slack_bots')
    op.drop_table('slack_bots')
    op.drop_index('slack_installations_idx', table_name='slack_installations')
    op.drop_table('slack_installations')
