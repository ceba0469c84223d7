"""A normalized alert, kept with the payload it arrived in."""

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from incidents.database import Base
from incidents.timeutil import UTCDateTime, utcnow


class Alert(Base):
    __tablename__ = "alerts"
    __table_args__ = (
        Index("ix_alerts_incident_received", "incident_id", "received_at"),
        Index("ix_alerts_source_fingerprint", "source", "fingerprint"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    # source + fingerprint + status + starts_at (+ severity, for an alert re-sent worse than it was):
    # a redelivered payload maps to the same key.
    idempotency_key: Mapped[str] = mapped_column(String(512), unique=True)
    source: Mapped[str] = mapped_column(String(32))
    fingerprint: Mapped[str] = mapped_column(String(255))
    status: Mapped[str] = mapped_column(String(16))  # firing | resolved | acknowledged
    alertname: Mapped[str] = mapped_column(String(255))
    service: Mapped[str] = mapped_column(String(255), index=True)
    severity: Mapped[str] = mapped_column(String(32))
    summary: Mapped[str] = mapped_column(Text, default="")
    description: Mapped[str] = mapped_column(Text, default="")
    labels: Mapped[dict[str, str]] = mapped_column(JSON, default=dict)
    annotations: Mapped[dict[str, str]] = mapped_column(JSON, default=dict)
    starts_at: Mapped[datetime] = mapped_column(UTCDateTime)
    ends_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    generator_url: Mapped[str | None] = mapped_column(Text, nullable=True)
    runbook_url: Mapped[str | None] = mapped_column(Text, nullable=True)
    dedup_key: Mapped[str | None] = mapped_column(String(255), nullable=True)
    raw_payload: Mapped[dict[str, Any]] = mapped_column(JSON)
    received_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    incident_id: Mapped[int | None] = mapped_column(ForeignKey("incidents.id"), nullable=True)
