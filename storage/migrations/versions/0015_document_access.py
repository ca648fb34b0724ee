"""document-level access from connected sources: each document's access (public, clauses of
principals, or unknown), the sources' people and group members, admins' grants, users'
confirmed emails, when permissions and groups were last synced, and the restricted
documents an answer drew on

Documents a connector brought in before this revision have no known access: they become
unknown (readable by nobody) until their first permission sync, which runs as soon as a
worker starts. Failing closed costs those documents a few minutes; failing open would show
a restricted page to everyone until then.

Revision ID: 0015
Revises: 0010
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op


revision = '0015'
down_revision = '0011'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('document', schema=None) as batch_op:
        batch_op.add_column(sa.Column('access_clauses', sa.Integer(), nullable=False, server_default='0'))
        batch_op.create_index('ix_document_access_clauses', ['index_id', 'access_clauses'], unique=False)
    op.execute("UPDATE document SET access_clauses = -1 WHERE source_kind = 'connector'")

    op.create_table('document_access',
    sa.Column('document_id', sa.Integer(), nullable=False),
    sa.Column('clause', sa.Integer(), nullable=False),
    sa.Column('principal', sqlmodel.sql.sqltypes.AutoString(length=320), nullable=False),
    sa.ForeignKeyConstraint(['document_id'], ['document.id'], ),
    sa.PrimaryKeyConstraint('document_id', 'clause', 'principal')
    )
    with op.batch_alter_table('document_access', schema=None) as batch_op:
        batch_op.create_index('ix_document_access_principal', ['principal', 'document_id'], unique=False)

    op.create_table('source_account',
    sa.Column('source_id', sa.Integer(), nullable=False),
    sa.Column('account_id', sqlmodel.sql.sqltypes.AutoString(length=255), nullable=False),
    sa.Column('email', sqlmodel.sql.sqltypes.AutoString(length=320), nullable=True),
    sa.Column('name', sqlmodel.sql.sqltypes.AutoString(length=255), nullable=False),
    sa.ForeignKeyConstraint(['source_id'], ['doc_source.id'], ),
    sa.PrimaryKeyConstraint('source_id', 'account_id')
    )
    with op.batch_alter_table('source_account', schema=None) as batch_op:
        batch_op.create_index('ix_source_account_email', ['source_id', 'email'], unique=False)

    op.create_table('source_group_member',
    sa.Column('source_id', sa.Integer(), nullable=False),
    sa.Column('group_name', sqlmodel.sql.sqltypes.AutoString(length=255), nullable=False),
    sa.Column('account_id', sqlmodel.sql.sqltypes.AutoString(length=255), nullable=False),
    sa.ForeignKeyConstraint(['source_id'], ['doc_source.id'], ),
    sa.PrimaryKeyConstraint('source_id', 'group_name', 'account_id')
    )

    op.create_table('access_grant',
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('principal', sqlmodel.sql.sqltypes.AutoString(length=320), nullable=False),
    sa.Column('granted_by', sa.Integer(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['granted_by'], ['user.id'], ),
    sa.ForeignKeyConstraint(['user_id'], ['user.id'], ),
    sa.PrimaryKeyConstraint('user_id', 'principal')
    )

    with op.batch_alter_table('user', schema=None) as batch_op:
        batch_op.add_column(sa.Column('email', sqlmodel.sql.sqltypes.AutoString(length=320), nullable=True))

    with op.batch_alter_table('doc_source', schema=None) as batch_op:
        batch_op.add_column(sa.Column('groups_synced_at', sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column('groups_error', sa.Text(), nullable=True))
        batch_op.add_column(sa.Column('groups_claimed_at', sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column('groups_failed_at', sa.DateTime(timezone=True), nullable=True))

    with op.batch_alter_table('doc_source_config', schema=None) as batch_op:
        batch_op.add_column(sa.Column('access_synced_at', sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column('access_error', sa.Text(), nullable=True))
        batch_op.add_column(sa.Column('access_claimed_at', sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column('access_failed_at', sa.DateTime(timezone=True), nullable=True))

    with op.batch_alter_table('answer_log', schema=None) as batch_op:
        batch_op.add_column(sa.Column('restricted', sa.JSON(), nullable=False, server_default='[]'))


def downgrade() -> None:
    # Plain DROP COLUMN (SQLite 3.35+), not batch mode: a batch recreates each table, and
    # recreating `user` or `document` breaks the foreign keys other tables hold on them.
    op.drop_column('answer_log', 'restricted')
    for column in ('access_failed_at', 'access_claimed_at', 'access_error', 'access_synced_at'):
        op.drop_column('doc_source_config', column)
    for column in ('groups_failed_at', 'groups_claimed_at', 'groups_error', 'groups_synced_at'):
        op.drop_column('doc_source', column)
    op.drop_column('user', 'email')
    op.drop_table('access_grant')
    op.drop_table('source_group_member')
    op.drop_index('ix_source_account_email', table_name='source_account')
    op.drop_table('source_account')
    op.drop_index('ix_document_access_principal', table_name='document_access')
    op.drop_table('document_access')
    op.drop_index('ix_document_access_clauses', table_name='document')
    op.drop_column('document', 'access_clauses')
