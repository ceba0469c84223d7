"""The one backoff rule, and ``Retry-After`` read as the untrusted input it is."""

import math
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

from hypothesis import given
from hypothesis import strategies as st

from incidents.queue.backoff import (
    BACKOFF_MAX_S,
    BACKOFF_MIN_S,
    MAX_RETRY_AFTER_S,
    backoff_delay,
    retry_after_seconds,
)

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@given(st.integers(min_value=1, max_value=10_000))
def test_backoff_is_jittered_exponential_and_capped(attempts: int) -> None:
    ceiling = max(BACKOFF_MIN_S, min(BACKOFF_MAX_S, 2.0 ** min(attempts - 1, 64)))
    assert BACKOFF_MIN_S <= backoff_delay(attempts) <= ceiling


def test_nan_and_infinity_are_no_answer_not_a_delay() -> None:
    for value in ("nan", "NaN", "inf", "-inf", "Infinity", "1e999"):
        assert retry_after_seconds(value, now=NOW) is None, value


def test_seconds_and_http_dates_are_read_and_bounded() -> None:
    assert retry_after_seconds("30", now=NOW) == 30.0
    assert retry_after_seconds(" 2.5 ", now=NOW) == 2.5
    assert retry_after_seconds("-5", now=NOW) == 0.0
    assert retry_after_seconds("99999999", now=NOW) == MAX_RETRY_AFTER_S
    assert retry_after_seconds(format_datetime(NOW + timedelta(seconds=90), usegmt=True), now=NOW) == 90.0
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT", now=NOW) == 0.0  # in the past: now
    assert retry_after_seconds("soon", now=NOW) is None
    assert retry_after_seconds(None, now=NOW) is None


@given(st.text(max_size=40))
def test_any_header_value_is_none_or_a_finite_bounded_delay(value: str) -> None:
    seconds = retry_after_seconds(value, now=NOW)
    assert seconds is None or (math.isfinite(seconds) and 0.0 <= seconds <= MAX_RETRY_AFTER_S)
