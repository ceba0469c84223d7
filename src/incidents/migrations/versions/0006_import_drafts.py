"""the review queue of drafted post-mortems

Revision ID: 0006
Revises: 0004
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import incidents.timeutil

revision: str = "0006"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "import_drafts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("source_name", sa.String(length=500), nullable=False),
        sa.Column("source_kind", sa.String(length=32), nullable=False),
        sa.Column("source_text", sa.Text(), nullable=False),
        sa.Column("source_meta", sa.JSON(), nullable=False),
        sa.Column("incident_id", sa.String(length=64), nullable=False),
        sa.Column("fields", sa.JSON(), nullable=False),
        sa.Column("missing", sa.JSON(), nullable=False),
        sa.Column("fill_rate", sa.Float(), nullable=False),
        sa.Column("near_duplicate", sa.String(length=300), nullable=True),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("imported_by", sa.String(length=255), nullable=False),
        sa.Column("created_at", incidents.timeutil.UTCDateTime(timezone=True), nullable=False),
        sa.Column("decided_by", sa.String(length=255), nullable=True),
        sa.Column("decided_at", incidents.timeutil.UTCDateTime(timezone=True), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_import_drafts")),
        sa.UniqueConstraint("content_hash", name=op.f("uq_import_drafts_content_hash")),
    )
    with op.batch_alter_table("import_drafts", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_import_drafts_incident_id"), ["incident_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_import_drafts_state"), ["state"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("import_drafts", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_import_drafts_state"))
        batch_op.drop_index(batch_op.f("ix_import_drafts_incident_id"))
    op.drop_table("import_drafts")
