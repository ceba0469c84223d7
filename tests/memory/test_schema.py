"""The labeled template is an API: every record survives format -> parse unchanged."""

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory.schema import (
    FIELDS,
    IncidentRecord,
    RecordFormatError,
    bank_id,
    format_record,
    parse_record,
    record_tags,
    tag_value,
)
from memory.settings import MemorySettings

LABELS = [label for _, label in FIELDS]
label_like = st.sampled_from([f"{label}: x" for label in LABELS] + ["INCIDENT X — y", "  ", ":", ": :"])
value = st.one_of(
    st.text(),
    st.lists(st.one_of(st.text(), label_like), max_size=5).map("\n".join),
)
offsets = st.integers(min_value=-14 * 60, max_value=14 * 60).map(lambda m: timezone(timedelta(minutes=m)))
records = st.builds(
    IncidentRecord,
    incident_id=st.text(min_size=1).filter(lambda s: not any(c.isspace() for c in s)),
    service=st.text(min_size=1).filter(lambda s: "\n" not in s),
    timestamp=st.datetimes(timezones=st.one_of(st.just(UTC), offsets)),
    symptom=value,
    error_signature=value,
    root_cause=value,
    resolution_steps=value,
    runbook_used=value,
    outcome=value,
    failed_attempts=value,
    resolved_by=value,
)


@given(records)
def test_parse_inverts_format(record: IncidentRecord) -> None:
    assert parse_record(format_record(record)) == record


@given(records)
def test_a_trailing_newline_is_tolerated(record: IncidentRecord) -> None:
    assert parse_record(format_record(record) + "\n") == record


def example() -> IncidentRecord:
    return IncidentRecord(
        incident_id="INC-0001",
        service="checkout-service",
        timestamp=datetime(2026, 3, 14, 9, 12, tzinfo=UTC),
        symptom="p99 latency 4 s\nRoot cause: looked like the DB",
        error_signature="FATAL: remaining connection slots are reserved",
        root_cause="pool sized for average load",
        resolution_steps="1. raise pool to 80\n2. add circuit breaker",
        runbook_used="RB-checkout-db-pool",
        outcome="resolved in 42 min",
    )


def test_layout_is_the_documented_template() -> None:
    lines = format_record(example()).split("\n")
    assert lines[0] == "INCIDENT INC-0001 — checkout-service"
    assert lines[1] == "Timestamp: 2026-03-14T09:12:00+00:00"
    assert lines[2:4] == ["Symptom: p99 latency 4 s", "  Root cause: looked like the DB"]
    assert [line.split(":")[0] for line in lines if not line.startswith("  ")][1:] == LABELS
    assert lines[-2:] == ["Failed attempts:", "Resolved by:"]


@pytest.mark.parametrize(
    "text",
    [
        "",
        "INCIDENT INC-1 checkout",
        "INCIDENT INC-1 — checkout\nSymptom: x",
        "INCIDENT INC-1 — checkout\n  orphan continuation",
        format_record(example()).replace("Root cause:", "Cause:"),
        format_record(example()).replace("Timestamp: 2026-03-14T09:12:00+00:00", "Timestamp: yesterday"),
    ],
)
def test_anything_else_is_rejected(text: str) -> None:
    with pytest.raises(RecordFormatError):
        parse_record(text)


def test_fields_out_of_order_are_rejected() -> None:
    lines = format_record(example()).split("\n")
    swapped = [lines[0], lines[1], *lines[4:6], *lines[2:4], *lines[6:]]
    with pytest.raises(RecordFormatError):
        parse_record("\n".join(swapped))


def test_record_requires_aware_timestamp_and_single_token_id() -> None:
    with pytest.raises(ValueError):
        IncidentRecord("INC 1", "svc", datetime.now(UTC), "", "", "", "", "", "")
    with pytest.raises(ValueError):
        IncidentRecord("INC-1", "svc", datetime(2026, 1, 1), "", "", "", "", "", "")


def test_tags_and_bank_id() -> None:
    tags = record_tags(example(), severity="critical")
    assert tags == ["service:checkout-service", "kind:incident", "severity:critical"]
    assert tag_value(tags, "service") == "checkout-service"
    assert tag_value(tags, "team") is None
    assert bank_id(MemorySettings(bank_id="meridian-commerce-incidents")) == "meridian-commerce-incidents"
    with pytest.raises(ValueError):
        bank_id(MemorySettings(bank_id="bad id/with slash"))
