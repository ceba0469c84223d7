"""Every adapter against every real capture, plus the rules each one promises."""

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from incidents.alerts.adapters import SOURCES
from incidents.alerts.normalized import NormalizedAlert, service_from
from incidents.alerts.schemas import LabelLimits
from incidents.settings import DEFAULT_SERVICE_LABELS
from tests.incidents.alerts.captures import body, capture, capture_files, grafana

LABELS = DEFAULT_SERVICE_LABELS


def normalize(source: str, raw: dict[str, Any], limits: LabelLimits | None = None) -> list[NormalizedAlert]:
    model, adapter = SOURCES[source]
    parsed = model.model_validate(raw, context={"limits": limits or LabelLimits()})
    return adapter(parsed, raw, LABELS)


@pytest.mark.parametrize("path", capture_files("alertmanager"), ids=lambda p: p.stem)
def test_alertmanager_capture(path: Path) -> None:
    raw = body(path)
    alerts = normalize("alertmanager", raw)
    assert len(alerts) == len(raw["alerts"])
    for alert, item in zip(alerts, raw["alerts"], strict=True):
        assert alert.source == "alertmanager"
        assert alert.status == item["status"]  # the alert's own status, not the group's
        assert alert.fingerprint == item["fingerprint"]
        assert alert.alertname == item["labels"]["alertname"]
        assert alert.service == item["labels"]["service"]
        assert alert.severity == item["labels"].get("severity", "unknown")
        assert alert.starts_at is not None and alert.starts_at.tzinfo is not None
        assert alert.starts_at == datetime.fromisoformat(item["startsAt"].replace("Z", "+00:00"))
        if item["endsAt"].startswith("0001-01-01"):
            assert alert.ends_at is None
        else:
            assert alert.ends_at == datetime.fromisoformat(item["endsAt"].replace("Z", "+00:00"))
        assert alert.summary == item["annotations"].get("summary", alert.alertname)
        assert alert.runbook_url == item["annotations"].get("runbook_url")
        assert alert.generator_url == (item["generatorURL"] or None)
        assert alert.raw["alerts"] == [item]
        assert alert.raw["groupKey"] == raw["groupKey"]
        # The kept payload is itself a valid single-alert webhook: it can be replayed.
        assert normalize("alertmanager", alert.raw) == [alert]


def test_alertmanager_group_firing_carries_a_resolved_alert() -> None:
    raw = capture("alertmanager", "api-grouped-2-firing")
    assert raw["status"] == "firing"
    assert [a.status for a in normalize("alertmanager", raw)] == ["resolved", "firing"]


def test_go_escaped_characters_survive() -> None:
    raw = json.loads(
        '{"version":"4","status":"firing","alerts":[{"status":"firing","labels":{"alertname":"A"},'
        '"annotations":{"summary":"latency \\u003e 2s"},"startsAt":"2026-11-29T21:05:45Z",'
        '"endsAt":"0001-01-01T00:00:00Z","fingerprint":"f"}]}'
    )
    assert normalize("alertmanager", raw)[0].summary == "latency > 2s"


@pytest.mark.parametrize("path", capture_files("pagerduty"), ids=lambda p: p.stem)
def test_pagerduty_capture(path: Path) -> None:
    raw = body(path)
    [alert] = normalize("pagerduty", raw)
    assert alert.source == "pagerduty"
    assert alert.dedup_key == alert.fingerprint == raw["dedup_key"]
    assert (
        alert.status
        == {"trigger": "firing", "resolve": "resolved", "acknowledge": "acknowledged"}[raw["event_action"]]
    )
    assert alert.starts_at is None  # PagerDuty gives no start: intake anchors it to the open episode
    if raw["event_action"] == "trigger":
        assert alert.summary == raw["payload"]["summary"]
        assert alert.service == raw["payload"]["source"]
        assert alert.severity == raw["payload"]["severity"]
        assert alert.labels["error"] == raw["payload"]["custom_details"]["error"]


def test_pagerduty_trigger_without_dedup_key_gets_one() -> None:
    raw = capture("pagerduty", "pdpyras-1-trigger")
    del raw["dedup_key"]
    [alert] = normalize("pagerduty", raw)
    assert alert.dedup_key and len(alert.dedup_key) == 32


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"event_action": "resolve", "dedup_key": None}, "dedup_key"),
        ({"event_action": "trigger", "payload": None}, "payload"),
        ({"event_action": "snooze"}, "event_action"),
        ({"payload": {"summary": "x", "source": "y", "severity": "fatal"}}, "severity"),
        ({"dedup_key": "k" * 256}, "dedup_key"),
    ],
)
def test_pagerduty_rejects_invalid_events(change: dict[str, Any], problem: str) -> None:
    raw = {**capture("pagerduty", "pdpyras-1-trigger"), **change}
    with pytest.raises(ValidationError, match=problem):
        normalize("pagerduty", raw)


