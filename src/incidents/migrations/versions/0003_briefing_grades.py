"""briefing grades

Revision ID: 0003
Revises: 0005
Create Date: 2026-12-01 09:45:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import incidents.timeutil

revision: str = "0003"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "briefing_grades",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("briefing_id", sa.Integer(), nullable=False),
        sa.Column("incident_id", sa.Integer(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("score", sa.Integer(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("matched", sa.String(length=255), nullable=True),
        sa.Column("created_at", incidents.timeutil.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["briefing_id"], ["briefings.id"], name=op.f("fk_briefing_grades_briefing_id_briefings")
        ),
        sa.ForeignKeyConstraint(
            ["incident_id"], ["incidents.id"], name=op.f("fk_briefing_grades_incident_id_incidents")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_briefing_grades")),
        sa.UniqueConstraint("briefing_id", name=op.f("uq_briefing_grades_briefing_id")),
    )
    with op.batch_alter_table("briefing_grades", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_briefing_grades_incident_id"), ["incident_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_briefing_grades_created_at"), ["created_at"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("briefing_grades", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_briefing_grades_created_at"))
        batch_op.drop_index(batch_op.f("ix_briefing_grades_incident_id"))
    op.drop_table("briefing_grades")
