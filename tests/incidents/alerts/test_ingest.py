"""Intake on SQLite and PostgreSQL: idempotent storage, grouping, clearing, recurrence, PagerDuty episodes."""

import threading
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from incidents.alerts.adapters import SOURCES
from incidents.alerts.models import Alert
from incidents.alerts.normalized import NormalizedAlert
from incidents.alerts.service import IngestResult, idempotency_key, ingest
from incidents.briefings.models import Job
from incidents.database import make_engine, make_session_factory, upgrade
from incidents.incident import service as incidents
from incidents.incident.models import Incident, IncidentEvent
from incidents.locking import serialized_writes
from incidents.settings import DEFAULT_SERVICE_LABELS
from incidents.timeutil import utcnow
from tests.incidents.alerts.captures import body, capture, capture_files, grafana


def normalize(source: str, raw: dict[str, Any]) -> list[NormalizedAlert]:
    model, adapter = SOURCES[source]
    return adapter(model.model_validate(raw), raw, DEFAULT_SERVICE_LABELS)


def send(db: Session, source: str, raw: dict[str, Any]) -> list[IngestResult]:
    results = ingest(db_session=db, alerts=normalize(source, raw), via="test-sender")
    db.flush()
    return results


def counts(db: Session) -> tuple[int, ...]:
    return tuple(
        db.scalar(select(func.count()).select_from(table)) or 0
        for table in (Alert, Incident, IncidentEvent, Job)
    )


def am_alert(
    alertname: str = "HighErrorRate",
    service: str = "checkout-api",
    fingerprint: str = "fp-1",
    status: str = "firing",
    starts: str = "2026-11-29T21:00:00Z",
    severity: str = "warning",
) -> dict[str, Any]:
    return {
        "status": status,
        "labels": {"alertname": alertname, "service": service, "severity": severity},
        "annotations": {"summary": f"{alertname} on {service}"},
        "startsAt": starts,
        "endsAt": "0001-01-01T00:00:00Z" if status == "firing" else "2026-11-29T21:30:00Z",
        "fingerprint": fingerprint,
    }


def am(*alerts: dict[str, Any]) -> dict[str, Any]:
    return {"version": "4", "status": alerts[0]["status"], "alerts": list(alerts)}


def test_every_capture_in_order(db: Session) -> None:
    for path in capture_files("alertmanager"):
        send(db, "alertmanager", body(path))
    for path in capture_files("pagerduty"):
        send(db, "pagerduty", body(path))
    listed = incidents.list_incidents(db_session=db).items
    assert sorted((i.service, i.alertname) for i in listed) == sorted(
        [
            ("checkout-api", "HighErrorRate"),
            ("search-indexer", "DiskFull"),
            ("orders-db", "PostgresReplicationLag"),
            ("checkout-api", "CheckoutHighErrorRate"),
            ("x", "RetryProbe"),
            ("checkout-api", "checkout-api 5xx above 5%"),
        ]
    )
    assert all(i.status == "triggered" for i in listed)  # cleared alerts never resolve an incident
    lag = next(i for i in listed if i.alertname == "PostgresReplicationLag")
    assert lag.alert_count == 2
    assert incidents.active_alert_count(db_session=db, incident=lag) == 0
    retry = next(i for i in listed if i.alertname == "RetryProbe")
    assert retry.alert_count == 1  # three deliveries of one alert
    assert incidents.active_alert_count(db_session=db, incident=retry) == 1


def test_redelivery_of_every_capture_changes_nothing(db: Session) -> None:
    """Each payload delivered twice in a row (a sender's retry), then every timestamped capture replayed."""
    paths = [("alertmanager", p) for p in capture_files("alertmanager")]
    paths += [("pagerduty", p) for p in capture_files("pagerduty")]
    for source, path in paths:
        send(db, source, body(path))
        before = counts(db)
        assert {r.outcome for r in send(db, source, body(path))} == {"duplicate"}
        assert counts(db) == before
    states = [
        (i.public_id, i.status, i.alert_count, i.severity)
        for i in incidents.list_incidents(db_session=db).items
    ]
    before = counts(db)
    for path in capture_files("alertmanager"):
        assert {r.outcome for r in send(db, "alertmanager", body(path))} == {"duplicate"}
    assert counts(db) == before
    assert states == [
        (i.public_id, i.status, i.alert_count, i.severity)
        for i in incidents.list_incidents(db_session=db).items
    ]


