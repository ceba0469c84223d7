"""A firing alert sent again with a worse severity (how generic and PagerDuty senders escalate): the
incident's alerts record the severity it fires with now and when it rose, its timeline says so, and a
redelivery still changes nothing."""

import itertools
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select
from sqlalchemy.orm import Session

from incidents.alerts.models import Alert
from incidents.briefings import service as briefings
from incidents.delivery.models import Delivery
from incidents.delivery.routing import ChannelRoute, sync_channels
from incidents.incident import service as incidents
from incidents.incident.models import Incident
from incidents.severity import LADDER, outranks, worst
from tests.incidents.alerts.captures import capture
from tests.incidents.alerts.test_ingest import am, am_alert, counts, send


def _incident(db: Session, public_id: str | None) -> Incident:
    incident = incidents.get_by_public_id(db_session=db, public_id=public_id or "")
    assert incident is not None
    db.refresh(incident)
    return incident


def _severities(db: Session, incident: Incident) -> list[str]:
    return [a.severity for a in incidents.incident_alerts(db_session=db, incident=incident)]


def test_a_repeat_with_a_worse_severity_is_recorded_with_it(db: Session) -> None:
    """Generic and PagerDuty senders escalate by sending the same alert again: the incident's alerts
    show it firing with the new severity since it arrived, counted once; a milder repeat and the same
    escalation sent again change nothing."""
    generic = {"title": "Queue depth above 10k", "service": "payments", "severity": "warning"}
    trigger = capture("pagerduty", "pdpyras-1-trigger")
    trigger["payload"]["severity"] = "warning"
    for source, raw, worse in (
        ("generic", generic, {**generic, "severity": "critical"}),
        ("pagerduty", trigger, {**trigger, "payload": {**trigger["payload"], "severity": "critical"}}),
    ):
        [opened] = send(db, source, raw)
        [escalated] = send(db, source, worse)
        assert (escalated.outcome, escalated.incident, escalated.opened) == (
            "escalated",
            opened.incident,
            False,
        )
        assert (escalated.previous_severity, escalated.severity) == ("warning", "critical")
        incident = _incident(db, opened.incident)
        assert (incident.alert_count, incident.severity) == (1, "critical")
        alerts = incidents.incident_alerts(db_session=db, incident=incident)
        assert [a.fingerprint for a in alerts] == [opened.fingerprint] * 2
        assert [a.severity for a in alerts] == ["warning", "critical"]
        assert alerts[1].raw_payload == worse and alerts[1].received_at >= alerts[0].received_at
        assert incidents.active_alert_count(db_session=db, incident=incident) == 1
        assert incidents.latest_alert(db_session=db, incident=incident) == alerts[1]
        events = incidents.timeline(db_session=db, incident=incident)
        assert [e.kind for e in events] == ["opened", "severity_raised"]
        raised = events[-1]
        assert raised.actor == f"{source} (test-sender)" and raised.at >= alerts[1].received_at
        assert raised.message.startswith("severity warning -> critical by a re-sent")
        assert (raised.data["from"], raised.data["to"], raised.data["alert_id"]) == (
            "warning",
            "critical",
            alerts[1].id,
        )
        before = counts(db)
        for repeat in (worse, raw):
            [again] = send(db, source, repeat)
            assert (again.outcome, again.previous_severity, again.incident) == (
                "duplicate",
                None,
                opened.incident,
            )
        assert counts(db) == before


def test_a_repeat_worse_than_it_was_but_not_than_its_incident_is_recorded(db: Session) -> None:
    """Another alert already raised the incident: this one's own rise still shows on its row and the
    timeline, and the incident keeps its severity."""
    first = {"title": "Queue depth above 10k", "service": "payments", "severity": "warning"}
    other = {**first, "labels": {"queue": "refunds"}, "severity": "critical"}
    [opened] = send(db, "generic", first)
    send(db, "generic", other)
    [escalated] = send(db, "generic", {**first, "severity": "error"})
    assert (escalated.outcome, escalated.previous_severity) == ("escalated", "warning")
    incident = _incident(db, opened.incident)
    assert incident.severity == "critical"
    assert _severities(db, incident) == ["warning", "critical", "error"]
    assert incidents.active_alert_count(db_session=db, incident=incident) == 2
    last = incidents.timeline(db_session=db, incident=incident)[-1]
    assert last.kind == "alert_escalated"
    assert (last.data["from"], last.data["to"]) == ("warning", "error")
    assert "re-sent with severity error (was warning)" in last.message


