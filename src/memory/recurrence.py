"""When a failure pattern will happen again: its rate, and its period when the dates are regular.

A pattern's incidents have dates. Their rate is counted per 90 days over the span they cover (at
least 90 days, so two incidents in a week are not "26 per quarter"). A period is claimed only when the
dates are regular: three or more incidents whose gaps vary by at most ``MAX_VARIATION`` of their mean,
or two incidents whose one gap is a calendar cadence (a week, a month, a quarter, a year and the like:
certificates, batch jobs and quotas recur on those). Then the next one is expected one period after
the last.
"""

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from itertools import pairwise

WINDOW_DAYS = 90
MAX_VARIATION = 0.2
# Calendar cadences in days, and how far (as a share) a single gap may be from one to count as it.
CADENCES = (7, 14, 30, 60, 90, 180, 365)
CADENCE_TOLERANCE = 0.1
MIN_PERIOD_DAYS = 1


@dataclass(frozen=True)
class Recurrence:
    count: int
    per_90_days: float
    first: datetime
    last: datetime
    period_days: int | None = None

    @property
    def next_expected(self) -> datetime | None:
        return self.last + timedelta(days=self.period_days) if self.period_days else None

    def sentence(self, now: datetime | None = None) -> str:
        """ "This pattern recurs about every 90 days; the last was 2026-03-01, the next is expected around
        2026-05-30." (or its rate, when the dates are not regular). Once ``now`` is past that date the
        next "was due" then: an alert firing after it may be that one, and a date in the past said as
        expected reads as a mistake."""
        last = self.last.date().isoformat()
        if self.period_days and self.next_expected is not None:
            due = self.next_expected.date()
            when = "was due" if now is not None and due < now.date() else "is expected"
            return (
                f"This pattern recurs about every {self.period_days} days; the last was {last}, "
                f"the next {when} around {due.isoformat()}."
            )
        if self.count == 1:
            return f"This pattern was seen once, on {last}."
        return (
            f"This pattern was seen {self.count} times, about {self.per_90_days:g} per 90 days, at no "
            f"regular interval; the last was {last}."
        )


def _period(days: list[float]) -> int | None:
    if not days or min(days) < MIN_PERIOD_DAYS:
        return None
    mean = statistics.fmean(days)
    if len(days) >= 2:
        return round(mean) if statistics.pstdev(days) <= MAX_VARIATION * mean else None
    cadence = min(CADENCES, key=lambda c: abs(c - mean))
    return round(mean) if abs(cadence - mean) <= CADENCE_TOLERANCE * cadence else None


def recurrence(dates: Sequence[datetime]) -> Recurrence | None:
    """The recurrence of a pattern from its incidents' dates (``None`` without any)."""
    ordered = sorted(dates)
    if not ordered:
        return None
    first, last = ordered[0], ordered[-1]
    span = max((last - first).total_seconds() / 86400, WINDOW_DAYS)
    gaps = [(b - a).total_seconds() / 86400 for a, b in pairwise(ordered)]
    return Recurrence(
        count=len(ordered),
        per_90_days=round(len(ordered) / span * WINDOW_DAYS, 1),
        first=first,
        last=last,
        period_days=_period(gaps),
    )
