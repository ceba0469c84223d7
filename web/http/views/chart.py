"""Stacked bar charts drawn on the server as SVG geometry: no script, no chart library, works offline.

``count_by_period`` buckets timestamps per series (day, week or month, whichever keeps the bars
readable); ``stacked_bars`` lays the counts out as rectangles with axis ticks, which a template writes
as ``<rect>`` elements whose colour comes from a CSS class (so light and dark themes both work).
"""

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

MAX_SERIES = 8  # the stylesheet has eight series colours; the rest are folded into "other"
OTHER = "other"


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    series: int
    title: str


@dataclass(frozen=True)
class Tick:
    position: float
    label: str


@dataclass(frozen=True)
class Chart:
    width: int
    height: int
    plot_left: float
    plot_bottom: float
    plot_top: float
    bars: list[Bar]
    x_ticks: list[Tick]
    y_ticks: list[Tick]
    legend: list[str]
    total: int
    unit: str


@dataclass(frozen=True)
class Counts:
    periods: list[date]
    series: dict[str, list[int]]  # name -> count per period, ordered by total (largest first)
    unit: str  # day | week | month


def _period_start(moment: datetime, unit: str) -> date:
    day = moment.astimezone(UTC).date()
    if unit == "week":
        return day - timedelta(days=day.weekday())
    if unit == "month":
        return day.replace(day=1)
    return day


def _next_period(start: date, unit: str) -> date:
    if unit == "week":
        return start + timedelta(days=7)
    if unit == "month":
        return (start.replace(day=28) + timedelta(days=4)).replace(day=1)
    return start + timedelta(days=1)


def _unit_for(span: timedelta) -> str:
    if span <= timedelta(days=31):
        return "day"
    if span <= timedelta(days=7 * 52):
        return "week"
    return "month"


def count_by_period(points: Iterable[tuple[str, datetime]], max_series: int = MAX_SERIES) -> Counts:
    """Count (series, timestamp) points per period; series beyond ``max_series`` become "other"."""
    items = list(points)
    if not items:
        return Counts(periods=[], series={}, unit="day")
    first = min(moment for _, moment in items)
    last = max(moment for _, moment in items)
    unit = _unit_for(last - first)
    periods = [_period_start(first, unit)]
    while periods[-1] < _period_start(last, unit):
        periods.append(_next_period(periods[-1], unit))
    totals = Counter(name for name, _ in items)
    ranked = [name for name, _ in sorted(totals.items(), key=lambda kv: (-kv[1], kv[0]))]
    keep = ranked if len(ranked) <= max_series else ranked[: max_series - 1]
    index = {period: i for i, period in enumerate(periods)}
    series: dict[str, list[int]] = {name: [0] * len(periods) for name in keep}
    if len(keep) < len(ranked):
        series[OTHER] = [0] * len(periods)
    for name, moment in items:
        target = name if name in keep else OTHER
        series[target][index[_period_start(moment, unit)]] += 1
    return Counts(periods=periods, series=series, unit=unit)


def _nice_max(value: int) -> int:
    """The smallest of 1, 2, 5 x 10^k at or above ``value``, so y ticks land on round numbers."""
    step = 1
    while True:
        for factor in (1, 2, 5):
            if step * factor >= value:
                return step * factor
        step *= 10


def _label(period: date, unit: str) -> str:
    return period.strftime("%b %Y") if unit == "month" else period.strftime("%d %b")


def stacked_bars(counts: Counts, *, width: int = 560, height: int = 200) -> Chart:
    left, right, top, bottom = 30.0, 24.0, 8.0, 24.0
    plot_w, plot_h = width - left - right, height - top - bottom
    n = max(len(counts.periods), 1)
    column_totals = [sum(values[i] for values in counts.series.values()) for i in range(len(counts.periods))]
    y_max = _nice_max(max(column_totals, default=0) or 1)
    slot = plot_w / n
    bar_w = max(slot * 0.8, 1.0)
    bars: list[Bar] = []
    for i, period in enumerate(counts.periods):
        stacked = 0
        for s, (name, values) in enumerate(counts.series.items()):
            if not values[i]:
                continue
            h = values[i] / y_max * plot_h
            y = top + plot_h - (stacked / y_max * plot_h) - h
            title = f"{name}: {values[i]} ({counts.unit} of {period.isoformat()})"
            x = left + i * slot + (slot - bar_w) / 2
            bars.append(Bar(x=x, y=y, width=bar_w, height=h, series=s, title=title))
            stacked += values[i]
    label_every = max(1, round(n / 8))
    x_ticks = [
        Tick(position=left + i * slot + slot / 2, label=_label(period, counts.unit))
        for i, period in enumerate(counts.periods)
        if i % label_every == 0
    ]
    marks = (0, y_max // 2, y_max) if y_max % 2 == 0 else (0, y_max)
    y_ticks = [Tick(position=top + plot_h - v / y_max * plot_h, label=str(v)) for v in marks]
    return Chart(
        width=width,
        height=height,
        plot_left=left,
        plot_bottom=top + plot_h,
        plot_top=top,
        bars=bars,
        x_ticks=x_ticks,
        y_ticks=y_ticks,
        legend=list(counts.series),
        total=sum(column_totals),
        unit=counts.unit,
    )