def test_a_cleared_alert_is_cleared_whatever_severity_it_rose_to(db: Session) -> None:
    alert = {"title": "Queue depth above 10k", "service": "payments", "severity": "warning"}
    [opened] = send(db, "generic", alert)
    send(db, "generic", {**alert, "severity": "critical"})
    send(db, "generic", {**alert, "status": "resolved"})
    incident = _incident(db, opened.incident)
    assert incidents.active_alert_count(db_session=db, incident=incident) == 0
    window = incidents.newest_alerts(db_session=db, incident=incident, limit=10)
    assert window.cleared == {a.id for a in window.alerts if a.status == "firing"}
    last = incidents.timeline(db_session=db, incident=incident)[-1]
    assert "no alert of this incident is firing" in last.message


def test_a_worse_repeat_of_a_resolved_incidents_alert_changes_nothing(db: Session) -> None:
    """With a start time of its own the repeat is the resolved episode's: the record an engineer closed
    stays as it was closed."""
    alert = {
        "title": "Queue depth above 10k",
        "service": "payments",
        "severity": "warning",
        "starts_at": "2026-11-29T21:00:00Z",
    }
    [opened] = send(db, "generic", alert)
    incident = _incident(db, opened.incident)
    incident.status = "resolved"
    db.flush()
    before = counts(db)
    assert send(db, "generic", {**alert, "severity": "critical"})[0].outcome == "duplicate"
    assert counts(db) == before and _incident(db, opened.incident).severity == "warning"


def test_a_worse_repeat_after_its_resolved_notice_is_a_late_duplicate(db: Session) -> None:
    """The alert already cleared: a firing delivery of it arriving now (a sender's retry out of order)
    is stale, whatever severity it names."""
    send(db, "alertmanager", am(am_alert(fingerprint="a")))
    send(db, "alertmanager", am(am_alert(fingerprint="b")))
    send(db, "alertmanager", am(am_alert(fingerprint="a", status="resolved")))
    before = counts(db)
    [late] = send(db, "alertmanager", am(am_alert(fingerprint="a", severity="critical")))
    assert late.outcome == "duplicate"
    assert counts(db) == before and _incident(db, late.incident).severity == "warning"


def _routed(db: Session) -> list[tuple[str, str, int | None]]:
    rows = db.scalars(select(Delivery).order_by(Delivery.id))
    return [(row.channel, row.event, row.payload.get("version")) for row in rows]


def test_a_raised_incident_reaches_the_channels_that_wanted_only_worse_ones(db: Session) -> None:
    """A channel with a minimum severity never heard of the incident while it was milder: once an alert
    (re-sent or another) raises it to that minimum, the channel gets its briefing, once; a channel that
    had it gets nothing again. Before the first briefing nothing is owed: it is routed when stored."""
    sync_channels(
        db_session=db,
        routes=[
            ChannelRoute(name="pager", kind="webhook", label="pager", min_severity="critical"),
            ChannelRoute(name="errors", kind="webhook", label="errors", min_severity="error"),
            ChannelRoute(name="all", kind="webhook", label="all"),
        ],
    )
    alert = {"title": "Queue depth above 10k", "service": "payments", "severity": "warning"}
    [opened] = send(db, "generic", alert)
    incident = _incident(db, opened.incident)
    briefings.store_briefing(db_session=db, incident_id=incident.id, data={}, mode="evidence", memory="on")
    assert _routed(db) == [("all", "briefing_stored", 1)]
    send(db, "generic", {**alert, "labels": {"queue": "refunds"}, "severity": "error"})  # another alert
    assert _routed(db)[1:] == [("errors", "briefing_stored", 1)]
    send(db, "generic", {**alert, "severity": "critical"})  # the first, re-sent
    assert _routed(db)[2:] == [("pager", "briefing_stored", 1)]
    for repeat in ({**alert, "severity": "critical"}, {**alert, "severity": "page"}):
        send(db, "generic", repeat)
    assert len(_routed(db)) == 3

    other = {"title": "Disk almost full", "service": "db", "severity": "warning"}
    [early] = send(db, "generic", other)
    send(db, "generic", {**other, "severity": "critical"})
    assert len(_routed(db)) == 3
    briefings.store_briefing(
        db_session=db, incident_id=_incident(db, early.incident).id, data={}, mode="evidence", memory="on"
    )
    assert sorted(channel for channel, *_ in _routed(db)[3:]) == ["all", "errors", "pager"]


