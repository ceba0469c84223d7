"""Timezone-aware UTC everywhere: the database may hand back naive values (SQLite), these put UTC back."""

import re
from datetime import UTC, datetime, timedelta

from sqlalchemy import DateTime
from sqlalchemy.types import TypeDecorator

EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
FUTURE_SLACK = timedelta(days=1)  # clocks drift and zones get confused, but not by more than this


def utcnow() -> datetime:
    return datetime.now(UTC)


_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def written_out(value: object) -> object:
    """A time given as a number (``0``, ``0.5``, ``"1700000000"``) is refused: pydantic would read it as
    seconds since 1970, so a slip would become a date nobody meant. A ``BeforeValidator``."""
    if isinstance(value, bool | int | float) or (isinstance(value, str) and _NUMBER.fullmatch(value.strip())):
        raise ValueError(
            f"{value!r} is a number, not a time: write it in ISO 8601, e.g. 2026-11-29T21:00:00Z"
        )
    return value


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
