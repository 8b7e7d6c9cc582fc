"""team answers: candidates drafted from resolved threads, their review buttons

Revision ID: 0007_team_answers
Revises: 0006_crawl_state
"""

from __future__ import annotations

import sqlalchemy as sa

from alembic import op

revision = "0007_team_answers"
down_revision = "0006_crawl_state"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "team_answers",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("question", sa.Text(), nullable=False),
        sa.Column("answer", sa.Text(), nullable=False),
        sa.Column("captured_answer", sa.Text(), nullable=True),
        sa.Column("platform", sa.String(32), nullable=False),
        sa.Column("workspace_id", sa.String(255), nullable=False),
        sa.Column("channel_id", sa.String(255), nullable=False),
        sa.Column("channel_name", sa.String(255), nullable=False),
        sa.Column("thread_key", sa.String(255), nullable=False),
        sa.Column("thread_url", sa.String(2000), nullable=False),
        sa.Column("answer_message_id", sa.String(255), nullable=False),
        sa.Column("author_id", sa.String(255), nullable=False),
        sa.Column("author_name", sa.String(255), nullable=False),
        sa.Column("answered_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("collection", sa.String(100), nullable=False),
        sa.Column("mentions", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("reviewer_id", sa.String(255), nullable=True),
        sa.Column("reviewer_name", sa.String(255), nullable=True),
        sa.Column("reviewed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("expired_by", sa.String(32), nullable=True),
        sa.Column("diff", sa.Text(), nullable=True),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_team_answers")),
        sa.UniqueConstraint(
            "platform", "workspace_id", "channel_id", "answer_message_id", name="uq_team_answers_message"
        ),
    )
    op.create_index(op.f("ix_team_answers_status"), "team_answers", ["status"])
    op.create_index(op.f("ix_team_answers_thread_key"), "team_answers", ["thread_key"])
    op.create_index("ix_team_answers_status_expires", "team_answers", ["status", "expires_at"])
    op.create_table(
        "team_answer_actions",
        sa.Column("id", sa.String(32), nullable=False),
        sa.Column("answer_id", sa.String(36), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["answer_id"],
            ["team_answers.id"],
            name=op.f("fk_team_answer_actions_answer_id_team_answers"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_team_answer_actions")),
    )
    op.create_index(op.f("ix_team_answer_actions_answer_id"), "team_answer_actions", ["answer_id"])


def downgrade() -> None:
    op.drop_index(op.f("ix_team_answer_actions_answer_id"), table_name="team_answer_actions")
    op.drop_table("team_answer_actions")
    op.drop_index("ix_team_answers_status_expires", table_name="team_answers")
    op.drop_index(op.f("ix_team_answers_thread_key"), table_name="team_answers")
    op.drop_index(op.f("ix_team_answers_status"), table_name="team_answers")
    op.drop_table("team_answers")
