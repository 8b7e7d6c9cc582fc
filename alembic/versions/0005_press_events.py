"""button presses: the inbox event that consumed an action and the event a run answered, so a retried press gets
the same outcome and its stored reply instead of "already used"

Revision ID: 0005_press_events
Revises: 0004_run_reply
"""

from __future__ import annotations

import sqlalchemy as sa

from alembic import op

revision = "0005_press_events"
down_revision = "0004_run_reply"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("actions") as batch:
        batch.add_column(sa.Column("consumed_event", sa.String(length=255), nullable=True))
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("event_key", sa.String(length=255), nullable=True))
    op.create_index("ix_runs_event_key", "runs", ["event_key"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_runs_event_key", table_name="runs")
    # SQLite's own DROP COLUMN, not batch's copy-and-drop, which would delete every hop (see 0008_unused_columns)
    with op.batch_alter_table("runs", recreate="never") as batch:
        batch.drop_column("event_key")
    with op.batch_alter_table("actions", recreate="never") as batch:
        batch.drop_column("consumed_event")
