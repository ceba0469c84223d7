"""Incidents and their timeline."""

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from incidents.database import Base
from incidents.timeutil import UTCDateTime, utcnow


class Incident(Base):
    __tablename__ = "incidents"
    __table_args__ = (Index("ix_incidents_open_group", "status", "service", "alertname"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    public_id: Mapped[str] = mapped_column(String(64), unique=True)  # INC-0001, or an imported id
    title: Mapped[str] = mapped_column(Text)
    service: Mapped[str] = mapped_column(String(255), index=True)
    alertname: Mapped[str] = mapped_column(String(255))
    severity: Mapped[str] = mapped_column(String(32), index=True)
    status: Mapped[str] = mapped_column(String(16), index=True)  # triggered | acknowledged | resolved
    dedup_key: Mapped[str | None] = mapped_column(String(255), nullable=True, index=True)
    origin: Mapped[str] = mapped_column(String(16), default="alert")  # alert | import | seed
    alert_count: Mapped[int] = mapped_column(default=0)
    first_seen: Mapped[datetime] = mapped_column(UTCDateTime, index=True)
    last_seen: Mapped[datetime] = mapped_column(UTCDateTime)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, index=True)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, onupdate=utcnow)
    acknowledged_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    acknowledged_by: Mapped[str | None] = mapped_column(String(255), nullable=True)
    resolved_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    resolved_by: Mapped[str | None] = mapped_column(String(255), nullable=True)
    recurrence_of_id: Mapped[int | None] = mapped_column(ForeignKey("incidents.id"), nullable=True)


class IncidentEvent(Base):
    """One line of the timeline: what happened, when, and who or which source did it."""

    __tablename__ = "incident_events"

    id: Mapped[int] = mapped_column(primary_key=True)
    incident_id: Mapped[int] = mapped_column(ForeignKey("incidents.id"), index=True)
    at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    kind: Mapped[str] = mapped_column(String(32))
    actor: Mapped[str] = mapped_column(String(255))
    message: Mapped[str] = mapped_column(Text)
    data: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)


class Counter(Base):
    """Named sequences (the next readable incident number), portable across SQLite and PostgreSQL."""

    __tablename__ = "counters"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[int] = mapped_column(default=0)
