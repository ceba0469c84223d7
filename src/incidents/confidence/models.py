"""One row per refit of a bank's confidence model, adopted or not."""

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, Float, String, Text, UniqueConstraint, false
from sqlalchemy.orm import Mapped, mapped_column

from incidents.database import Base
from incidents.timeutil import UTCDateTime, utcnow


class ConfidenceFit(Base):
    """A fit (``data``, the team fit's parameters) with the labels it saw and how it did on held-out
    folds of them against the fit in use then. ``active`` marks the one briefings use (at most one per
    bank; none means the shipped fit). ``held`` marks a fit an operator rolled back: while one is held,
    the worker refits nothing, so the rollback is not undone by the next few labels."""

    __tablename__ = "confidence_fits"
    __table_args__ = (UniqueConstraint("bank_id", "version"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    bank_id: Mapped[str] = mapped_column(String(255), index=True)
    version: Mapped[int]
    labels: Mapped[int]
    engineer_labels: Mapped[int]
    held_out_loss: Mapped[float] = mapped_column(Float)
    current_loss: Mapped[float] = mapped_column(Float)
    ece: Mapped[float] = mapped_column(Float)
    adopted: Mapped[bool] = mapped_column(Boolean)
    active: Mapped[bool] = mapped_column(Boolean, default=False)
    held: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    note: Mapped[str] = mapped_column(Text, default="")
    data: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, index=True)
