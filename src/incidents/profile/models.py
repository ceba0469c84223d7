"""What this deployment knows about each reliability profile, kept so the page never goes blank.

The profile itself lives in the memory bank as a mental model. This row mirrors its last content and
carries the bookkeeping the debounced refresh needs (when a refresh was asked for, which memory writes
it covered), so both survive restarts and are shared by every process on the same database.
"""

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from incidents.database import Base
from incidents.timeutil import UTCDateTime, utcnow


class ProfileState(Base):
    __tablename__ = "profile_state"

    model_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    name: Mapped[str] = mapped_column(String(255))
    service: Mapped[str | None] = mapped_column(String(255), nullable=True)
    content: Mapped[str] = mapped_column(Text, default="")
    structured: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    last_refreshed_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    # The newest memory write (outbox synced_at) the current content was built from.
    last_memory_seen_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    refresh_requested_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    refresh_memory_mark: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    operation_id: Mapped[str | None] = mapped_column(String(255), nullable=True)
    operation_status: Mapped[str | None] = mapped_column(String(16), nullable=True)
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, onupdate=utcnow)