@pytest.mark.parametrize("name", ["firing", "resolved"])
def test_grafana_payload(name: str) -> None:
    raw = grafana(name)
    alerts = normalize("grafana", raw)
    assert [a.status for a in alerts] == [a["status"] for a in raw["alerts"]]
    first = alerts[0]
    assert first.source == "grafana"
    assert first.service == "checkout-api"
    assert first.severity == "critical"
    assert first.starts_at == datetime(2026, 11, 29, 21, 1, tzinfo=UTC)  # +01:00 converted to UTC
    assert first.runbook_url == "https://runbooks.example/checkout-latency"
    if name == "firing":
        assert first.ends_at is None
        second = alerts[1]
        assert second.service == "unknown"  # no service label: kept, never dropped
        assert second.summary == raw["title"]
        assert second.description.startswith("[ var='B'")
        assert second.generator_url is None


@given(blank=st.text(alphabet=" \t\n\r\u00a0\u2003", max_size=8))
def test_a_blank_summary_or_title_falls_back_to_the_alert_name(blank: str) -> None:
    """Whitespace is no summary: the alert is named by what names it next, never shown blank."""
    am_raw = capture("alertmanager", "amtool-1-firing")
    for item in am_raw["alerts"]:
        item["annotations"] = {"summary": blank, "description": blank}
    grafana_raw = {**grafana("firing"), "title": blank}
    grafana_raw["alerts"] = [
        {**a, "annotations": {"summary": blank}, "valueString": ""} for a in grafana_raw["alerts"]
    ]
    for alert in normalize("alertmanager", am_raw) + normalize("grafana", grafana_raw):
        assert alert.summary == alert.alertname and alert.alertname.strip()
        assert alert.description == ""


def test_generic_minimal_and_full() -> None:
    [minimal] = normalize("generic", {"title": "Disk almost full"})
    assert (minimal.service, minimal.alertname, minimal.status, minimal.severity) == (
        "unknown",
        "Disk almost full",
        "firing",
        "unknown",
    )
    assert minimal.starts_at is None and minimal.fingerprint
    [full] = normalize(
        "generic",
        {
            "title": "Replica lag",
            "service": "orders-db",
            "alertname": "ReplicaLag",
            "severity": "Warning",
            "status": "resolved",
            "description": "47s behind",
            "labels": {"instance": "pg-2"},
            "fingerprint": "lag-pg-2",
            "starts_at": "2026-11-29T21:00:00Z",
            "ends_at": "2026-11-29T21:10:00Z",
            "runbook_url": "https://runbooks.example/lag",
        },
    )
    assert (full.service, full.alertname, full.severity, full.status, full.fingerprint) == (
        "orders-db",
        "ReplicaLag",
        "Warning",  # as the sender spelled it
        "resolved",
        "lag-pg-2",
    )
    assert full.ends_at == datetime(2026, 11, 29, 21, 10, tzinfo=UTC)


@pytest.mark.parametrize(
    ("labels", "severity"),
    [
        ({"priority": "P1"}, "P1"),  # a rule that pages through Opsgenie: a priority, no severity
        ({"priority": "sev-2"}, "sev-2"),
        ({"severity": "warning", "priority": "P1"}, "warning"),  # the severity label wins
        ({"severity": " ", "priority": "P2"}, "P2"),
        ({"priority": "7"}, "unknown"),  # a priority that is no level says nothing about urgency
        ({}, "unknown"),
    ],
)
def test_a_priority_label_is_the_severity_when_the_alert_names_none(
    labels: dict[str, str], severity: str
) -> None:
    """Alertmanager, Grafana and generic alerts alike; the generic ``severity`` field wins over both."""
    am_raw, grafana_raw = capture("alertmanager", "amtool-1-firing"), grafana("firing")
    for raw in (am_raw, grafana_raw):
        raw["alerts"] = [{**raw["alerts"][0], "labels": {"alertname": "CheckoutDown", **labels}}]
    for source, raw in (
        ("alertmanager", am_raw),
        ("grafana", grafana_raw),
        ("generic", {"title": "Checkout down", "labels": labels}),
    ):
        assert normalize(source, raw)[0].severity == severity, source
    [generic] = normalize("generic", {"title": "Checkout down", "severity": "P3", "labels": labels})
    assert generic.severity == "P3"


def test_generic_fingerprint_is_stable_and_label_sensitive() -> None:
    a = normalize("generic", {"title": "t", "service": "s", "labels": {"x": "1"}})[0].fingerprint
    b = normalize("generic", {"title": "t", "service": "s", "labels": {"x": "1"}})[0].fingerprint
    c = normalize("generic", {"title": "t", "service": "s", "labels": {"x": "2"}})[0].fingerprint
    assert a == b != c


