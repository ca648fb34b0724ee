"""chunks record where they start in their document's text

Chunks overlap (each repeats the end of the one before it in its section). Knowing where each
starts says how much it repeats, so the second stage reads a passage that begins inside a
code block or a sentence from those offsets instead of searching for the overlap in the
text. Existing chunks get the offsets that search finds, once, here: the same passages,
read the same way.

Revision ID: 0012
Revises: 0013
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op


revision = '0012'
down_revision = '0013'
branch_labels = None
depends_on = None

OVERLAP_CHARS = 2000
"""How far back into the chunk before a chunk may repeat it (as chunking overlaps them)."""

chunk = sa.table(
    'chunk',
    sa.column('id', sa.Integer),
    sa.column('document_id', sa.Integer),
    sa.column('position', sa.Integer),
    sa.column('heading', sa.Text),
    sa.column('text', sa.Text),
    sa.column('start', sa.Integer),
)


def upgrade() -> None:
    with op.batch_alter_table('chunk', schema=None) as batch_op:
        batch_op.add_column(sa.Column('start', sa.Integer(), nullable=True))
    bind = op.get_bind()
    rows = bind.execute(
        sa.select(chunk.c.id, chunk.c.document_id, chunk.c.heading, chunk.c.text).order_by(
            chunk.c.document_id, chunk.c.position
        )
    )
    starts, previous = [], None
    for chunk_id, document_id, heading, text in rows:
        start = 0
        if previous is not None and previous[0] == document_id:
            _, before_heading, before_start, before_text = previous
            end = before_start + len(before_text)
            start = end - (_repeated(before_text, text) if before_heading == heading else 0)
        starts.append({'chunk_id': chunk_id, 'new_start': start})
        previous = (document_id, heading, start, text)
    if starts:
        bind.execute(
            chunk.update().where(chunk.c.id == sa.bindparam('chunk_id')).values(start=sa.bindparam('new_start')),
            starts,
        )


def _repeated(before: str, text: str) -> int:
    """How many characters at the end of `before` `text` begins with: the longest such run
    (not blank) within the last `OVERLAP_CHARS`, as the overlap was read before this revision."""
    start = before.find(text[:1], max(0, len(before) - OVERLAP_CHARS))
    while start >= 0:
        if before[start:].strip() and text.startswith(before[start:]):
            return len(before) - start
        start = before.find(text[:1], start + 1)
    return 0


def downgrade() -> None:
    with op.batch_alter_table('chunk', schema=None) as batch_op:
        batch_op.drop_column('start')
