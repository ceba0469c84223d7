"""Times on the pages read in the right direction: a retry still to come is "in 2 min", not "ago"."""

from datetime import UTC, datetime, timedelta

import pytest

from web.http.templating import ago, next_try

NOW = datetime(2025, 1, 1, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("offset_s", "shown"),
    [
        (-9, "9 s ago"),
        (-180, "3 min ago"),
        (-2 * 86400, "2 d ago"),
        (9, "in 9 s"),
        (0.4, "in 0 s"),  # a hold ending within the second is still ahead, not "0 s ago"
        (150, "in 2 min"),
        (3 * 3600, "in 3 h"),
    ],
)
def test_past_and_future_times_are_worded_by_their_direction(offset_s: float, shown: str) -> None:
    assert ago(NOW + timedelta(seconds=offset_s), NOW) == shown


def test_no_time_is_never() -> None:
    assert ago(None, NOW) == "never"


@pytest.mark.parametrize(
    ("offset_s", "shown"),
    [(150, "in 2 min"), (0, "due now"), (-180, "due now")],
    ids=["ahead", "now", "overdue"],
)
def test_a_retry_whose_time_has_come_is_due_never_minutes_ago(offset_s: float, shown: str) -> None:
    assert next_try(NOW + timedelta(seconds=offset_s), NOW) == shown