def test_generic_rejects_unknown_fields() -> None:
    with pytest.raises(ValidationError, match="sevrity"):
        normalize("generic", {"title": "t", "sevrity": "high"})


def test_label_limits_follow_settings() -> None:
    labels = {f"l{i}": "v" for i in range(5)}
    raw = {"title": "t", "labels": labels}
    assert normalize("generic", raw, LabelLimits(max_labels=5))
    with pytest.raises(ValidationError, match="at most 4"):
        normalize("generic", raw, LabelLimits(max_labels=4))
    with pytest.raises(ValidationError, match="longer than 3"):
        normalize("generic", {"title": "t", "labels": {"k": "long"}}, LabelLimits(max_label_chars=3))


@pytest.mark.parametrize(
    ("details", "problem"),
    [
        ({f"k{i}": "v" for i in range(7)}, "9 entries; at most 8"),  # with source and severity
        ({"service": "z" * 11}, "longer than 10"),
        ({"z" * 11: "v"}, "longer than 10"),
    ],
)
def test_pagerduty_custom_details_meet_the_label_limits(details: dict[str, str], problem: str) -> None:
    """String-valued custom_details become labels, so they count against the same limits."""
    raw = capture("pagerduty", "pdpyras-1-trigger")
    raw["payload"]["custom_details"] = details
    limits = LabelLimits(max_labels=8, max_label_chars=10)
    with pytest.raises(ValidationError, match=f"custom_details\n.*{problem}"):
        normalize("pagerduty", raw, limits)
    raw["payload"]["custom_details"] = {f"k{i}": "v" for i in range(6)}
    assert len(normalize("pagerduty", raw, limits)[0].labels) == 8
    raw["payload"]["custom_details"] = {"nested": {"x": "z" * 11}, "n": 1}  # not labels: not limited
    assert normalize("pagerduty", raw, limits)[0].labels == {"source": "checkout-api", "severity": "critical"}


@pytest.mark.parametrize(
    "stamp",
    ["yesterday", "2026-13-01T00:00:00Z", "0001-01-01T00:00:00+05:00", "9999-12-31T23:59:59-05:00", ""],
)
def test_invalid_timestamps_are_validation_errors(stamp: str) -> None:
    with pytest.raises(ValidationError):
        normalize("generic", {"title": "t", "starts_at": stamp})


moments = st.datetimes(
    min_value=datetime(1971, 1, 1), max_value=datetime(2026, 11, 1), timezones=st.just(UTC)
)


@given(start=moments, end=moments | st.just(datetime(1, 1, 1, tzinfo=UTC)))
def test_an_end_is_unset_when_zero_and_refused_before_the_start(start: datetime, end: datetime) -> None:
    """Go's zero time is no end; an end before the start is a 422 naming both, in either format."""
    generic = {"title": "t", "starts_at": start.isoformat(), "ends_at": end.isoformat()}
    am_alert = {"status": "resolved", "labels": {"alertname": "A"}, "startsAt": start.isoformat()}
    am = {"version": "4", "status": "resolved", "alerts": [{**am_alert, "endsAt": end.isoformat()}]}
    if end.year != 1 and end < start:
        with pytest.raises(ValidationError, match=r"ends_at .* is before starts_at"):
            normalize("generic", generic)
        with pytest.raises(ValidationError, match=r"endsAt .* is before startsAt"):
            normalize("alertmanager", am)
        return
    expected = None if end.year == 1 else end
    assert normalize("generic", generic)[0].ends_at == expected
    assert normalize("alertmanager", am)[0].ends_at == expected


def test_naive_timestamp_is_utc() -> None:
    [alert] = normalize("generic", {"title": "t", "starts_at": "2026-11-29T21:00:00"})
    assert alert.starts_at == datetime(2026, 11, 29, 21, tzinfo=UTC)


label_maps = st.dictionaries(
    st.sampled_from(["service", "job", "app", "app_kubernetes_io_name", "component", "team", "instance"]),
    st.text(min_size=0, max_size=8),
)


@given(labels=label_maps)
def test_service_is_first_configured_nonblank_label(labels: dict[str, str]) -> None:
    expected = next((labels[n].strip() for n in LABELS if labels.get(n, "").strip()), "unknown")
    assert service_from(labels, LABELS) == expected


@given(labels=label_maps, order=st.permutations(list(LABELS)))
def test_service_label_order_is_configurable(labels: dict[str, str], order: list[str]) -> None:
    service = service_from(labels, order)
    assert service == "unknown" or service in {v.strip() for v in labels.values()}
