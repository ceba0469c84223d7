"""delivery channels and the delivery outbox

Revision ID: 0004
Revises: 0003
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import incidents.timeutil

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "delivery_channels",
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("label", sa.String(length=255), nullable=False),
        sa.Column("services", sa.JSON(), nullable=False),
        sa.Column("min_severity", sa.String(length=32), nullable=True),
        sa.Column("events", sa.JSON(), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("updated_at", incidents.timeutil.UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_delivery_channels")),
    )
    op.create_table(
        "deliveries",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("incident_id", sa.Integer(), nullable=True),
        sa.Column("channel", sa.String(length=64), nullable=False),
        sa.Column("event", sa.String(length=32), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("next_attempt_at", incidents.timeutil.UTCDateTime(timezone=True), nullable=False),
        sa.Column("locked_until", incidents.timeutil.UTCDateTime(timezone=True), nullable=True),
        sa.Column("created_at", incidents.timeutil.UTCDateTime(timezone=True), nullable=False),
        sa.Column("sent_at", incidents.timeutil.UTCDateTime(timezone=True), nullable=True),
        sa.Column("ref", sa.String(length=255), nullable=True),
        sa.ForeignKeyConstraint(
            ["incident_id"], ["incidents.id"], name=op.f("fk_deliveries_incident_id_incidents")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_deliveries")),
    )
    with op.batch_alter_table("deliveries", schema=None) as batch_op:
        batch_op.create_index("ix_deliveries_due", ["state", "next_attempt_at"], unique=False)
        batch_op.create_index("ix_deliveries_thread", ["incident_id", "channel", "id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("deliveries", schema=None) as batch_op:
        batch_op.drop_index("ix_deliveries_thread")
        batch_op.drop_index("ix_deliveries_due")
    op.drop_table("deliveries")
    op.drop_table("delivery_channels")
