"""chunks' units recorded before they carried document offsets are read again

Units are now read from the whole document, with offsets, and recorded as
`{"form":2,...}` (`knowledge.indexing.units.FORM`). Records of the older form are cleared here,
once, so that the repair at start reads them again through the partial index on
`units IS NULL` (0022), instead of every start scanning every chunk's units for their form.

Revision ID: 0025
Revises: 0024
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op


revision = '0025'
down_revision = '0024'
branch_labels = None
depends_on = None


FORM_2 = '{"form":2,%'


def upgrade() -> None:
    op.get_bind().execute(
        sa.text('UPDATE chunk SET units = NULL WHERE units IS NOT NULL AND units NOT LIKE :form'),
        {'form': FORM_2},
    )


def downgrade() -> None:
    # Older Lore reads the first form only: it reads the chunks again at its start.
    op.get_bind().execute(
        sa.text('UPDATE chunk SET units = NULL WHERE units LIKE :form'), {'form': FORM_2}
    )
