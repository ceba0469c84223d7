"""The review queue: one row per source document the importer read, with the fields extracted from it.

``fields`` maps each drafted field (the labeled template's, plus ``service`` and ``title``) to
``{"value": ..., "spans": [[start, end], ...], "origin": "text" | "meta" | "edited"}``, offsets into
``source_text``: the proof a reviewer checks before accepting. ``content_hash`` is unique, so the same
document read again is recognised and drafts nothing. ``revises`` names the incident a changed version
of an accepted document would replace the record of, and ``revision_reason`` why it is taken for one.
"""

from datetime import datetime
from typing import Any, Literal

from sqlalchemy import JSON, Float, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from incidents.database import Base
from incidents.timeutil import UTCDateTime, utcnow

DraftState = Literal["pending", "accepted", "rejected"]
DRAFT_STATES: tuple[DraftState, ...] = ("pending", "accepted", "rejected")


class Draft(Base):
    """A drafted post-mortem: pending until a person accepts it into memory or rejects it, and why."""

    __tablename__ = "import_drafts"

    id: Mapped[int] = mapped_column(primary_key=True)
    content_hash: Mapped[str] = mapped_column(String(64), unique=True)
    source_name: Mapped[str] = mapped_column(String(500), index=True)
    source_kind: Mapped[str] = mapped_column(String(32))
    source_text: Mapped[str] = mapped_column(Text)
    source_meta: Mapped[dict[str, str]] = mapped_column(JSON)
    incident_id: Mapped[str] = mapped_column(String(64), index=True)  # the public id it is accepted as
    fields: Mapped[dict[str, Any]] = mapped_column(JSON)
    missing: Mapped[list[str]] = mapped_column(JSON)
    fill_rate: Mapped[float] = mapped_column(Float)
    near_duplicate: Mapped[str | None] = mapped_column(String(300), nullable=True)
    revises: Mapped[str | None] = mapped_column(String(64), nullable=True)
    revision_reason: Mapped[str | None] = mapped_column(String(300), nullable=True)
    state: Mapped[str] = mapped_column(String(16), default="pending", index=True)
    imported_by: Mapped[str] = mapped_column(String(255))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    decided_by: Mapped[str | None] = mapped_column(String(255), nullable=True)
    decided_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    reason: Mapped[str | None] = mapped_column(Text, nullable=True)  # why it was rejected