def test_firing_alerts_of_one_service_and_name_share_an_incident(db: Session) -> None:
    [first] = send(db, "alertmanager", am(am_alert(fingerprint="a")))
    [second] = send(db, "alertmanager", am(am_alert(fingerprint="b", severity="critical")))
    [other] = send(db, "alertmanager", am(am_alert(fingerprint="c", alertname="DiskFull")))
    [elsewhere] = send(db, "alertmanager", am(am_alert(fingerprint="d", service="search")))
    assert first.opened and not second.opened
    assert first.incident == second.incident == "INC-0001"
    assert (other.incident, elsewhere.incident) == ("INC-0002", "INC-0003")
    incident = incidents.get_by_public_id(db_session=db, public_id="INC-0001")
    assert incident is not None
    assert (incident.alert_count, incident.severity) == (2, "critical")
    kinds = [e.kind for e in incidents.timeline(db_session=db, incident=incident)]
    assert kinds == ["opened", "alert_firing", "severity_raised"]


def test_one_payload_counts_each_alert_and_keeps_the_worst_severity(db: Session) -> None:
    results = send(
        db,
        "alertmanager",
        am(
            am_alert(fingerprint="a"),
            am_alert(fingerprint="b", severity="critical"),
            am_alert(fingerprint="c", severity="info"),
        ),
    )
    assert [(r.incident, r.opened) for r in results] == [("INC-0001", True)] + [("INC-0001", False)] * 2
    incident = incidents.get_by_public_id(db_session=db, public_id="INC-0001")
    assert incident is not None
    db.refresh(incident)
    assert (incident.alert_count, incident.severity) == (3, "critical")
    kinds = [e.kind for e in incidents.timeline(db_session=db, incident=incident)]
    assert kinds == ["opened", "alert_firing", "severity_raised", "alert_firing"]


def test_opening_queues_a_briefing_job(db: Session) -> None:
    [result] = send(db, "alertmanager", am(am_alert()))
    incident = incidents.get_by_public_id(db_session=db, public_id=result.incident or "")
    assert incident is not None
    jobs = db.scalars(select(Job).where(Job.incident_id == incident.id)).all()
    assert [(j.kind, j.state) for j in jobs] == [("briefing", "pending")]
    send(db, "alertmanager", am(am_alert(fingerprint="again")))
    assert db.scalar(select(func.count(Job.id))) == 1


def test_cleared_alert_is_a_timeline_event_not_a_resolution(db: Session) -> None:
    send(db, "alertmanager", am(am_alert()))
    [cleared] = send(db, "alertmanager", am(am_alert(status="resolved")))
    incident = incidents.get_by_public_id(db_session=db, public_id="INC-0001")
    assert incident is not None and cleared.incident == "INC-0001"
    assert incident.status == "triggered" and incident.resolved_at is None
    events = incidents.timeline(db_session=db, incident=incident)
    assert events[-1].kind == "alert_cleared"
    assert events[-1].actor == "alertmanager (test-sender)"
    assert "no alert of this incident is firing" in events[-1].message


def test_firing_again_after_resolution_opens_a_linked_recurrence(db: Session) -> None:
    send(db, "alertmanager", am(am_alert()))
    first = incidents.get_by_public_id(db_session=db, public_id="INC-0001")
    assert first is not None
    first.status, first.resolved_at, first.resolved_by = "resolved", utcnow(), "alice"
    db.flush()
    [again] = send(db, "alertmanager", am(am_alert(starts="2026-11-30T02:00:00Z")))
    assert again.opened and again.incident == "INC-0002"
    second = incidents.get_by_public_id(db_session=db, public_id="INC-0002")
    assert second is not None and second.recurrence_of_id == first.id
    opened = incidents.timeline(db_session=db, incident=second)[0]
    assert opened.data["recurrence_of"] == "INC-0001"


