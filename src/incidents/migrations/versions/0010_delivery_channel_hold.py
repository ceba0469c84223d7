"""a receiver's Retry-After holds every message of its channel, not only the one it answered

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-05 21:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import incidents.timeutil

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("delivery_channels", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("held_until", incidents.timeutil.UTCDateTime(timezone=True), nullable=True)
        )


def downgrade() -> None:
    with op.batch_alter_table("delivery_channels", schema=None) as batch_op:
        batch_op.drop_column("held_until")
