"""relevance labels of resolved incidents and the team's confidence fits

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01 21:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import incidents.timeutil

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "relevance_labels",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("bank_id", sa.String(length=255), nullable=False),
        sa.Column("incident_id", sa.Integer(), nullable=False),
        sa.Column("precedent", sa.String(length=255), nullable=False),
        sa.Column("mark", sa.String(length=16), nullable=False),
        sa.Column("how", sa.String(length=16), nullable=False),
        sa.Column("who", sa.String(length=255), nullable=False),
        sa.Column("probability", sa.Float(), nullable=True),
        sa.Column("features", sa.JSON(), nullable=False),
        sa.Column("created_at", incidents.timeutil.UTCDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", incidents.timeutil.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["incident_id"], ["incidents.id"], name=op.f("fk_relevance_labels_incident_id_incidents")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_relevance_labels")),
        sa.UniqueConstraint("bank_id", "incident_id", "precedent", name=op.f("uq_relevance_labels_bank_id")),
    )
    with op.batch_alter_table("relevance_labels", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_relevance_labels_bank_id"), ["bank_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_relevance_labels_incident_id"), ["incident_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_relevance_labels_updated_at"), ["updated_at"], unique=False)
    op.create_table(
        "confidence_fits",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("bank_id", sa.String(length=255), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("labels", sa.Integer(), nullable=False),
        sa.Column("engineer_labels", sa.Integer(), nullable=False),
        sa.Column("held_out_loss", sa.Float(), nullable=False),
        sa.Column("current_loss", sa.Float(), nullable=False),
        sa.Column("ece", sa.Float(), nullable=False),
        sa.Column("adopted", sa.Boolean(), nullable=False),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.Column("created_at", incidents.timeutil.UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_confidence_fits")),
        sa.UniqueConstraint("bank_id", "version", name=op.f("uq_confidence_fits_bank_id")),
    )
    with op.batch_alter_table("confidence_fits", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_confidence_fits_bank_id"), ["bank_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_confidence_fits_created_at"), ["created_at"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("confidence_fits", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_confidence_fits_created_at"))
        batch_op.drop_index(batch_op.f("ix_confidence_fits_bank_id"))
    op.drop_table("confidence_fits")
    with op.batch_alter_table("relevance_labels", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_relevance_labels_updated_at"))
        batch_op.drop_index(batch_op.f("ix_relevance_labels_incident_id"))
        batch_op.drop_index(batch_op.f("ix_relevance_labels_bank_id"))
    op.drop_table("relevance_labels")
