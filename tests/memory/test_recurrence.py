"""Recurrence from known dates: a rate per 90 days, and a period only when the dates are regular."""

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from memory.embedder import MiniLMEmbedder
from memory.patterns import OfflineSynthesizer
from memory.profile import Pattern
from memory.recurrence import recurrence
from tests.memory.profile_records import recalled

DAY = datetime(2026, 1, 10, 3, 0, tzinfo=UTC)
CERT = "x509: certificate has expired or is not yet valid"
CAUSE = "The ingress TLS certificate expired: it was issued by hand and nobody renewed it"


def test_a_certificate_that_expired_twice_90_days_apart_is_expected_again() -> None:
    found = recurrence([DAY, DAY + timedelta(days=90)])
    assert found is not None and found.period_days == 90
    assert found.next_expected == DAY + timedelta(days=180)
    assert "recurs about every 90 days; the last was 2026-04-10" in found.sentence()
    assert "next is expected around 2026-07-09" in found.sentence()


def test_once_its_date_has_passed_the_next_was_due_not_expected() -> None:
    found = recurrence([DAY, DAY + timedelta(days=90)])
    assert found is not None
    before = found.sentence(DAY + timedelta(days=170))
    after = found.sentence(DAY + timedelta(days=200))
    assert "the next is expected around 2026-07-09" in before
    assert "the next was due around 2026-07-09" in after and "expected" not in after


def test_regular_gaps_give_their_mean_period() -> None:
    dates = [DAY + timedelta(days=d) for d in (0, 29, 61, 90)]
    found = recurrence(dates)
    assert found is not None and found.period_days == 30 and found.per_90_days == 4.0


def test_irregular_dates_give_a_rate_and_no_period() -> None:
    dates = [DAY + timedelta(days=d) for d in (0, 5, 140)]
    found = recurrence(dates)
    assert found is not None and found.period_days is None and found.next_expected is None
    assert found.per_90_days == round(3 / 140 * 90, 1)
    assert "at no regular interval" in found.sentence()


def test_one_gap_off_every_calendar_cadence_is_no_period() -> None:
    found = recurrence([DAY, DAY + timedelta(days=137)])
    assert found is not None and found.period_days is None


def test_a_single_incident_or_none() -> None:
    assert recurrence([]) is None
    once = recurrence([DAY])
    assert once is not None and once.per_90_days == 1.0 and "seen once" in once.sentence()


def test_the_synthesizer_keeps_each_incident_date_and_the_profile_round_trips_them() -> None:
    first = recalled(1, "api-gateway", CERT, CAUSE)
    second = recalled(2, "api-gateway", CERT, CAUSE)
    assert first.record is not None and second.record is not None
    second = replace(
        second, record=replace(second.record, timestamp=first.record.timestamp + timedelta(days=90))
    )
    [pattern] = OfflineSynthesizer(MiniLMEmbedder()).patterns([first, second])
    assert pattern.seen == [first.record.timestamp, first.record.timestamp + timedelta(days=90)]
    assert Pattern.from_dict(pattern.to_dict()).seen == pattern.seen
    again = recurrence(pattern.seen)
    assert again is not None and again.period_days == 90
