"""runs: the reply a run produced, stored with it, so a retry after a crash replays the answer instead of losing it

Revision ID: 0004_run_reply
Revises: 0003_front_door
"""

from __future__ import annotations

import sqlalchemy as sa

from alembic import op

revision = "0004_run_reply"
down_revision = "0003_front_door"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("reply", sa.JSON(), nullable=True))


def downgrade() -> None:
    # SQLite's own DROP COLUMN, not batch's copy-and-drop, which would delete every hop (see 0008_unused_columns)
    with op.batch_alter_table("runs", recreate="never") as batch:
        batch.drop_column("reply")
