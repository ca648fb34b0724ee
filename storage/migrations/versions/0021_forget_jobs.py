"""forgetting a person as a job: queued, taken by one worker, resumed after a kill, with what
it removed; the overview's figures of whole past days kept (usage_day), and answers'
escalations in the index the overview counts from

Revision ID: 0021
Revises: 0017
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0021"
down_revision = "0017"
branch_labels = None
depends_on = None

WHEN = sa.DateTime(timezone=True)
ACTIVE_FORGET = "state IN ('queued', 'running')"
USAGE = ["tenant_id", "created_at", "abstained", "verified", "user_id", "conversation_id", "latency_ms"]


def upgrade() -> None:
    op.create_table(
        "forget_job",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("tenant_id", sa.String(length=64), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("person", sa.String(length=255), nullable=False),
        sa.Column("requested_by", sa.Integer(), nullable=True),
        sa.Column("surface", sa.String(length=16), nullable=False),
        sa.Column("origin", sa.String(length=255), nullable=False),
        sa.Column("actor", sa.String(length=80), nullable=True),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("steps", sa.JSON(), nullable=False),
        sa.Column("removed", sa.JSON(), nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
        sa.Column("started_at", WHEN, nullable=True),
        sa.Column("heartbeat_at", WHEN, nullable=True),
        sa.Column("finished_at", WHEN, nullable=True),
        sa.Column("worker", sa.String(length=128), nullable=True),
        sa.Column("claim", sa.String(length=32), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(["tenant_id"], ["tenant.id"]),
        sa.ForeignKeyConstraint(["user_id"], ["user.id"]),
        sa.ForeignKeyConstraint(["requested_by"], ["user.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_forget_job_tenant_id", "forget_job", ["tenant_id"])
    op.create_index("ix_forget_job_state", "forget_job", ["state"])
    op.create_index(
        "ux_forget_job_active",
        "forget_job",
        ["tenant_id", "user_id"],
        unique=True,
        sqlite_where=sa.text(ACTIVE_FORGET),
        postgresql_where=sa.text(ACTIVE_FORGET),
    )

    op.create_table(
        "usage_day",
        sa.Column("tenant_id", sa.String(length=64), nullable=False),
        sa.Column("day", sa.String(length=10), nullable=False),
        sa.Column("figures", sa.JSON(), nullable=False),
        sa.Column("computed_at", WHEN, nullable=False),
        sa.ForeignKeyConstraint(["tenant_id"], ["tenant.id"]),
        sa.PrimaryKeyConstraint("tenant_id", "day"),
    )
    op.drop_index("ix_answer_log_usage", table_name="answer_log")
    op.create_index("ix_answer_log_usage", "answer_log", [*USAGE, "escalated_at"])


def downgrade() -> None:
    op.drop_index("ix_answer_log_usage", table_name="answer_log")
    op.create_index("ix_answer_log_usage", "answer_log", USAGE)
    op.drop_table("usage_day")
    op.drop_index("ux_forget_job_active", table_name="forget_job")
    op.drop_index("ix_forget_job_state", table_name="forget_job")
    op.drop_index("ix_forget_job_tenant_id", table_name="forget_job")
    op.drop_table("forget_job")
