"""The server-side chart: counts land in the right period and series, and bars stay inside the plot."""

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from web.http.views.chart import OTHER, count_by_period, stacked_bars

T0 = datetime(2026, 3, 2, 9, 30, tzinfo=UTC)  # a Monday


def test_daily_counts_per_series() -> None:
    points = [("checkout", T0), ("checkout", T0 + timedelta(hours=2)), ("payments", T0 + timedelta(days=2))]
    counts = count_by_period(points)
    assert counts.unit == "day"
    assert len(counts.periods) == 3
    assert counts.series == {"checkout": [2, 0, 0], "payments": [0, 0, 1]}


def test_long_spans_switch_to_weeks_then_months() -> None:
    assert count_by_period([("a", T0), ("a", T0 + timedelta(days=90))]).unit == "week"
    months = count_by_period([("a", T0), ("a", T0 + timedelta(days=800))])
    assert months.unit == "month"
    assert months.periods[0].day == 1


def test_small_series_fold_into_other() -> None:
    points = [(f"svc-{i}", T0 + timedelta(hours=i)) for i in range(12)] + [("svc-0", T0)]
    counts = count_by_period(points, max_series=4)
    assert list(counts.series)[:3] == ["svc-0", "svc-1", "svc-10"]
    assert OTHER in counts.series
    assert sum(sum(v) for v in counts.series.values()) == 13


def test_empty_input_draws_an_empty_chart() -> None:
    chart = stacked_bars(count_by_period([]))
    assert chart.bars == []
    assert chart.total == 0


@given(
    st.lists(
        st.tuples(st.sampled_from(["a", "b", "c"]), st.integers(min_value=0, max_value=2000)),
        min_size=1,
        max_size=60,
    )
)
def test_every_point_is_drawn_inside_the_plot(raw: list[tuple[str, int]]) -> None:
    points = [(name, T0 + timedelta(days=offset)) for name, offset in raw]
    chart = stacked_bars(count_by_period(points))
    assert chart.total == len(points)
    for bar in chart.bars:
        assert chart.plot_top - 1e-6 <= bar.y
        assert bar.y + bar.height <= chart.plot_bottom + 1e-6
        assert chart.plot_left <= bar.x <= chart.width
