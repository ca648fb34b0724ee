"""the admin console: the audit log, console sign-in links and sessions, coverage gaps,
workspace settings, questions' embeddings, answers' latency and the documents they cite, audit-reading API keys

Revision ID: 0016
Revises: 0012
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op


revision = '0016'
down_revision = '0010'
branch_labels = None
depends_on = None

WHEN = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table('audit_log',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('tenant_id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('at', WHEN, nullable=False),
    sa.Column('actor', sqlmodel.sql.sqltypes.AutoString(length=80), nullable=False),
    sa.Column('actor_name', sqlmodel.sql.sqltypes.AutoString(length=255), nullable=False),
    sa.Column('surface', sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
    sa.Column('origin', sqlmodel.sql.sqltypes.AutoString(length=255), nullable=False),
    sa.Column('action', sqlmodel.sql.sqltypes.AutoString(length=48), nullable=False),
    sa.Column('target', sqlmodel.sql.sqltypes.AutoString(length=512), nullable=False),
    sa.Column('details', sa.JSON(), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index('ix_audit_log_tenant_at', 'audit_log', ['tenant_id', 'at'], unique=False)
    op.create_index(op.f('ix_audit_log_action'), 'audit_log', ['action'], unique=False)
    op.create_table('console_grant',
    sa.Column('token_hash', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('tenant_id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('user_external_id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('created_at', WHEN, nullable=False),
    sa.Column('expires_at', WHEN, nullable=False),
    sa.Column('used_at', WHEN, nullable=True),
    sa.PrimaryKeyConstraint('token_hash')
    )
    op.create_table('console_session',
    sa.Column('id_hash', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('tenant_id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('csrf', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('via', sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
    sa.Column('created_at', WHEN, nullable=False),
    sa.Column('expires_at', WHEN, nullable=False),
    sa.Column('ended_at', WHEN, nullable=True),
    sa.ForeignKeyConstraint(['tenant_id'], ['tenant.id'], ),
    sa.ForeignKeyConstraint(['user_id'], ['user.id'], ),
    sa.PrimaryKeyConstraint('id_hash')
    )
    op.create_index(op.f('ix_console_session_tenant_id'), 'console_session', ['tenant_id'], unique=False)
    op.create_index(op.f('ix_console_session_user_id'), 'console_session', ['user_id'], unique=False)
    op.create_table('coverage_gap',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('tenant_id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('rank', sa.Integer(), nullable=False),
    sa.Column('answer_ids', sa.JSON(), nullable=False),
    sa.Column('computed_at', WHEN, nullable=False),
    sa.ForeignKeyConstraint(['tenant_id'], ['tenant.id'], ),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index(op.f('ix_coverage_gap_tenant_id'), 'coverage_gap', ['tenant_id'], unique=False)
    op.create_table('workspace_setting',
    sa.Column('tenant_id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('name', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('value', sa.JSON(), nullable=False),
    sa.Column('updated_at', WHEN, nullable=False),
    sa.ForeignKeyConstraint(['tenant_id'], ['tenant.id'], ),
    sa.PrimaryKeyConstraint('tenant_id', 'name')
    )
    op.create_table('answer_citation',
    sa.Column('answer_id', sa.Integer(), nullable=False),
    sa.Column('document_id', sa.Integer(), nullable=False),
    sa.Column('index_id', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['answer_id'], ['answer_log.id'], ),
    sa.PrimaryKeyConstraint('answer_id', 'document_id')
    )
    op.create_index(op.f('ix_answer_citation_document_id'), 'answer_citation', ['document_id'], unique=False)
    op.create_index(op.f('ix_answer_citation_index_id'), 'answer_citation', ['index_id'], unique=False)
    op.create_table('question_vector',
    sa.Column('answer_id', sa.Integer(), nullable=False),
    sa.Column('model', sqlmodel.sql.sqltypes.AutoString(length=120), nullable=False),
    sa.Column('vector', sa.LargeBinary(), nullable=False),
    sa.ForeignKeyConstraint(['answer_id'], ['answer_log.id'], ),
    sa.PrimaryKeyConstraint('answer_id')
    )
    with op.batch_alter_table('answer_log', schema=None) as batch_op:
        batch_op.add_column(sa.Column('latency_ms', sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column('verified', sa.Boolean(), server_default=sa.false(), nullable=False))
        batch_op.create_index('ix_answer_log_usage', ['tenant_id', 'created_at', 'abstained', 'verified', 'user_id', 'conversation_id', 'latency_ms'], unique=False)
    with op.batch_alter_table('api_key', schema=None) as batch_op:
        batch_op.add_column(sa.Column('reads_audit', sa.Boolean(), server_default=sa.false(), nullable=False))


def downgrade() -> None:
    with op.batch_alter_table('api_key', schema=None) as batch_op:
        batch_op.drop_column('reads_audit')
    with op.batch_alter_table('answer_log', schema=None) as batch_op:
        batch_op.drop_index('ix_answer_log_usage')
        batch_op.drop_column('verified')
        batch_op.drop_column('latency_ms')
    op.drop_table('question_vector')
    op.drop_index(op.f('ix_answer_citation_index_id'), table_name='answer_citation')
    op.drop_index(op.f('ix_answer_citation_document_id'), table_name='answer_citation')
    op.drop_table('answer_citation')
    op.drop_table('workspace_setting')
    op.drop_index(op.f('ix_coverage_gap_tenant_id'), table_name='coverage_gap')
    op.drop_table('coverage_gap')
    op.drop_index(op.f('ix_console_session_user_id'), table_name='console_session')
    op.drop_index(op.f('ix_console_session_tenant_id'), table_name='console_session')
    op.drop_table('console_session')
    op.drop_table('console_grant')
    op.drop_index(op.f('ix_audit_log_action'), table_name='audit_log')
    op.drop_index('ix_audit_log_tenant_at', table_name='audit_log')
    op.drop_table('audit_log')
