"""server-side sessions and shared sign-in failure counts

Revision ID: 0005
Revises: 0002
Create Date: 2026-12-01 09:30:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import incidents.timeutil

revision: str = "0005"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "user_sessions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("secret_hash", sa.String(length=64), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("created_at", incidents.timeutil.UTCDateTime(timezone=True), nullable=False),
        sa.Column("last_seen_at", incidents.timeutil.UTCDateTime(timezone=True), nullable=False),
        sa.Column("ended_at", incidents.timeutil.UTCDateTime(timezone=True), nullable=True),
        sa.Column("ended_reason", sa.String(length=32), nullable=True),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_user_sessions_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_user_sessions")),
        sa.UniqueConstraint("secret_hash", name=op.f("uq_user_sessions_secret_hash")),
    )
    with op.batch_alter_table("user_sessions", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_user_sessions_user_id"), ["user_id"], unique=False)
    op.create_table(
        "signin_failures",
        sa.Column("key", sa.String(length=64), nullable=False),
        sa.Column("failures", sa.Integer(), nullable=False),
        sa.Column("last_failure_at", incidents.timeutil.UTCDateTime(timezone=True), nullable=False),
        sa.Column("blocked_until", incidents.timeutil.UTCDateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_signin_failures")),
    )


def downgrade() -> None:
    op.drop_table("signin_failures")
    with op.batch_alter_table("user_sessions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_user_sessions_user_id"))
    op.drop_table("user_sessions")
