"""The labeled template is an API: every record survives format -> parse unchanged."""

from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory.schema import (
    FIELDS,
    RESOLUTION_KINDS,
    IncidentRecord,
    RecordFormatError,
    bank_id,
    format_record,
    normalize_resolution_kind,
    parse_record,
    record_tags,
    tag_value,
)
from memory.settings import MemorySettings
from memory.template import FIELDS as TEMPLATE_FIELDS

LABELS = [label for _, label in FIELDS]
label_like = st.sampled_from([f"{label}: x" for label in LABELS] + ["INCIDENT X — y", "  ", ":", ": :"])
value = st.one_of(
    st.text(),
    st.lists(st.one_of(st.text(), label_like), max_size=5).map("\n".join),
)
offsets = st.integers(min_value=-14 * 60, max_value=14 * 60).map(lambda m: timezone(timedelta(minutes=m)))
# Every field of the one list: any text where the template holds text, a kind from the list, an aware time.
records = st.builds(
    IncidentRecord,
    incident_id=st.text(min_size=1).filter(lambda s: not any(c.isspace() for c in s)),
    service=st.text(min_size=1).filter(lambda s: "\n" not in s),
    timestamp=st.datetimes(timezones=st.one_of(st.just(UTC), offsets)),
    resolution_kind=st.sampled_from(("", *RESOLUTION_KINDS)),
    **{f.name: value for f in TEMPLATE_FIELDS if f.kind in ("text", "line")},
)


@given(records)
def test_parse_inverts_format(record: IncidentRecord) -> None:
    assert parse_record(format_record(record)) == record


@given(records)
def test_a_trailing_newline_is_tolerated(record: IncidentRecord) -> None:
    assert parse_record(format_record(record) + "\n") == record


def version_1(text: str) -> str:
    """The same record as the first template version wrote it: no ``Resolution kind`` line."""
    return "\n".join(line for line in text.split("\n") if not line.startswith("Resolution kind:"))


@given(records)
def test_a_version_1_record_parses_with_its_kind_not_recorded(record: IncidentRecord) -> None:
    old = version_1(format_record(record))
    assert parse_record(old) == replace(record, resolution_kind="")


@given(records)
def test_migrating_a_version_1_record_keeps_every_field(record: IncidentRecord) -> None:
    migrated = format_record(parse_record(version_1(format_record(record))))
    assert parse_record(migrated) == replace(record, resolution_kind="")
    assert "\nResolution kind:" in migrated


def test_the_kind_is_a_tag_and_an_unknown_kind_is_refused() -> None:
    noisy = replace(example(), resolution_kind="self-recovered")
    assert "resolution:self-recovered" in record_tags(noisy)
    assert noisy.noise and not replace(noisy, resolution_kind="fixed").noise
    assert not any(t.startswith("resolution:") for t in record_tags(example()))
    with pytest.raises(ValueError, match="resolution_kind"):
        replace(example(), resolution_kind="healed")


@pytest.mark.parametrize(
    ("typed", "kind"),
    [("False alarm", "false-alarm"), ("self_recovered", "self-recovered"), (" Fixed ", "fixed"), ("", "")],
)
def test_kinds_are_read_as_people_type_them(typed: str, kind: str) -> None:
    assert normalize_resolution_kind(typed) == kind


def test_a_kind_outside_the_list_names_the_allowed_ones() -> None:
    with pytest.raises(ValueError, match="fixed, mitigated, self-recovered, false-alarm, duplicate"):
        normalize_resolution_kind("resolved itself")


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
