"""Incident numbering, acknowledgement and listing, on SQLite and PostgreSQL."""

from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as NotYet
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.orm import Session

from incidents.alerts.normalized import NormalizedAlert
from incidents.alerts.service import ingest
from incidents.incident import service
from incidents.incident.models import Incident
from incidents.resolution import service as resolution
from incidents.timeutil import utcnow
from tests.incidents.resolution.factories import make_incident, post_mortem

START = datetime(2026, 11, 29, 21, tzinfo=UTC)


def fire(db: Session, name: str, *, service_name: str = "checkout", severity: str = "warning") -> str:
    alert = NormalizedAlert(
        source="generic",
        fingerprint=f"fp-{name}-{service_name}",
        status="firing",
        alertname=name,
        service=service_name,
        severity=severity,
        summary=f"{name} on {service_name}",
        description="",
        labels={},
        annotations={},
        starts_at=START,
        ends_at=None,
        generator_url=None,
        runbook_url=None,
        dedup_key=None,
        raw={},
    )
    [result] = ingest(db_session=db, alerts=[alert], via="test")
    assert result.incident is not None
    return result.incident


def test_numbers_skip_ids_already_taken_by_imports(db: Session) -> None:
    now = utcnow()
    db.add(
        Incident(
            public_id="INC-0002",
            title="imported",
            service="legacy",
            alertname="Old",
            severity="info",
            status="resolved",
            origin="import",
            first_seen=now,
            last_seen=now,
        )
    )
    db.flush()
    assert [fire(db, "A"), fire(db, "B"), fire(db, "C")] == ["INC-0001", "INC-0003", "INC-0004"]


def test_acknowledge_records_who_and_is_idempotent(db: Session) -> None:
    incident = service.get_by_public_id(db_session=db, public_id=fire(db, "A"))
    assert incident is not None
    assert service.acknowledge(db_session=db, incident=incident, actor="automation-bot") is True
    assert service.acknowledge(db_session=db, incident=incident, actor="someone-else") is False
    assert (incident.status, incident.acknowledged_by) == ("acknowledged", "automation-bot")
    events = service.timeline(db_session=db, incident=incident)
    assert [(e.kind, e.actor) for e in events] == [
        ("opened", "generic (test)"),
        ("acknowledged", "automation-bot"),
    ]
    incident.status = "resolved"
    with pytest.raises(service.IncidentError, match="resolved"):
        service.acknowledge(db_session=db, incident=incident, actor="late")


def test_list_filters_and_pagination(db: Session) -> None:
    ids = [fire(db, f"A{i}", service_name="checkout" if i % 2 else "search") for i in range(5)]
    critical = fire(db, "Page", service_name="payments", severity="critical")
    first = service.get_by_public_id(db_session=db, public_id=ids[0])
    assert first is not None
    service.acknowledge(db_session=db, incident=first, actor="a")
    first.first_seen = START - timedelta(days=2)  # as an imported incident: a new row, an old incident
    db.flush()

    def listed(**filters: object) -> list[str]:
        return [i.public_id for i in service.list_incidents(db_session=db, **filters).items]  # type: ignore[arg-type]

    assert listed() == [critical, *reversed(ids[1:]), ids[0]]
    assert listed(service="checkout") == [ids[3], ids[1]]
    assert listed(severity="critical") == [critical]
    assert listed(status=["acknowledged"]) == [ids[0]]
    assert listed(since=START - timedelta(days=1)) == [critical, *reversed(ids[1:])]
    page = service.list_incidents(db_session=db, limit=2, offset=2)
    assert (page.total, [i.public_id for i in page.items]) == (6, [ids[3], ids[2]])
    assert service.count_open(db_session=db) == 6


def test_an_acknowledge_that_waited_on_a_resolve_finds_it_resolved_and_changes_nothing(db: Session) -> None:
    """Two replicas at once: the resolve holds the incident's lock; the acknowledge waits for it, then
    must not put the resolved incident back to acknowledged."""
    incident = make_incident(db, status="triggered")
    db.commit()
    other = Session(db.get_bind())
    resolving = other.get(Incident, incident.id)
    assert resolving is not None
    resolution.resolve(db_session=other, incident=resolving, fields=post_mortem(), actor="ana")
    with ThreadPoolExecutor(1) as pool:
        waiting = pool.submit(_acknowledge_in_a_session_of_its_own, db, incident.id)
        with pytest.raises(NotYet):
            waiting.result(timeout=0.5)  # the acknowledge waits for the resolve's lock...
        other.commit()
        other.close()
        assert waiting.result(timeout=30) == "resolved"  # ...then finds it resolved


def _acknowledge_in_a_session_of_its_own(db: Session, incident_id: int) -> str:
    with Session(db.get_bind()) as session:
        found = session.get(Incident, incident_id)
        assert found is not None
        try:
            service.acknowledge(db_session=session, incident=found, actor="bo")
        except service.IncidentError:
            session.rollback()
        session.refresh(found)
        return found.status