def test_priorities_escalate_as_the_alerting_system_ranks_them(db: Session) -> None:
    """An Alertmanager rule sending Opsgenie-style priorities: P3 re-sent as P1 is escalated and the
    incident shows P1 as sent; P1 re-sent as P3 (or as p1) changes nothing."""
    [opened] = send(db, "alertmanager", am(am_alert(fingerprint="prio", severity="P3")))
    [escalated] = send(db, "alertmanager", am(am_alert(fingerprint="prio", severity="P1")))
    assert (escalated.outcome, escalated.previous_severity, escalated.severity) == ("escalated", "P3", "P1")
    assert _incident(db, opened.incident).severity == "P1"

    generic = {"title": "Checkout p99 over 4 s", "service": "checkout", "severity": "P1"}
    [first] = send(db, "generic", generic)
    before = counts(db)
    for repeat in ("P3", "p1"):
        [same] = send(db, "generic", {**generic, "severity": repeat})
        assert same.outcome == "duplicate" and counts(db) == before
    assert _incident(db, first.incident).severity == "P1"


def test_a_p2_channel_gets_a_p1_briefing_but_not_a_p3_one(db: Session) -> None:
    """A channel's minimum read on the same ladder as the alerts: P1 is at least P2, P3 is milder."""
    sync_channels(
        db_session=db, routes=[ChannelRoute(name="p2", kind="webhook", label="p2", min_severity="P2")]
    )
    for severity in ("P1", "P3"):
        [opened] = send(db, "generic", {"title": f"{severity} alert", "service": "pay", "severity": severity})
        incident = _incident(db, opened.incident)
        briefings.store_briefing(
            db_session=db, incident_id=incident.id, data={}, mode="evidence", memory="on"
        )
    routed = db.scalars(select(Delivery).order_by(Delivery.id)).all()
    assert [(row.channel, row.incident_id) for row in routed] == [("p2", _first_incident_id(db, "P1 alert"))]


def _first_incident_id(db: Session, title: str) -> int:
    return db.scalars(select(Incident.id).where(Incident.title == title)).one()


_SERVICES = (f"svc-{n}" for n in itertools.count())
# Every spelling a sender writes, once as the ladder lists it and once as a sender may vary it.
_KNOWN = [spelling for level in LADDER for spelling in level.spellings] + ["Sev-2", "p_4", "WARN"]


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from([*_KNOWN, "sev-x"]), min_size=1, max_size=8))
def test_the_rule_for_repeats(db: Session, sent: list[str]) -> None:
    """One alert delivered again and again with any severities: a row for the first delivery and for
    each one worse than every earlier, the incident as severe as the worst, one timeline line per
    rise, counted and active once; delivering it all again stores nothing and changes nothing."""
    alert: dict[str, Any] = {"title": "Queue depth above 10k", "service": next(_SERVICES)}
    results = [send(db, "generic", {**alert, "severity": severity})[0] for severity in sent]

    rises = [sent[0]] + [s for i, s in enumerate(sent[1:], 1) if outranks(s, worst(sent[:i]))]
    assert [r.outcome for r in results] == ["stored"] + [
        "escalated" if outranks(s, worst(sent[:i])) else "duplicate" for i, s in enumerate(sent[1:], 1)
    ]
    assert [r.severity for r in results] == sent
    incident = _incident(db, results[0].incident)
    assert {r.incident for r in results} == {incident.public_id}
    assert _severities(db, incident) == rises
    assert incident.severity == rises[-1]
    assert (incident.alert_count, incidents.active_alert_count(db_session=db, incident=incident)) == (1, 1)
    events = incidents.timeline(db_session=db, incident=incident)
    assert len(events) == len(rises)  # opened, then one line per rise
    before = counts(db), incident.severity
    for severity in sent:
        assert send(db, "generic", {**alert, "severity": severity})[0].outcome == "duplicate"
    assert (counts(db), _incident(db, incident.public_id).severity) == before
    assert db.scalars(select(Alert.severity).where(Alert.service == alert["service"])).all() == rises
