"""crawled sites: per-URL crawl state (validators, consecutive 404/410s) and one row per ingest of each input

Revision ID: 0006_crawl_state
Revises: 0005_press_events
"""

from __future__ import annotations

import sqlalchemy as sa

from alembic import op

revision = "0006_crawl_state"
down_revision = "0005_press_events"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "crawl_pages",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("collection", sa.String(100), nullable=False),
        sa.Column("origin", sa.String(2000), nullable=False),
        sa.Column("url", sa.String(2000), nullable=False),
        sa.Column("doc_id", sa.String(64), nullable=True),
        sa.Column("page_url", sa.String(2000), nullable=True),
        sa.Column("body_hash", sa.String(64), nullable=True),
        sa.Column("etag", sa.String(500), nullable=True),
        sa.Column("last_modified", sa.String(100), nullable=True),
        sa.Column("missing", sa.Integer(), nullable=False),
        sa.Column("in_sitemap", sa.Boolean(), nullable=False),
        sa.Column("depth", sa.Integer(), nullable=False),
        sa.Column("status", sa.Integer(), nullable=False),
        sa.Column("error", sa.String(300), nullable=False),
        sa.Column("checked_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_crawl_pages")),
    )
    op.create_index("ix_crawl_pages_collection_origin", "crawl_pages", ["collection", "origin"])
    op.create_table(
        "ingest_runs",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("collection", sa.String(100), nullable=False),
        sa.Column("origin", sa.String(2000), nullable=False),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("documents", sa.Integer(), nullable=False),
        sa.Column("found", sa.Integer(), nullable=False),
        sa.Column("fetched", sa.Integer(), nullable=False),
        sa.Column("unchanged", sa.Integer(), nullable=False),
        sa.Column("changed", sa.Integer(), nullable=False),
        sa.Column("failed", sa.Integer(), nullable=False),
        sa.Column("removed", sa.Integer(), nullable=False),
        sa.Column("skipped", sa.Integer(), nullable=False),
        sa.Column("requests", sa.Integer(), nullable=False),
        sa.Column("bytes", sa.BigInteger(), nullable=False),
        sa.Column("errors", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ingest_runs")),
    )
    op.create_index("ix_ingest_runs_collection_origin", "ingest_runs", ["collection", "origin"])


def downgrade() -> None:
    op.drop_index("ix_ingest_runs_collection_origin", table_name="ingest_runs")
    op.drop_table("ingest_runs")
    op.drop_index("ix_crawl_pages_collection_origin", table_name="crawl_pages")
    op.drop_table("crawl_pages")
