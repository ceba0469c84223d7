"""Timezone-aware UTC everywhere: the database may hand back naive values (SQLite), these put UTC back."""

from datetime import UTC, datetime, timedelta

from sqlalchemy import DateTime
from sqlalchemy.types import TypeDecorator

EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
FUTURE_SLACK = timedelta(days=1)  # clocks drift and zones get confused, but not by more than this


def utcnow() -> datetime:
    return datetime.now(UTC)


def plausible(value: datetime) -> datetime:
    """``value`` when it could be when something happened: not before 1970, at most a day ahead.

    A start time in year 9999 would sort that incident first in every list for ever, so it is an
    input error (``ValueError`` naming the bound), not data."""
    if value < EARLIEST:
        raise ValueError(f"timestamp {value.isoformat()} is before 1970")
    if value > utcnow() + FUTURE_SLACK:
        raise ValueError(f"timestamp {value.isoformat()} is more than a day in the future")
    return value


class UTCDateTime(TypeDecorator[datetime]):
    """Stores UTC, returns aware datetimes on every backend."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect) -> datetime | None:  # type: ignore[no-untyped-def]
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime: RecallOps stores timezone-aware UTC only")
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect) -> datetime | None:  # type: ignore[no-untyped-def]
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
