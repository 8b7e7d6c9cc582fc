"""drop what nothing reads or writes since the service decides and storage settles: runs.event_key (a retried press
is accepted again through actions.consumed_event and decides again) and actions.message_ref (never set)

Revision ID: 0008_unused_columns
Revises: 0007_team_answers
"""

from __future__ import annotations

import sqlalchemy as sa

from alembic import op

revision = "0008_unused_columns"
down_revision = "0007_team_answers"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.drop_index("ix_runs_event_key", table_name="runs")
    # SQLite's own DROP COLUMN (3.35+, which RETURNING needs anyway), not batch's copy-and-drop: dropping the old runs
    # table, foreign keys on, would delete every hop (ON DELETE CASCADE)
    with op.batch_alter_table("runs", recreate="never") as batch:
        batch.drop_column("event_key")
    with op.batch_alter_table("actions", recreate="never") as batch:
        batch.drop_column("message_ref")


def downgrade() -> None:
    with op.batch_alter_table("actions") as batch:
        batch.add_column(sa.Column("message_ref", sa.String(length=255), nullable=True))
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("event_key", sa.String(length=255), nullable=True))
    op.create_index("ix_runs_event_key", "runs", ["event_key"], unique=False)
