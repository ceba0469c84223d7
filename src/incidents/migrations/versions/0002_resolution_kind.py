"""resolution kind: how an incident ended (fixed, mitigated, self-recovered, false-alarm, duplicate)

Existing resolutions get "" (not recorded); their memory records read the same way, since version 1
of the labeled template had no kind.

Revision ID: 0002
Revises: 0001
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("resolutions") as batch:
        batch.add_column(
            sa.Column("resolution_kind", sa.String(length=32), nullable=False, server_default="")
        )


def downgrade() -> None:
    with op.batch_alter_table("resolutions") as batch:
        batch.drop_column("resolution_kind")
