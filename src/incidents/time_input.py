"""What a time given from outside must be, wherever it comes in (an alert, an import row, a draft's
edit): written out rather than a number, and plausible as when something happened.

One definition for every door; the standard library only, so ``memory``'s import rows use it too.
"""

import re
from datetime import UTC, datetime, timedelta

EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
FUTURE_SLACK = timedelta(days=1)  # clocks drift and zones get confused, but not by more than this

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
    if value > datetime.now(UTC) + FUTURE_SLACK:
        raise ValueError(f"timestamp {value.isoformat()} is more than a day in the future")
    return value
