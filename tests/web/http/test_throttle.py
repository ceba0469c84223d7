"""The sign-in throttle on a hand-driven clock: limits, the wait it names, forgiveness, memory bound."""

from hypothesis import given
from hypothesis import strategies as st

from web.http.throttle import SignInThrottle, keys_for


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _throttle() -> tuple[SignInThrottle, Clock]:
    clock = Clock()
    return SignInThrottle(limit=5, window_s=900.0, clock=clock), clock


def test_the_sixth_attempt_within_the_window_waits_until_the_first_expires() -> None:
    throttle, clock = _throttle()
    keys = keys_for("dana", "10.0.0.1")
    for _ in range(5):
        assert throttle.admit(keys) is None
        clock.now += 60
    assert throttle.admit(keys) == 900 - 300  # the first attempt, at t=0, leaves the window at t=900
    clock.now += 600
    assert throttle.admit(keys) is None


def test_a_refused_attempt_is_not_counted() -> None:
    throttle, clock = _throttle()
    keys = keys_for("dana", None)
    for _ in range(5):
        throttle.admit(keys)
    for _ in range(20):
        assert throttle.admit(keys) == 900
    clock.now += 900
    assert throttle.admit(keys) is None


def test_the_name_alone_or_the_address_alone_is_enough_to_wait() -> None:
    throttle, _ = _throttle()
    for n in range(5):
        throttle.admit(keys_for("dana", f"10.0.0.{n}"))
    assert throttle.admit(keys_for("dana", "10.9.9.9")) is not None
    assert throttle.admit(keys_for("lee", "10.0.0.1")) is None
    for n in range(5):
        throttle.admit(keys_for(f"user{n}", "192.0.2.7"))
    assert throttle.admit(keys_for("sam", "192.0.2.7")) is not None


def test_names_are_counted_case_insensitively() -> None:
    throttle, _ = _throttle()
    for name in ("dana", "Dana", "DANA", "dAna", "danA"):
        throttle.admit(keys_for(name, None))
    assert throttle.admit(keys_for("dana", None)) is not None


def test_success_forgives_earlier_failures() -> None:
    throttle, _ = _throttle()
    keys = keys_for("dana", "10.0.0.1")
    for _ in range(4):
        throttle.admit(keys)
    throttle.succeeded(keys)
    for _ in range(5):
        assert throttle.admit(keys) is None


def test_sprayed_keys_stay_bounded() -> None:
    clock = Clock()
    throttle = SignInThrottle(limit=5, window_s=900.0, clock=clock, max_keys=100)
    for n in range(1000):
        throttle.admit([f"name:u{n}"])
    assert len(throttle._attempts) <= 100


@given(st.lists(st.floats(min_value=0, max_value=100), min_size=1, max_size=60))
def test_never_more_than_the_limit_admitted_in_any_window(gaps: list[float]) -> None:
    throttle, clock = _throttle()
    admitted: list[float] = []
    for gap in gaps:
        clock.now += gap
        wait = throttle.admit(["addr:x"])
        if wait is None:
            admitted.append(clock.now)
        else:
            assert 0 < wait <= 900
    for t in admitted:
        assert sum(1 for u in admitted if t <= u < t + 900) <= 5
