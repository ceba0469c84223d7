"""The incident queries the pages lean on: open-first listing, latest alert, filter choices, chart points."""

from datetime import UTC, datetime, timedelta

from sqlalchemy.orm import Session

from incidents.alerts.normalized import NormalizedAlert
from incidents.alerts.service import ingest
from incidents.incident import service

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def _alert(
    n: int, *, service_name: str, severity: str, alertname: str = "", minutes: int = 0
) -> NormalizedAlert:
    return NormalizedAlert(
        source="generic",
        fingerprint=f"fp-{n}",
        status="firing",
        alertname=alertname or f"Alert{n}",
        service=service_name,
        severity=severity,
        summary=f"summary {n}",
        description="",
        labels={"service": service_name},
        annotations={},
        starts_at=T0 + timedelta(minutes=minutes),
        ends_at=None,
        generator_url=None,
        runbook_url=None,
        dedup_key=None,
        raw={},
    )


def _open(db: Session, alert: NormalizedAlert) -> str:
    [result] = ingest(db_session=db, alerts=[alert], via="test")
    assert result.incident
    return result.incident


def test_open_first_puts_resolved_incidents_after_open_ones(db: Session) -> None:
    first = _open(db, _alert(1, service_name="checkout", severity="critical"))
    second = _open(db, _alert(2, service_name="payments", severity="warning"))
    incident = service.get_by_public_id(db_session=db, public_id=second)
    assert incident is not None
    incident.status = "resolved"
    db.flush()
    newest_first = [i.public_id for i in service.list_incidents(db_session=db).items]
    open_first = [i.public_id for i in service.list_incidents(db_session=db, open_first=True).items]
    assert newest_first == [second, first]
    assert open_first == [first, second]


def test_latest_alert_is_the_most_recently_received(db: Session) -> None:
    public_id = _open(db, _alert(1, service_name="checkout", severity="warning", alertname="Latency"))
    _open(db, _alert(2, service_name="checkout", severity="critical", alertname="Latency", minutes=5))
    incident = service.get_by_public_id(db_session=db, public_id=public_id)
    assert incident is not None
    latest = service.latest_alert(db_session=db, incident=incident)
    assert latest is not None and latest.fingerprint == "fp-2"


def test_filter_choices_and_chart_points(db: Session) -> None:
    ids = [
        _open(db, _alert(1, service_name="payments", severity="info")),
        _open(db, _alert(2, service_name="checkout", severity="medium")),
        _open(db, _alert(3, service_name="checkout", severity="critical", minutes=60)),
    ]
    assert service.distinct_services(db_session=db) == ["checkout", "payments"]
    # the ladder's levels in use, most urgent first: medium is a warning
    assert service.severity_choices(db_session=db) == ["critical", "warning", "info"]
    points = service.first_seen_points(db_session=db)
    assert sorted(p[0] for p in points) == sorted(ids)
    [only] = service.first_seen_points(db_session=db, public_ids=[ids[2]])
    assert only == (ids[2], "checkout", T0 + timedelta(minutes=60))
