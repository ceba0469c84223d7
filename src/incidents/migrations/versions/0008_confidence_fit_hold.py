"""a rollback holds the team's confidence fit until an operator refits

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-05 18:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("confidence_fits", schema=None) as batch_op:
        batch_op.add_column(sa.Column("held", sa.Boolean(), nullable=False, server_default=sa.false()))


def downgrade() -> None:
    with op.batch_alter_table("confidence_fits", schema=None) as batch_op:
        batch_op.drop_column("held")
