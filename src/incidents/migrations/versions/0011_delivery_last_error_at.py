"""a delivery keeps when its last error happened, which notify status shows with the error

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-05 21:10:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import incidents.timeutil

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("deliveries", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("last_error_at", incidents.timeutil.UTCDateTime(timezone=True), nullable=True)
        )


def downgrade() -> None:
    with op.batch_alter_table("deliveries", schema=None) as batch_op:
        batch_op.drop_column("last_error_at")
