"""the memory the service uses, recorded by recallops serve for admin commands to compare with

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-06 03:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import incidents.timeutil

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "service_memory",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("driver", sa.String(length=16), nullable=False),
        sa.Column("location", sa.String(length=1024), nullable=False),
        sa.Column("host", sa.String(length=255), nullable=False),
        sa.Column("recorded_at", incidents.timeutil.UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_service_memory")),
    )


def downgrade() -> None:
    op.drop_table("service_memory")
