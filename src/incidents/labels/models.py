"""One relevance label per (bank, incident, precedent): the mark, who gave it, when and how."""

from datetime import datetime

from sqlalchemy import JSON, Float, ForeignKey, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from incidents.database import Base
from incidents.timeutil import UTCDateTime, utcnow


class RelevanceLabel(Base):
    """``mark`` is same_failure, related or not_related; ``how`` is engineer (a click on the form or the
    API) or inferred (from the post-mortem). ``features`` and ``probability`` are the confidence model's
    inputs and output when the briefing cited the precedent, so a refit can learn from the mark."""

    __tablename__ = "relevance_labels"
    __table_args__ = (UniqueConstraint("bank_id", "incident_id", "precedent"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    bank_id: Mapped[str] = mapped_column(String(255), index=True)
    incident_id: Mapped[int] = mapped_column(ForeignKey("incidents.id"), index=True)
    precedent: Mapped[str] = mapped_column(String(255))
    mark: Mapped[str] = mapped_column(String(16))
    how: Mapped[str] = mapped_column(String(16))
    who: Mapped[str] = mapped_column(String(255))
    probability: Mapped[float | None] = mapped_column(Float, nullable=True)
    features: Mapped[list[float]] = mapped_column(JSON, default=list)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, index=True)
