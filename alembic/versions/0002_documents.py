"""documents, chunks, embeddings, corpus versions

Revision ID: 0002_documents
Revises: 0001_baseline
"""

from __future__ import annotations

import sqlalchemy as sa

from alembic import op

revision = "0002_documents"
down_revision = "0001_baseline"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "documents",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("collection", sa.String(100), nullable=False),
        sa.Column("origin", sa.String(2000), nullable=False),
        sa.Column("source", sa.String(2000), nullable=False),
        sa.Column("title", sa.String(500), nullable=False),
        sa.Column("crumbs", sa.JSON(), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("summary", sa.Text(), nullable=False),
        sa.Column("keypoints", sa.JSON(), nullable=False),
        sa.Column("keywords", sa.JSON(), nullable=False),
        sa.Column("content_hash", sa.String(64), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_documents")),
    )
    op.create_index(op.f("ix_documents_collection"), "documents", ["collection"])
    op.create_index("ix_documents_collection_origin", "documents", ["collection", "origin"])
    op.create_table(
        "chunks",
        sa.Column("id", sa.String(80), nullable=False),
        sa.Column("doc_id", sa.String(64), nullable=False),
        sa.Column("collection", sa.String(100), nullable=False),
        sa.Column("section", sa.String(300), nullable=False),
        sa.Column("title", sa.String(500), nullable=False),
        sa.Column("crumbs", sa.JSON(), nullable=False),
        sa.Column("url", sa.String(2300), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("ord", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["doc_id"], ["documents.id"], name=op.f("fk_chunks_doc_id_documents"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_chunks")),
    )
    op.create_index(op.f("ix_chunks_doc_id"), "chunks", ["doc_id"])
    op.create_index(op.f("ix_chunks_collection"), "chunks", ["collection"])
    op.create_table(
        "embeddings",
        sa.Column("chunk_id", sa.String(80), nullable=False),
        sa.Column("model", sa.String(200), nullable=False),
        sa.Column("dim", sa.Integer(), nullable=False),
        sa.Column("vector", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(
            ["chunk_id"], ["chunks.id"], name=op.f("fk_embeddings_chunk_id_chunks"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("chunk_id", name=op.f("pk_embeddings")),
    )
    op.create_table(
        "corpus_versions",
        sa.Column("collection", sa.String(100), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("collection", name=op.f("pk_corpus_versions")),
    )


def downgrade() -> None:
    op.drop_table("corpus_versions")
    op.drop_table("embeddings")
    op.drop_index(op.f("ix_chunks_collection"), table_name="chunks")
    op.drop_index(op.f("ix_chunks_doc_id"), table_name="chunks")
    op.drop_table("chunks")
    op.drop_index("ix_documents_collection_origin", table_name="documents")
    op.drop_index(op.f("ix_documents_collection"), table_name="documents")
    op.drop_table("documents")