def test_without_a_start_time_an_engineers_resolution_ends_the_episode(db: Session) -> None:
    """A sender that never sends a resolve: once the incident is resolved here, the same alert is a
    recurrence, not a repeat of the resolved one; its repeats then join the recurrence."""
    alert = {"title": "Queue depth above 10k", "service": "payments"}
    [opened] = send(db, "generic", alert)
    assert send(db, "generic", alert)[0].outcome == "duplicate"
    first = incidents.get_by_public_id(db_session=db, public_id=opened.incident or "")
    assert first is not None
    first.status, first.resolved_at, first.resolved_by = "resolved", utcnow(), "alice"
    db.flush()
    [again] = send(db, "generic", alert)
    assert (again.outcome, again.opened) == ("stored", True) and again.incident != first.public_id
    second = incidents.get_by_public_id(db_session=db, public_id=again.incident or "")
    assert second is not None and second.recurrence_of_id == first.id
    [repeat] = send(db, "generic", alert)
    assert (repeat.outcome, repeat.incident) == ("duplicate", second.public_id)


def test_a_pagerduty_trigger_repeated_with_a_new_timestamp_is_one_alert(db: Session) -> None:
    """The timestamp says when PagerDuty's client sent the event, the dedup key which one it is."""
    trigger = capture("pagerduty", "pdpyras-1-trigger")
    stamps = ["2026-11-29T21:00:00Z", "2026-11-29T21:05:00Z", "2026-11-29T21:10:00Z"]
    results = [
        send(db, "pagerduty", {**trigger, "payload": {**trigger["payload"], "timestamp": stamp}})[0]
        for stamp in stamps
    ]
    assert [r.outcome for r in results] == ["stored", "duplicate", "duplicate"]
    assert counts(db)[:2] == (1, 1)
    assert db.scalars(select(Alert.starts_at)).one() == datetime(2026, 11, 29, 21, tzinfo=UTC)


def test_a_resolved_notice_before_its_firing_alert_clears_it_once_it_arrives(db: Session) -> None:
    [early] = send(db, "alertmanager", am(am_alert(status="resolved")))
    assert early.incident is None
    [firing] = send(db, "alertmanager", am(am_alert()))
    incident = incidents.get_by_public_id(db_session=db, public_id=firing.incident or "")
    assert incident is not None and firing.opened
    window = incidents.newest_alerts(db_session=db, incident=incident, limit=10)
    [alert] = [a for a in window.alerts if a.status == "firing"]
    assert window.cleared == {alert.id}
    assert incidents.active_alert_count(db_session=db, incident=incident) == 0
    assert incidents.timeline(db_session=db, incident=incident)[-1].kind == "alert_cleared"


def test_resolved_notice_for_an_unseen_alert_is_kept(db: Session) -> None:
    [result] = send(db, "alertmanager", am(am_alert(status="resolved")))
    assert (result.outcome, result.incident) == ("stored", None)
    assert counts(db)[:2] == (1, 0)


def test_grafana_payloads(db: Session) -> None:
    firing = send(db, "grafana", grafana("firing"))
    assert [r.opened for r in firing] == [True, True]
    [cleared] = send(db, "grafana", grafana("resolved"))
    assert cleared.incident == firing[0].incident
    assert send(db, "grafana", grafana("resolved"))[0].outcome == "duplicate"


