"""A grade per stored briefing version, given when its incident is resolved."""

from datetime import datetime

from sqlalchemy import ForeignKey, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from incidents.database import Base
from incidents.timeutil import UTCDateTime, utcnow


class BriefingGrade(Base):
    """100 / 65 / 35 / 0 from the deterministic grader, why, and the record that made it right."""

    __tablename__ = "briefing_grades"

    id: Mapped[int] = mapped_column(primary_key=True)
    briefing_id: Mapped[int] = mapped_column(ForeignKey("briefings.id"), unique=True)
    incident_id: Mapped[int] = mapped_column(ForeignKey("incidents.id"), index=True)
    version: Mapped[int]
    score: Mapped[int]
    reason: Mapped[str] = mapped_column(Text)
    matched: Mapped[str | None] = mapped_column(String(255), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, index=True)
