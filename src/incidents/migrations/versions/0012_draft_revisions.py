"""a draft may be a revision of an incident an earlier draft was accepted as

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-05 21:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("import_drafts", schema=None) as batch_op:
        batch_op.add_column(sa.Column("revises", sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column("revision_reason", sa.String(length=300), nullable=True))
        batch_op.create_index(batch_op.f("ix_import_drafts_source_name"), ["source_name"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("import_drafts", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_import_drafts_source_name"))
        batch_op.drop_column("revision_reason")
        batch_op.drop_column("revises")
