"""How long to wait before the next attempt: the one backoff rule, and a receiver's ``Retry-After``.

Backoff is exponential with full jitter (tenacity's ``wait_random_exponential``): after the n-th
failure, uniform in [1, min(600, 2**(n-1))] seconds. ``Retry-After`` comes from a party outside the
process, so it is untrusted: seconds or an HTTP date, finite, never negative, capped.
"""

import math
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

from tenacity import RetryCallState, Retrying, wait_random_exponential

BACKOFF_MIN_S = 1.0
BACKOFF_MAX_S = 600.0
MAX_RETRY_AFTER_S = 3600.0

_BACKOFF = wait_random_exponential(multiplier=1, min=BACKOFF_MIN_S, max=BACKOFF_MAX_S)


def backoff_delay(attempts: int) -> float:
    """Seconds to wait after the ``attempts``-th consecutive failure."""
    state = RetryCallState(retry_object=Retrying(), fn=None, args=(), kwargs={})
    state.attempt_number = max(1, attempts)
    return float(_BACKOFF(state))


def retry_after_seconds(
    value: str | None, *, now: datetime | None = None, cap_s: float = MAX_RETRY_AFTER_S
) -> float | None:
    """A ``Retry-After`` header as seconds in [0, ``cap_s``]; None when absent or not a delay at all.

    RFC 9110 allows a whole number of seconds or an HTTP date. Decimals are taken too (some receivers
    send them); ``nan``, ``inf`` and anything else unparseable is no answer, so the backoff rule applies.
    """
    if value is None:
        return None
    text = value.strip()
    try:
        seconds: float | None = float(text)
    except ValueError:
        seconds = _seconds_until(text, now or datetime.now(UTC))
    if seconds is None or not math.isfinite(seconds):
        return None
    return min(max(seconds, 0.0), cap_s)


def _seconds_until(text: str, now: datetime) -> float | None:
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return (when - now).total_seconds()
