"""keyword search over chunks: SQLite FTS5 (porter, bm25) or PostgreSQL full text

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22
"""

from __future__ import annotations

from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

SQLITE_UP = [
    """CREATE VIRTUAL TABLE chunk_fts USING fts5(
        heading, text, content='chunk', content_rowid='id',
        tokenize='porter unicode61 remove_diacritics 2')""",
    """CREATE TRIGGER chunk_fts_insert AFTER INSERT ON chunk BEGIN
        INSERT INTO chunk_fts(rowid, heading, text) VALUES (new.id, new.heading, new.text);
    END""",
    """CREATE TRIGGER chunk_fts_delete AFTER DELETE ON chunk BEGIN
        INSERT INTO chunk_fts(chunk_fts, rowid, heading, text)
        VALUES ('delete', old.id, old.heading, old.text);
    END""",
    """CREATE TRIGGER chunk_fts_update AFTER UPDATE ON chunk BEGIN
        INSERT INTO chunk_fts(chunk_fts, rowid, heading, text)
        VALUES ('delete', old.id, old.heading, old.text);
        INSERT INTO chunk_fts(rowid, heading, text) VALUES (new.id, new.heading, new.text);
    END""",
    "INSERT INTO chunk_fts(chunk_fts) VALUES ('rebuild')",
]
SQLITE_DOWN = [
    "DROP TRIGGER IF EXISTS chunk_fts_update",
    "DROP TRIGGER IF EXISTS chunk_fts_delete",
    "DROP TRIGGER IF EXISTS chunk_fts_insert",
    "DROP TABLE IF EXISTS chunk_fts",
]
POSTGRES_UP = [
    """ALTER TABLE chunk ADD COLUMN tsv tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('english', coalesce(heading, '')), 'B')
        || to_tsvector('english', coalesce(text, ''))) STORED""",
    "CREATE INDEX ix_chunk_tsv ON chunk USING GIN (tsv)",
]
POSTGRES_DOWN = ["DROP INDEX IF EXISTS ix_chunk_tsv", "ALTER TABLE chunk DROP COLUMN IF EXISTS tsv"]


def upgrade() -> None:
    for statement in SQLITE_UP if op.get_bind().dialect.name == "sqlite" else POSTGRES_UP:
        op.execute(statement)


def downgrade() -> None:
    for statement in SQLITE_DOWN if op.get_bind().dialect.name == "sqlite" else POSTGRES_DOWN:
        op.execute(statement)
