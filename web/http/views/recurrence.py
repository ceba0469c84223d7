"""A pattern's recurrence drawn on the server: its incidents as dots on a time line, and the next
expected one as a hollow dot, in a small SVG the template writes out (no script, no chart library)."""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from memory.service import Recurrence

WIDTH = 320
HEIGHT = 34
PAD = 8


@dataclass(frozen=True)
class Dot:
    x: float
    title: str
    expected: bool = False


@dataclass(frozen=True)
class Strip:
    width: int
    height: int
    axis_y: float
    left: float
    right: float
    dots: list[Dot]
    start_label: str
    end_label: str


def recurrence_strip(dates: Sequence[datetime], found: Recurrence) -> Strip:
    """Dots for ``dates`` from the first to the next expected date (or the last, without a period)."""
    end = found.next_expected or found.last
    start = found.first
    span = max((end - start).total_seconds(), 1.0)

    def x(moment: datetime) -> float:
        return round(PAD + (WIDTH - 2 * PAD) * (moment - start).total_seconds() / span, 1)

    dots = [Dot(x(d), d.date().isoformat()) for d in sorted(dates)]
    if found.next_expected is not None:
        dots.append(Dot(x(found.next_expected), f"next due around {end.date().isoformat()}", True))
    return Strip(
        width=WIDTH,
        height=HEIGHT,
        axis_y=HEIGHT / 2 - 4,
        left=PAD,
        right=WIDTH - PAD,
        dots=dots,
        start_label=start.date().isoformat(),
        end_label=end.date().isoformat(),
    )
