"""inbox: the conversation (thread_key) and platform time (sent_at) of each event, for per-conversation order

Revision ID: 0003_front_door
Revises: 0002_documents
"""

from __future__ import annotations

import sqlalchemy as sa

from alembic import op

revision = "0003_front_door"
down_revision = "0002_documents"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("inbox") as batch:
        batch.add_column(sa.Column("thread_key", sa.String(length=255), nullable=True))
        batch.add_column(sa.Column("sent_at", sa.DateTime(timezone=True), nullable=True))
    op.create_index("ix_inbox_thread_status", "inbox", ["thread_key", "status"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_inbox_thread_status", table_name="inbox")
    with op.batch_alter_table("inbox") as batch:
        batch.drop_column("sent_at")
        batch.drop_column("thread_key")