def test_pagerduty_episode(db: Session) -> None:
    trigger = capture("pagerduty", "pdpyras-1-trigger")
    resolve = capture("pagerduty", "pdpyras-2-resolve")
    acknowledge = {**resolve, "event_action": "acknowledge"}
    [opened] = send(db, "pagerduty", trigger)
    assert send(db, "pagerduty", trigger)[0].outcome == "duplicate"  # same dedup key while open
    [acked] = send(db, "pagerduty", acknowledge)
    incident = incidents.get_by_public_id(db_session=db, public_id=opened.incident or "")
    assert incident is not None and acked.incident == incident.public_id
    assert (incident.status, incident.acknowledged_by) == ("acknowledged", "pagerduty (test-sender)")
    assert send(db, "pagerduty", acknowledge)[0].outcome == "duplicate"
    [resolved] = send(db, "pagerduty", resolve)
    assert resolved.outcome == "stored" and resolved.incident == incident.public_id
    notice = db.scalars(select(Alert).where(Alert.status == "resolved")).one()
    assert (notice.service, notice.alertname) == (incident.service, incident.alertname)
    assert (
        "checkout-api 5xx above 5% cleared"
        in incidents.timeline(db_session=db, incident=incident)[-1].message
    )
    assert send(db, "pagerduty", resolve)[0].outcome == "duplicate"
    assert incident.status == "acknowledged"
    # A trigger after the resolve is a new alert; the incident is still open, so it joins it.
    [retrigger] = send(db, "pagerduty", trigger)
    assert (retrigger.outcome, retrigger.incident, retrigger.opened) == ("stored", incident.public_id, False)
    # Once an engineer resolved the incident, the same dedup key opens a recurrence, whether or not the
    # client sent its own resolve first.
    incident.status = "resolved"
    [recurrence] = send(db, "pagerduty", trigger)
    assert recurrence.opened and recurrence.incident != incident.public_id
    assert send(db, "pagerduty", trigger)[0].outcome == "duplicate"
    later = incidents.get_by_public_id(db_session=db, public_id=recurrence.incident or "")
    assert later is not None
    later.status = "resolved"
    send(db, "pagerduty", resolve)
    [third] = send(db, "pagerduty", trigger)
    assert third.opened and third.incident not in (incident.public_id, later.public_id)


def test_unique_key_race_is_a_duplicate_not_an_error(db: Session) -> None:
    """Another transaction stored the same alert first: this one ends as a duplicate and writes nothing."""
    [alert] = normalize("alertmanager", am(am_alert()))
    assert alert.starts_at is not None
    key = idempotency_key(alert.source, alert.fingerprint, alert.status, alert.starts_at)
    db.add(
        Alert(
            idempotency_key=key,
            source=alert.source,
            fingerprint=alert.fingerprint,
            status=alert.status,
            alertname=alert.alertname,
            service=alert.service,
            severity=alert.severity,
            labels={},
            annotations={},
            starts_at=alert.starts_at,
            raw_payload={},
        )
    )
    db.flush()
    [result] = ingest(db_session=db, alerts=[alert], via="t")
    assert result.outcome == "duplicate"
    assert counts(db) == (1, 0, 0, 0)


def _concurrently(database_url: str, work: list[dict[str, Any]]) -> list[str]:
    engine = make_engine(database_url)
    upgrade(engine)
    sessions = make_session_factory(engine)
    failures: list[str] = []
    barrier = threading.Barrier(len(work))

    def run(raw: dict[str, Any]) -> None:
        session = sessions()
        try:
            barrier.wait(timeout=30)
            with serialized_writes(session):
                ingest(db_session=session, alerts=normalize("alertmanager", raw), via="t")
                session.commit()
        except Exception as exc:
            failures.append(repr(exc))
        finally:
            session.close()

    threads = [threading.Thread(target=run, args=(raw,)) for raw in work]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    with sessions() as session:
        ids = sorted(session.scalars(select(Incident.public_id)))
        alerts = session.scalar(select(func.count(Alert.id)))
    engine.dispose()
    assert not failures, failures
    return [*ids, f"alerts={alerts}"]


def test_concurrent_redeliveries_store_one_alert_and_one_incident(database_url: str) -> None:
    assert _concurrently(database_url, [am(am_alert())] * 6) == ["INC-0001", "alerts=1"]


def test_concurrent_openers_get_distinct_numbers(database_url: str) -> None:
    base = datetime(2026, 11, 29, 21, tzinfo=UTC)
    work = [
        am(
            am_alert(
                alertname=f"Alert{i}", fingerprint=f"f{i}", starts=(base + timedelta(seconds=i)).isoformat()
            )
        )
        for i in range(8)
    ]
    assert _concurrently(database_url, work) == [f"INC-{i:04d}" for i in range(1, 9)] + ["alerts=8"]


def test_concurrent_alerts_of_one_group_share_one_incident(database_url: str) -> None:
    work = [am(am_alert(fingerprint=f"f{i}")) for i in range(6)]
    assert _concurrently(database_url, work) == ["INC-0001", "alerts=6"]
