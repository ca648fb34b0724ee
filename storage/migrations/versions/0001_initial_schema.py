"""initial schema

Revision ID: 0001
Revises:
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op


revision = '0001'
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:

    op.create_table('tenant',
    sa.Column('id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('name', sqlmodel.sql.sqltypes.AutoString(length=255), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_table('channel',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('tenant_id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('external_id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('name', sqlmodel.sql.sqltypes.AutoString(length=255), nullable=False),
    sa.Column('is_private', sa.Boolean(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['tenant_id'], ['tenant.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('tenant_id', 'external_id')
    )
    with op.batch_alter_table('channel', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_channel_tenant_id'), ['tenant_id'], unique=False)

    op.create_table('user',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('tenant_id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('external_id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('name', sqlmodel.sql.sqltypes.AutoString(length=255), nullable=False),
    sa.Column('is_admin', sa.Boolean(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['tenant_id'], ['tenant.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('tenant_id', 'external_id')
    )
    with op.batch_alter_table('user', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_user_tenant_id'), ['tenant_id'], unique=False)

    op.create_table('conversation',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('tenant_id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('key', sqlmodel.sql.sqltypes.AutoString(length=80), nullable=False),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('channel_id', sa.Integer(), nullable=True),
    sa.Column('user_id', sa.Integer(), nullable=True),
    sa.Column('response_mode', sqlmodel.sql.sqltypes.AutoString(length=32), nullable=True),
    sa.Column('rag_strategy', sqlmodel.sql.sqltypes.AutoString(length=32), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['channel_id'], ['channel.id'], ),
    sa.ForeignKeyConstraint(['tenant_id'], ['tenant.id'], ),
    sa.ForeignKeyConstraint(['user_id'], ['user.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('tenant_id', 'key')
    )
    with op.batch_alter_table('conversation', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_conversation_tenant_id'), ['tenant_id'], unique=False)

    op.create_table('doc_source',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('tenant_id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('kind', sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
    sa.Column('name', sqlmodel.sql.sqltypes.AutoString(length=255), nullable=False),
    sa.Column('credentials_ref', sa.Text(), nullable=True),
    sa.Column('config', sa.JSON(), nullable=False),
    sa.Column('created_by', sa.Integer(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['created_by'], ['user.id'], ),
    sa.ForeignKeyConstraint(['tenant_id'], ['tenant.id'], ),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('doc_source', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_doc_source_tenant_id'), ['tenant_id'], unique=False)

    op.create_table('knowledge_index',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('tenant_id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('name', sqlmodel.sql.sqltypes.AutoString(length=120), nullable=False),
    sa.Column('scope', sa.String(length=16), nullable=False),
    sa.Column('owner_key', sqlmodel.sql.sqltypes.AutoString(length=80), nullable=False),
    sa.Column('owner_user_id', sa.Integer(), nullable=True),
    sa.Column('channel_id', sa.Integer(), nullable=True),
    sa.Column('embedding_model', sqlmodel.sql.sqltypes.AutoString(length=120), nullable=False),
    sa.Column('embedding_dimension', sa.Integer(), nullable=False),
    sa.Column('content_version', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['channel_id'], ['channel.id'], ),
    sa.ForeignKeyConstraint(['owner_user_id'], ['user.id'], ),
    sa.ForeignKeyConstraint(['tenant_id'], ['tenant.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('tenant_id', 'owner_key', 'name')
    )
    with op.batch_alter_table('knowledge_index', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_knowledge_index_tenant_id'), ['tenant_id'], unique=False)

    op.create_table('doc_source_config',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('index_id', sa.Integer(), nullable=False),
    sa.Column('source_id', sa.Integer(), nullable=False),
    sa.Column('folders', sa.JSON(), nullable=False),
    sa.Column('options', sa.JSON(), nullable=False),
    sa.Column('schedule', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('last_refresh_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['index_id'], ['knowledge_index.id'], ),
    sa.ForeignKeyConstraint(['source_id'], ['doc_source.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('index_id', 'source_id')
    )
    with op.batch_alter_table('doc_source_config', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_doc_source_config_index_id'), ['index_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_doc_source_config_source_id'), ['source_id'], unique=False)

    op.create_table('enabled_index',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('conversation_id', sa.Integer(), nullable=False),
    sa.Column('index_id', sa.Integer(), nullable=False),
    sa.Column('position', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['conversation_id'], ['conversation.id'], ),
    sa.ForeignKeyConstraint(['index_id'], ['knowledge_index.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('conversation_id', 'index_id')
    )
    with op.batch_alter_table('enabled_index', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_enabled_index_conversation_id'), ['conversation_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_enabled_index_index_id'), ['index_id'], unique=False)

    op.create_table('document',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('index_id', sa.Integer(), nullable=False),
    sa.Column('source_kind', sa.String(length=16), nullable=False),
    sa.Column('source_key', sqlmodel.sql.sqltypes.AutoString(length=2048), nullable=False),
    sa.Column('source_config_id', sa.Integer(), nullable=True),
    sa.Column('name', sqlmodel.sql.sqltypes.AutoString(length=512), nullable=False),
    sa.Column('url', sqlmodel.sql.sqltypes.AutoString(length=2048), nullable=True),
    sa.Column('external_id', sqlmodel.sql.sqltypes.AutoString(length=255), nullable=True),
    sa.Column('time_added', sa.DateTime(timezone=True), nullable=False),
    sa.Column('doc_timestamp', sa.DateTime(timezone=True), nullable=True),
    sa.Column('author', sqlmodel.sql.sqltypes.AutoString(length=255), nullable=True),
    sa.Column('mime_type', sqlmodel.sql.sqltypes.AutoString(length=128), nullable=False),
    sa.Column('size', sa.Integer(), nullable=False),
    sa.Column('characters', sa.Integer(), nullable=False),
    sa.Column('content_hash', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('chunk_count', sa.Integer(), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('meta', sa.JSON(), nullable=False),
    sa.ForeignKeyConstraint(['index_id'], ['knowledge_index.id'], ),
    sa.ForeignKeyConstraint(['source_config_id'], ['doc_source_config.id'], ),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('document', schema=None) as batch_op:
        batch_op.create_index('ix_document_index_hash', ['index_id', 'content_hash'], unique=False)
        batch_op.create_index(batch_op.f('ix_document_index_id'), ['index_id'], unique=False)
        batch_op.create_index('ix_document_index_source', ['index_id', 'source_key'], unique=False)
        batch_op.create_index(batch_op.f('ix_document_status'), ['status'], unique=False)

    op.create_table('indexing_job',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('index_id', sa.Integer(), nullable=False),
    sa.Column('source_config_id', sa.Integer(), nullable=True),
    sa.Column('state', sa.String(length=16), nullable=False),
    sa.Column('counters', sa.JSON(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('started_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('finished_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('heartbeat_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('worker', sqlmodel.sql.sqltypes.AutoString(length=128), nullable=True),
    sa.Column('error', sa.Text(), nullable=True),
    sa.ForeignKeyConstraint(['index_id'], ['knowledge_index.id'], ),
    sa.ForeignKeyConstraint(['source_config_id'], ['doc_source_config.id'], ),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('indexing_job', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_indexing_job_index_id'), ['index_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_indexing_job_state'), ['state'], unique=False)

    op.create_table('chunk',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('document_id', sa.Integer(), nullable=False),
    sa.Column('index_id', sa.Integer(), nullable=False),
    sa.Column('position', sa.Integer(), nullable=False),
    sa.Column('heading', sa.Text(), nullable=False),
    sa.Column('text', sa.Text(), nullable=False),
    sa.ForeignKeyConstraint(['document_id'], ['document.id'], ),
    sa.ForeignKeyConstraint(['index_id'], ['knowledge_index.id'], ),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('chunk', schema=None) as batch_op:
        batch_op.create_index('ix_chunk_document_position', ['document_id', 'position'], unique=False)
        batch_op.create_index(batch_op.f('ix_chunk_index_id'), ['index_id'], unique=False)

    op.create_table('indexing_job_log',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('job_id', sa.Integer(), nullable=False),
    sa.Column('at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('level', sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
    sa.Column('message', sa.Text(), nullable=False),
    sa.ForeignKeyConstraint(['job_id'], ['indexing_job.id'], ),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('indexing_job_log', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_indexing_job_log_job_id'), ['job_id'], unique=False)




def downgrade() -> None:

    with op.batch_alter_table('indexing_job_log', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_indexing_job_log_job_id'))

    op.drop_table('indexing_job_log')
    with op.batch_alter_table('chunk', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_chunk_index_id'))
        batch_op.drop_index('ix_chunk_document_position')

    op.drop_table('chunk')
    with op.batch_alter_table('indexing_job', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_indexing_job_state'))
        batch_op.drop_index(batch_op.f('ix_indexing_job_index_id'))

    op.drop_table('indexing_job')
    with op.batch_alter_table('document', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_document_status'))
        batch_op.drop_index('ix_document_index_source')
        batch_op.drop_index(batch_op.f('ix_document_index_id'))
        batch_op.drop_index('ix_document_index_hash')

    op.drop_table('document')
    with op.batch_alter_table('enabled_index', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_enabled_index_index_id'))
        batch_op.drop_index(batch_op.f('ix_enabled_index_conversation_id'))

    op.drop_table('enabled_index')
    with op.batch_alter_table('doc_source_config', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_doc_source_config_source_id'))
        batch_op.drop_index(batch_op.f('ix_doc_source_config_index_id'))

    op.drop_table('doc_source_config')
    with op.batch_alter_table('knowledge_index', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_knowledge_index_tenant_id'))

    op.drop_table('knowledge_index')
    with op.batch_alter_table('doc_source', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_doc_source_tenant_id'))

    op.drop_table('doc_source')
    with op.batch_alter_table('conversation', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_conversation_tenant_id'))

    op.drop_table('conversation')
    with op.batch_alter_table('user', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_user_tenant_id'))

    op.drop_table('user')
    with op.batch_alter_table('channel', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_channel_tenant_id'))

    op.drop_table('channel')
    op.drop_table('tenant')

