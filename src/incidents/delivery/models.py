"""Delivery channels (routing only, never secrets) and the delivery outbox, one row per event and channel.

A channel's secret (webhook URL, bot token, signing key) lives in the configuration the process read;
the table keeps what the transaction that records an event needs to route it (services, minimum
severity, events) and a display label safe to show on a page. Rows name their channel, so a worker
looks the secret up by name when it delivers.
"""

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from incidents.database import Base
from incidents.timeutil import UTCDateTime, utcnow


class DeliveryChannel(Base):
    """A configured channel as the event writers see it: where it may be routed, never how to reach it."""

    __tablename__ = "delivery_channels"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    kind: Mapped[str] = mapped_column(String(16))  # slack | apprise | webhook
    label: Mapped[str] = mapped_column(String(255))  # e.g. "#oncall", "mailto://smtp.example.org"
    services: Mapped[list[str]] = mapped_column(JSON, default=list)  # empty: every service
    min_severity: Mapped[str | None] = mapped_column(String(32), nullable=True)
    events: Mapped[list[str]] = mapped_column(JSON, default=list)  # empty: every event
    enabled: Mapped[bool] = mapped_column(default=True)  # False once the configuration drops it
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    # A receiver's Retry-After: no message of the channel is sent before (it limits the channel).
    held_until: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)


class Delivery(Base):
    """One message owed to one channel: pending, then sent (with the receiver's id for it) or failed."""

    __tablename__ = "deliveries"
    __table_args__ = (
        Index("ix_deliveries_due", "state", "next_attempt_at"),
        Index("ix_deliveries_thread", "incident_id", "channel", "id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    incident_id: Mapped[int | None] = mapped_column(ForeignKey("incidents.id"), nullable=True)
    channel: Mapped[str] = mapped_column(String(64))
    event: Mapped[str] = mapped_column(String(32))
    payload: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    state: Mapped[str] = mapped_column(String(16), default="pending")  # pending | failing | sent | failed
    attempts: Mapped[int] = mapped_column(default=0)
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)
    last_error_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    next_attempt_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    locked_until: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    # When it was queued, or queued again by ``notify retry``: its retry window starts here.
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    sent_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    ref: Mapped[str | None] = mapped_column(
        String(255), nullable=True
    )  # Slack ts: later posts thread under it
